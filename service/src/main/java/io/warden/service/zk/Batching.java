package io.warden.service.zk;

/**
 * How {@link Zk} groups the gateway's ZooKeeper requests (docs/design.md, "Group commit"; decisions/0006). Calls that
 * arrive while {@code inFlight} batches of their kind are in flight wait and go together in the next one; nothing waits
 * otherwise, and there is no timer.
 *
 * <p>The bounds keep every request and every reply far below ZooKeeper's packet limit ({@code jute.maxbuffer}, just
 * under 1 MiB by default): a server drops the connection of a client that sends a larger packet, and a client drops its
 * own connection on a larger reply, so a batch past it would cost the gateway its connection, not one call.
 *
 * @param on           false: every call is sent alone, as it comes
 * @param maxOps       operations in one write {@code multi}; a call with more is sent alone
 * @param maxBytes     bytes of one write {@code multi} as ZooKeeper serialises it; a call with more is sent alone
 * @param maxReads     locks read in one read-only {@code multi}
 * @param maxReadBytes estimated bytes of one read-only {@code multi}'s reply (from the sizes last seen of its locks; a
 *                     lock estimated at more than half of it is read alone). At most a quarter of the client's
 *                     {@code jute.maxbuffer}
 * @param sizeHintMs   a lock read no more than this long ago may join a read batch (its size is known); others are read
 *                     alone
 * @param inFlight     batches of each kind (writes, reads) in flight at once
 */
public record Batching(boolean on, int maxOps, int maxBytes, int maxReads, int maxReadBytes, long sizeHintMs, int inFlight) {
    /**
     * 1,000 operations (about 200 acquires) and 256 KiB a write; 64 locks and 256 KiB (estimated) a read, each lock read
     * within the last second; one batch of each kind in flight. An acquire is 5 operations and about 1.3 KB, a release 3
     * and about 0.5 KB.
     */
    public static final Batching DEFAULT = new Batching(true, 1_000, 256 * 1024, 64, 256 * 1024, 1_000, 1);

    /** Every call alone, as before group commit. */
    public static final Batching OFF = new Batching(false, 1, 1, 1, 1, 1, 1);

    public Batching {
        if (maxOps < 1 || maxBytes < 1 || maxReads < 1 || maxReadBytes < 1 || sizeHintMs < 1 || inFlight < 1) {
            throw new IllegalArgumentException("batching bounds must be positive: " + maxOps + " operations, " + maxBytes
                    + " bytes, " + maxReads + " reads, " + maxReadBytes + " read bytes, " + sizeHintMs + " ms size hints, "
                    + inFlight + " in flight");
        }
        if (maxBytes > 512 * 1024 || maxReadBytes > 512 * 1024) {
            throw new IllegalArgumentException("a batch of " + Math.max(maxBytes, maxReadBytes)
                    + " bytes comes too close to ZooKeeper's packet limit (jute.maxbuffer, 1 MiB by default); at most 524288");
        }
    }

    /**
     * These bounds, each at most a quarter of {@code limit} (the client's {@code jute.maxbuffer}, zk-max-packet-bytes):
     * a batch's reply is estimated from sizes seen up to {@link #sizeHintMs()} ago, and the locks in it may have grown
     * since (by what the cell writes in that time), so the estimate keeps three quarters of the limit in reserve.
     */
    public Batching within(PacketLimit limit) {
        int quarter = Math.max(1, limit.bytes() / 4);
        return new Batching(on, maxOps, Math.min(maxBytes, quarter), maxReads, Math.min(maxReadBytes, quarter), sizeHintMs,
                inFlight);
    }

    /** The same bounds with {@code n} batches of each kind in flight. */
    public Batching withInFlight(int n) {
        return new Batching(on, maxOps, maxBytes, maxReads, maxReadBytes, sizeHintMs, n);
    }

    /** The same bounds with size hints of reads kept {@code ms} milliseconds. */
    public Batching withSizeHintMs(long ms) {
        return new Batching(on, maxOps, maxBytes, maxReads, maxReadBytes, ms, inFlight);
    }
}
