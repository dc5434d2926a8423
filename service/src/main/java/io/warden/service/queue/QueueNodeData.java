package io.warden.service.queue;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warden.service.api.Mode;
import io.warden.service.api.OnDeadlock;

/**
 * The data of a Warden queue node: who asked, for what. Written at creation; changed at most once after, by a revoke
 * ({@code POST /v1/revoke}), which writes the same fields with {@link #revoke} set, so that the request to let go is
 * kept with the hold it names (a gateway that fails over reads it there). {@code principal} is the owner of the session
 * (null in open mode), so listings can show other principals' holders by principal without a read of each session.
 * The fields that say who asked for what never change: a reader that cached them stays right. {@code onDeadlock} is
 * {@code FAIL} for a request that may be failed as a deadlock's victim, absent otherwise (WAIT): a watch mirror rebuilt
 * from a full read learns it here (docs/decisions/0013-deadlock-detection.md). {@code multi} is true on the entries of
 * a multi-lock request (docs/decisions/0012), absent otherwise: a release of one such entry by its token removes that
 * entry only, and keeps the request's record live for its other names.
 */
public record QueueNodeData(String sessionId, String clientId, String requestId, Mode mode,
                            @JsonInclude(JsonInclude.Include.NON_NULL) String principal,
                            @JsonInclude(JsonInclude.Include.NON_NULL) RevokeNote revoke,
                            @JsonInclude(JsonInclude.Include.NON_NULL) OnDeadlock onDeadlock,
                            @JsonInclude(JsonInclude.Include.NON_NULL) Boolean multi) {
    public QueueNodeData(String sessionId, String clientId, String requestId, Mode mode, String principal) {
        this(sessionId, clientId, requestId, mode, principal, null, null, null);
    }

    public QueueNodeData(String sessionId, String clientId, String requestId, Mode mode, String principal,
                         RevokeNote revoke) {
        this(sessionId, clientId, requestId, mode, principal, revoke, null, null);
    }

    /** An entry of a multi-lock request. */
    public static QueueNodeData ofMulti(String sessionId, String clientId, String requestId, Mode mode, String principal) {
        return new QueueNodeData(sessionId, clientId, requestId, mode, principal, null, null, true);
    }

    /** Whether this entry is one of a multi-lock request's. */
    public boolean multiLock() {
        return Boolean.TRUE.equals(multi);
    }

    /** The same request, asked to let go. */
    public QueueNodeData withRevoke(RevokeNote note) {
        return new QueueNodeData(sessionId, clientId, requestId, mode, principal, note, onDeadlock, multi);
    }

    /** The same request, that may be failed as a deadlock's victim ({@code FAIL}); {@code WAIT} is written as absent. */
    public QueueNodeData withOnDeadlock(OnDeadlock value) {
        return new QueueNodeData(sessionId, clientId, requestId, mode, principal, revoke,
                value == OnDeadlock.FAIL ? OnDeadlock.FAIL : null, multi);
    }

    /** Whether the request may be failed as a deadlock's victim. */
    public boolean failsOnDeadlock() {
        return onDeadlock == OnDeadlock.FAIL;
    }

    /**
     * A request to the holder to let go: within {@code graceMs} of the request it is force-released. {@code by} is the
     * principal that asked ({@code "open"} in open mode), {@code gateway} the gateway that took the request (it runs the
     * grace timer while it lives).
     */
    public record RevokeNote(long graceMs, String reason, String by, String gateway) {
    }
}
