package io.warden.service.watch;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one bound on what all watch streams of a gateway may hold queued. A bound per stream is not enough: with 1 MiB
 * per stream, 10,000 streams allowed and RESYNC frames outside even that, 700 stalled watches exhausted a 512 MiB heap.
 * So every queued byte is counted here — RESYNC frames, comments, and each transaction's shared frames once however
 * many streams have them queued ({@link EventBatch}) — against a limit sized from the heap (an eighth of
 * {@link Runtime#maxMemory()} unless configured: {@code watch-buffer-bytes}).
 *
 * <p>When a stream's frame would take the total past the limit, every other stream holding more than its share (the
 * limit divided by the open streams) is cut, and if that does not make room the stream itself is cut. A cut client
 * resumes from its last id (at this gateway or another), so memory is traded for a reconnect, never for a gap.
 *
 * <p>Concurrency: {@code used} and the batches' reference counts are guarded by this object's monitor, held only inside
 * {@link #tryTake} and {@link #give} (no other lock is taken there). {@link #take} cuts streams outside it. Streams
 * register and unregister from any thread ({@code streams} is a concurrent set, bounded by the open watches).
 */
public final class WatchMemory {
    /** A stream whose queue this budget counts. */
    public interface Account {
        /** What the stream has queued, counting shared frames in full (what it keeps from being freed). */
        long pinnedBytes();

        /** Cuts the stream now (its client resumes), giving back everything it had queued. */
        void cutForMemory();
    }

    /** The smallest limit, whatever the heap. */
    public static final long MIN_LIMIT = 1 << 20;

    private final long limit;
    private final Set<Account> streams = ConcurrentHashMap.newKeySet();
    private final AtomicLong cuts = new AtomicLong();
    private long used;
    private long peak;

    public WatchMemory(long limitBytes) {
        this.limit = Math.max(MIN_LIMIT, limitBytes);
    }

    /** {@code configured} bytes, or when 0 an eighth of the heap this JVM may use. */
    public static WatchMemory of(long configured) {
        return new WatchMemory(configured > 0 ? configured : Runtime.getRuntime().maxMemory() / 8);
    }

    public long limit() {
        return limit;
    }

    public synchronized long used() {
        return used;
    }

    /** The most ever used at once. */
    public synchronized long peak() {
        return peak;
    }

    /** Streams cut to stay within the limit (metrics, tests). */
    public long cuts() {
        return cuts.get();
    }

    public void register(Account a) {
        streams.add(a);
    }

    public void unregister(Account a) {
        streams.remove(a);
    }

    /**
     * Counts {@code privateBytes} and {@code batch}'s frames (once for all streams; may be null) as queued by
     * {@code a}. False when they do not fit even after cutting the streams over their share: then {@code a} must cut
     * itself. Never blocks; called on the hub's thread.
     */
    public boolean take(Account a, long privateBytes, EventBatch batch) {
        if (tryTake(privateBytes, batch)) {
            return true;
        }
        long share = limit / Math.max(1, streams.size());
        for (Account other : streams) {
            if (other != a && other.pinnedBytes() > share) {
                cuts.incrementAndGet();
                other.cutForMemory();
            }
        }
        if (tryTake(privateBytes, batch)) {
            return true;
        }
        cuts.incrementAndGet();
        return false;
    }

    /** Gives back what {@link #take} counted, once the stream wrote it or dropped it. */
    public synchronized void give(long privateBytes, EventBatch batch) {
        used -= privateBytes;
        if (batch != null && batch.release()) {
            used -= batch.charged();
            batch.charge(0);
        }
    }

    private synchronized boolean tryTake(long privateBytes, EventBatch batch) {
        // The batch's frames are counted once, when a first stream queues it; a variant made later (the redacted frames
        // of a stream that may not see session ids) is counted when the stream that made it queues it.
        long shared = batch == null ? 0 : batch.frameBytes() - batch.charged();
        if (used + privateBytes + shared > limit) {
            return false;
        }
        used += privateBytes;
        if (batch != null) {
            batch.retain();
            used += shared;
            batch.charge(batch.frameBytes());
        }
        peak = Math.max(peak, used);
        return true;
    }
}
