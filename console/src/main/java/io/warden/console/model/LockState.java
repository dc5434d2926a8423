package io.warden.console.model;

import java.util.List;
import java.util.Objects;

/** A lock and its whole queue in order: holders first, then waiters. */
public record LockState(String name, List<QueuedRequest> queue) {
    public LockState {
        Objects.requireNonNull(name, "name");
        queue = List.copyOf(queue);
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
