package io.warden.console.model;

import java.util.List;
import java.util.Objects;

/**
 * A lock and its whole queue in order: holders first, then waiters.
 *
 * @param tooLargeEntries 0 for a lock the gateway read; otherwise the lock's entries, too many for the gateway to list
 *                        them in one ZooKeeper reply: its {@code queue} is then empty (not known), not free
 */
public record LockState(String name, List<QueuedRequest> queue, int tooLargeEntries) {
    public LockState {
        Objects.requireNonNull(name, "name");
        queue = List.copyOf(queue);
        if (tooLargeEntries < 0) {
            throw new IllegalArgumentException("tooLargeEntries must not be negative, got " + tooLargeEntries);
        }
    }

    /** A lock the gateway read whole. */
    public LockState(String name, List<QueuedRequest> queue) {
        this(name, queue, 0);
    }

    /** A lock with {@code entries} entries, too many for the gateway to read; its queue is not known. */
    public static LockState tooLarge(String name, int entries) {
        return new LockState(name, List.of(), entries);
    }

    /** Whether the gateway could not read the queue (it has {@link #tooLargeEntries()} entries). */
    public boolean tooLarge() {
        return tooLargeEntries > 0;
    }

    /** The namespace: the first segment of the name. */
    public String namespace() {
        int slash = name.indexOf('/');
        return slash < 0 ? name : name.substring(0, slash);
    }

    public List<QueuedRequest> holders() {
        return queue.stream().filter(QueuedRequest::holds).toList();
    }

    public List<QueuedRequest> waiters() {
        return queue.stream().filter(r -> !r.holds()).toList();
    }
}
