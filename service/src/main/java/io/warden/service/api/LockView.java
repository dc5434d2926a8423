package io.warden.service.api;

import java.util.List;

/**
 * A linearizable view of one lock. A free lock has mode FREE and no holders. {@code permits}: a semaphore's (of its
 * first entry), 0 for a lock.
 *
 * <p>In a watch's RESYNC a lock may be one the gateway could not read ({@code tooLargeEntries} above 0: it has that many
 * entries, too many to list in one ZooKeeper reply): then {@code mode} is null and its holders and waiters are not
 * known (the lists are empty; it is not free). {@code GET /v1/locks/{name}} answers such a lock with a 429 instead.
 */
public record LockView(String name, LockMode mode, List<Holder> holders, List<Waiter> waiters, long revision,
                       int tooLargeEntries, int permits) {
    public enum LockMode { FREE, EXCLUSIVE, SHARED, SEMAPHORE }

    public LockView {
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
    }

    public LockView(String name, LockMode mode, List<Holder> holders, List<Waiter> waiters, long revision) {
        this(name, mode, holders, waiters, revision, 0, 0);
    }

    public LockView(String name, LockMode mode, List<Holder> holders, List<Waiter> waiters, long revision,
                    int tooLargeEntries) {
        this(name, mode, holders, waiters, revision, tooLargeEntries, 0);
    }

    /** This view of a semaphore of {@code permits} (the permits of its first entry; 0 for a lock). */
    public LockView withPermits(int permits) {
        return new LockView(name, mode, holders, waiters, revision, tooLargeEntries, permits);
    }

    /** A lock with {@code entries} entries, too many for the gateway to read: its holders and waiters are not known. */
    public static LockView tooLarge(String name, int entries, long revision) {
        return new LockView(name, null, List.of(), List.of(), revision, entries);
    }

    public boolean tooLarge() {
        return tooLargeEntries > 0;
    }
}
