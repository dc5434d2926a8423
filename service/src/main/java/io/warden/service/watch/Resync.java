package io.warden.service.watch;

import io.warden.service.api.LockView;

import java.util.List;

/**
 * The current state of the locks a watch covers, sent instead of events a subscriber can no longer get (its
 * {@code since_revision} is older than the kept history, or this gateway may have missed ZooKeeper events while it
 * was disconnected). It is exact as of {@code revision}: every change up to that zxid is in it, none after; the events
 * that follow all have larger revisions.
 *
 * @param locks for a watch by name, exactly that lock (FREE when nobody holds or waits); for a prefix, every lock
 *              under it that has holders or waiters, sorted by name. Each view's own {@code revision} is this one.
 */
public record Resync(long revision, List<LockView> locks) {
    public Resync {
        locks = List.copyOf(locks);
    }
}
