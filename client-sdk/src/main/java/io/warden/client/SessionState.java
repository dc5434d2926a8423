package io.warden.client;

/**
 * The state of a {@link WardenClient}'s session, as this client can know it.
 *
 * <p>Curator's rule applies to every {@link Hold}: after {@link #SUSPENDED} you cannot be sure you hold the lock;
 * after {@link #LOST} you do not.
 *
 * <p>Thread-safety: an enum; immutable.
 */
public enum SessionState {
    /**
     * The last acknowledged keepalive was recent enough: the local deadline (send time of that keepalive plus the
     * TTL, minus a drift margin) has not passed, so the service cannot have expired the session yet.
     */
    CONNECTED,
    /**
     * The local deadline has passed without an acknowledged keepalive: the service may already have expired the
     * session and handed its locks to others. Stop writing. The client keeps trying every gateway; if one of them
     * acknowledges a keepalive the session never expired, its holds are intact, and the state is CONNECTED again.
     */
    SUSPENDED,
    /**
     * A gateway said the session is gone (expired or closed by someone else): every hold of this client is lost
     * and no request of it is queued. Terminal: make a new {@link WardenClient} to go on.
     */
    LOST,
    /** {@link WardenClient#close()} closed the session: its holds were released. Terminal. */
    CLOSED
}
