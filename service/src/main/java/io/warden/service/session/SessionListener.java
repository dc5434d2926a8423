package io.warden.service.session;

/**
 * What the session manager tells about the sessions of this gateway, for whoever keeps state by session (the lock
 * engine: its per-session hints and quotas, and its held calls, which a session's end answers). A session knows no
 * locks; its opening and its end are told here.
 *
 * <p>Called on ZooKeeper's event thread or on the gateway's timer thread; implementations must not block.
 */
public interface SessionListener {
    /** Nobody listens. */
    SessionListener NONE = new SessionListener() {
        @Override
        public void sessionOpened(String sessionId, String clientId, String principal, String quotaOwner) {
        }

        @Override
        public void sessionEnded(String sessionId) {
        }
    };

    /** A session was opened here: {@code quotaOwner} is what its requests count against. */
    void sessionOpened(String sessionId, String clientId, String principal, String quotaOwner);

    /** The session ended: closed, or expired, here. */
    void sessionEnded(String sessionId);
}
