package io.warden.service.cell;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The highest point of the cell this gateway has seen, in memory: the highest zxid seen in the current history
 * ({@link #raw}, moved on ZooKeeper's event thread by every reply and notification, without a lock) and, folded in from
 * time to time, the highest token that zxid stands for ({@link #token}: zxid plus the floor in force for it).
 *
 * <p>The comparison that matters is in tokens: a cell whose next token ({@code zxid + current floor}) is not above
 * {@link #token} would hand out a token again. Raw zxids are folded into {@link #token} only with the floor of the same
 * history ({@link CellGuard} folds while serving and at a disconnection, before any reply of the next connection), and
 * {@link #restart} drops a raw zxid of a history the cell no longer has, so that a floor raised later is never added to
 * a zxid it does not apply to.
 *
 * <p>Concurrency: {@code raw} is an atomic; {@code token} is guarded by {@code this}.
 */
final class HighWater {
    private final AtomicLong raw = new AtomicLong();
    private long token;

    /** A zxid this gateway saw (a reply's stat, a notification, a write). */
    void observe(long zxid) {
        if (zxid > 0 && zxid > raw.get()) {
            raw.accumulateAndGet(zxid, Math::max);
        }
    }

    long raw() {
        return raw.get();
    }

    /** Folds the highest zxid seen into the token mark, with the floor history it was seen under. */
    synchronized void fold(FloorHistory floors) {
        long r = raw.get();
        if (r > 0) {
            token = Math.max(token, floors.token(r));
        }
    }

    /** The highest token this gateway has seen or handed out (as of the last fold), or that its file remembered. */
    synchronized long token() {
        return token;
    }

    /** A mark remembered from an earlier run (the file). */
    synchronized void remember(long t) {
        token = Math.max(token, t);
    }

    /** The cell is behind the zxids seen so far: a new history starts at {@code zxid}. */
    synchronized void restart(long zxid) {
        raw.set(zxid);
    }
}
