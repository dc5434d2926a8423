package io.warden.client;

import java.util.List;

/**
 * The state of one lock in a {@link LockEvent.Type#RESYNC} event, as {@code GET /v1/locks/{name}} shows it.
 *
 * <p>Thread-safety: immutable.
 *
 * @param mode {@code FREE}, {@code EXCLUSIVE} or {@code SHARED}
 */
public record LockState(String name, String mode, List<Holder> holders, List<Waiter> waiters) {
    public LockState {
        holders = holders == null ? List.of() : List.copyOf(holders);
        waiters = waiters == null ? List.of() : List.copyOf(waiters);
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
