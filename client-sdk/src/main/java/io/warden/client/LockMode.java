package io.warden.client;

/**
 * How a {@link FencedLock} is held (docs/api.md, {@code mode}).
 *
 * <p>Thread-safety: an enum; immutable.
 */
public enum LockMode {
    /** One holder at a time; every EXCLUSIVE grant of a name has a larger token than all grants before it. */
    EXCLUSIVE,
    /** Any number of SHARED holders together, never together with an EXCLUSIVE holder. */
    SHARED,
    /**
     * One of at most a semaphore's permits holders at once ({@link WardenClient#semaphore}), granted in queue order; each
     * grant has a token of its own.
     */
    SEMAPHORE
}
