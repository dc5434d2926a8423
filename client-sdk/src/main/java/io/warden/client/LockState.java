package io.warden.client;

import java.util.List;

/**
 * The state of one lock in a {@link LockEvent.Type#RESYNC} event, as {@code GET /v1/locks/{name}} shows it.
 *
 * <p>Thread-safety: immutable.
 *
 * @param mode     {@code FREE}, {@code EXCLUSIVE} or {@code SHARED}; null when {@code tooLarge}
 * @param tooLarge true for a lock the gateway cannot follow: it has more entries ({@code entries}) than the gateway reads
 *                 in one ZooKeeper reply (only other ZooKeeper clients' nodes can make it so). Its holders and waiters
 *                 are then not known (the lists are empty; it is not free); once it can be followed again, the watch
 *                 gets another RESYNC. False from gateways that do not say
 * @param entries  with {@code tooLarge}, the lock's entries; else 0
 */
public record LockState(String name, String mode, List<Holder> holders, List<Waiter> waiters, boolean tooLarge,
                        int entries) {
    public LockState {
        holders = holders == null ? List.of() : List.copyOf(holders);
        waiters = waiters == null ? List.of() : List.copyOf(waiters);
    }

    /** A lock whose holders and waiters are known. */
    public LockState(String name, String mode, List<Holder> holders, List<Waiter> waiters) {
        this(name, mode, holders, waiters, false, 0);
    }

    /**
     * A current holder; {@code sessionId} and {@code clientId} are null for a holder that is not a Warden session.
     * Immutable.
     */
    public record Holder(String sessionId, String clientId, LockMode mode, long token) {
    }

    /** A queued request, {@code position} 1 being next. Immutable. */
    public record Waiter(String sessionId, String clientId, LockMode mode, String requestId, int position) {
    }
}
