package io.warden.service.api;

import java.util.List;

/** A linearizable view of one lock. A free lock has mode FREE and no holders. */
public record LockView(String name, LockMode mode, List<Holder> holders, List<Waiter> waiters, long revision) {
    public enum LockMode { FREE, EXCLUSIVE, SHARED }

    public LockView {
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
    }
}
