package io.warden.service.zk;

/**
 * The largest ZooKeeper reply this gateway's client accepts ({@code jute.maxbuffer}, the setting
 * {@code zk-max-packet-bytes}), and what that means for listing a lock's queue.
 *
 * <p>ZooKeeper's client refuses a reply over its limit and treats it as a lost connection ("Packet len N is out of
 * range", logged by ZooKeeper's client only; callers see CONNECTIONLOSS), and the ZooKeeper server checks only the
 * requests it reads, never the replies it sends. So a {@code getChildren} of a lock with too many entries costs the
 * gateway its connection, and after reconnecting the next read of that lock costs it again. A queue node costs
 * {@link #BYTES_PER_ENTRY} in a listing: the gateway lists a lock only when its {@code Stat.numChildren} says the
 * listing fits in half the limit ({@link #listable()}); the other half is the margin for what the count does not say
 * (longer node names than Curator's, a lock that grew between the count and the listing).
 *
 * <p>Immutable.
 *
 * @param bytes the client's limit, at least 1
 */
public record PacketLimit(int bytes) {
    /** ZooKeeper's default {@code jute.maxbuffer} (0xfffff), what every client has unless told otherwise. */
    public static final int ZOOKEEPER_DEFAULT = 0xfffff;
    /**
     * What one queue node costs in a {@code getChildren} reply: a 4-byte length and a 58-character name,
     * {@code _c_<uuid>-__READ__<10 digits>} (Warden's and Curator's {@code InterProcessReadWriteLock}'s naming).
     */
    public static final int BYTES_PER_ENTRY = 62;
    /** The reply's header, the parent's stat and the list's length, with room to spare. */
    public static final int REPLY_OVERHEAD = 1024;

    public PacketLimit {
        if (bytes < 1) {
            throw new IllegalArgumentException("packet limit must be positive, got " + bytes);
        }
    }

    /** The most entries a lock may have for this gateway to list it: those whose listing fits in half the limit. */
    public int listable() {
        return Math.max(0, (bytes / 2 - REPLY_OVERHEAD) / BYTES_PER_ENTRY);
    }

    /** The bytes of a listing of {@code entries} queue nodes of Curator's naming. */
    public static long listingBytes(long entries) {
        return REPLY_OVERHEAD + entries * BYTES_PER_ENTRY;
    }
}
