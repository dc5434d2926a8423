package io.warden.client.fencing;

import io.warden.client.LockOwnershipLostException;

/**
 * A fenced write was refused: the resource has already accepted a write with a token at least as large as this
 * one, so the lock passed to another holder after this token was granted. Nothing was written. Like every
 * {@link LockOwnershipLostException}, no retry can repair it: the caller must acquire the lock again and re-read the
 * resource before deciding what to write.
 *
 * <p>Thread-safety: immutable.
 */
public class StaleTokenException extends LockOwnershipLostException {
    private static final long serialVersionUID = 1L;

    public StaleTokenException(String lockName, long token) {
        super(lockName, token, "the resource refused the write: it has seen a newer token");
    }
}
