package io.warden.service.api;

/**
 * A queued request; {@code position} counts the entries ahead of it, holders included. {@code principal} owns the
 * session (null in open mode or where the reader does not know it).
 */
public record Waiter(String sessionId, String clientId, Mode mode, String requestId, int position, String principal) {
    public Waiter(String sessionId, String clientId, Mode mode, String requestId, int position) {
        this(sessionId, clientId, mode, requestId, position, null);
    }

    /** This waiter as a caller who may not see its session id (nor its request id, a handle too) sees it. */
    public Waiter withoutSessionId() {
        return new Waiter(null, clientId, mode, null, position, principal);
    }
}
