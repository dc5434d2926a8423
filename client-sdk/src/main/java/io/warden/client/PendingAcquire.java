package io.warden.client;

/**
 * An acquire under way in a {@link Session} ({@link AcquireCall} for one name, {@link MultiAcquireCall} for several):
 * the session tells it when it ends, so the caller waiting for it fails at once instead of at its deadline.
 */
interface PendingAcquire {
    /** The session ended (lost or closed): nothing is queued any more, nothing to clean up. */
    void sessionEnded(SessionLostException failure);
}
