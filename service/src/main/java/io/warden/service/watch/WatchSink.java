package io.warden.service.watch;

/**
 * Where a watch's output goes (the HTTP layer's Server-Sent Events stream, the console's event log). Every method is
 * called on the hub's one thread and must not block: a sink queues what it is given and writes it elsewhere.
 *
 * <p>A sink bounds what it queues. When it cannot take more (a slow consumer) it answers false, closes itself, and the
 * hub drops it; the client then resumes with its last revision.
 */
public interface WatchSink {
    /**
     * The events of one ZooKeeper transaction that the watch covers, in order: {@code batch.events()} at the indexes
     * {@code selected} (ascending), or all of them when {@code selected} is null. Never part of a transaction: a
     * transaction's events for one watch always come in one call. False when the sink is full or closed.
     */
    boolean events(EventBatch batch, int[] selected);

    /**
     * Like {@link #events}, for a transaction replayed from the history to a resuming watch. The history keeps these
     * events anyway, so a sink need not count them against its own queue's bound (a resume may replay up to the whole
     * history); it still answers false when it is closed.
     */
    default boolean replay(EventBatch batch, int[] selected) {
        return events(batch, selected);
    }

    /** The current state instead of events that are gone; false when the sink is full or closed. */
    boolean resync(Resync resync);

    /** Nothing happened for a while: a comment that keeps proxies from closing an idle stream. */
    void heartbeat();

    /** The hub ends the watch (gateway stopping); the sink closes its stream. */
    void close(String reason);
}
