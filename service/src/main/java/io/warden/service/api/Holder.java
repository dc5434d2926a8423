package io.warden.service.api;

/**
 * A current holder of a lock. {@code sessionId} is null for a holder that is not a Warden session
 * (a plain Curator {@code InterProcessReadWriteLock} client on the same path); {@code expired} is true
 * for a hold kept only by its expired session's lock-delay. {@code principal} owns the session (null in open mode, for
 * a plain Curator holder, or where the reader does not know it, as the watch mirror does not).
 */
public record Holder(String sessionId, String clientId, Mode mode, long token, boolean expired, String principal) {
    public Holder(String sessionId, String clientId, Mode mode, long token, boolean expired) {
        this(sessionId, clientId, mode, token, expired, null);
    }

    /** This holder as a caller who may not see its session id sees it (docs/api.md, authorization). */
    public Holder withoutSessionId() {
        return new Holder(null, clientId, mode, token, expired, principal);
    }
}
