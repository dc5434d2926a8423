package io.warden.client;

import java.time.Duration;

/**
 * {@link FencedLock#acquire(Duration)} did not get the lock within its wait. The request was removed from the
 * lock's queue (by the gateway or the client's cancel; in direct mode by Curator), so the caller holds nothing and
 * waits for nothing.
 *
 * <p>Thread-safety: immutable.
 */
public class AcquireTimeoutException extends WardenClientException {
    private static final long serialVersionUID = 1L;

    private final String lockName;

    public AcquireTimeoutException(String lockName, Duration wait) {
        super("lock '" + lockName + "' was not acquired within " + wait.toMillis() + " ms");
        this.lockName = lockName;
    }

    public String lockName() {
        return lockName;
    }
}
