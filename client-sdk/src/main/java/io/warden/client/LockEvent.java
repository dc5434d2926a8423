package io.warden.client;

import java.util.List;
import java.util.Objects;

/**
 * One change of a watched lock, as the gateways derive it from ZooKeeper (docs/api.md, {@code GET /v1/watch}).
 *
 * <p>{@code revision} is the ZooKeeper zxid of the change: events come in revision order, and several may share one
 * revision (a handoff is {@code RELEASED} and {@code GRANTED} at one revision; an acquire that holds at once is
 * {@code QUEUED} and {@code GRANTED} at the revision of its queue node). {@code sessionId} is null for a holder that is
 * not a Warden session (a direct Curator client) or that was gone before the gateway could read it, and for another
 * principal's session when the cell authenticates (listings show those by client id only). {@code clientId} is the
 * client id of the request's session; null for a holder that is not a Warden session, and from gateways that do not
 * send it. {@code token} is
 * the fencing token of the request: its queue node's czxid plus the cell's token floor (0 unless an operator raised it,
 * so usually the revision of the event that queued it).
 *
 * <p>A {@link Type#RESYNC} event stands for history that is gone (the watch resumed from a revision the gateway no
 * longer keeps, or could not be resumed at all): {@code locks} is the exact state of the watched locks as of its
 * revision, every change up to it included, and the events after it follow on. {@code name}, {@code sessionId},
 * {@code mode} and {@code token} are null for it; {@code locks} is empty for every other type.
 *
 * <p>Thread-safety: immutable.
 */
public record LockEvent(long revision, Type type, String name, String sessionId, String clientId, LockMode mode,
                        Long token, List<LockState> locks) {
    /** What happened. An enum: immutable. */
    public enum Type {
        /** A request was queued (followed at once by GRANTED at the same revision when it holds straight away). */
        QUEUED,
        /** A request now holds the lock. */
        GRANTED,
        /** A holder released it (or its session was closed). */
        RELEASED,
        /** A waiting request was cancelled or timed out (or its session was closed). */
        CANCELLED,
        /** A holder's or waiter's session expired. */
        EXPIRED,
        /**
         * The holder is asked to let go (an admin's revoke): it is force-released if it still holds after the revoke's
         * grace. Nothing changed yet.
         */
        REVOKE_REQUESTED,
        /** The state of the watched locks, in place of history that is gone; see {@link LockEvent#locks()}. */
        RESYNC
    }

    public LockEvent {
        Objects.requireNonNull(type, "type");
        locks = locks == null ? List.of() : List.copyOf(locks);
    }

    /** An event without a client id (as from gateways that do not send one). */
    public LockEvent(long revision, Type type, String name, String sessionId, LockMode mode, Long token,
                     List<LockState> locks) {
        this(revision, type, name, sessionId, null, mode, token, locks);
    }
}
