package io.warden.service.api;

import java.util.Objects;

/**
 * One acquire call. {@code requestId} is the idempotency key within the session: the same id yields
 * the same queue entry, on any gateway. {@code waitMs} 0 is a try-lock. {@code requestIdGiven}: the caller named the
 * request (false when the gateway picked its id, which no caller can repeat knowingly), so a repeat of a refused try
 * must find it refused. {@code permits}: a SEMAPHORE request's ({@link #MIN_PERMITS} to {@link #MAX_PERMITS}), 0 for a
 * lock request. {@code onDeadlock}: whether the request may be failed as the victim of a deadlock (default WAIT).
 */
public record AcquireRequest(String sessionId, LockName name, Mode mode, long waitMs, String requestId, OnTimeout onTimeout,
                             boolean requestIdGiven, int permits, OnDeadlock onDeadlock) {
    public static final long MAX_WAIT_MS = 300_000;
    public static final int MIN_PERMITS = 2;
    public static final int MAX_PERMITS = 1024;

    /** A request that waits out a deadlock (on_deadlock WAIT). */
    public AcquireRequest(String sessionId, LockName name, Mode mode, long waitMs, String requestId, OnTimeout onTimeout,
                          boolean requestIdGiven, int permits) {
        this(sessionId, name, mode, waitMs, requestId, onTimeout, requestIdGiven, permits, OnDeadlock.WAIT);
    }

    /** The same request with {@code onDeadlock}. */
    public AcquireRequest withOnDeadlock(OnDeadlock onDeadlock) {
        return new AcquireRequest(sessionId, name, mode, waitMs, requestId, onTimeout, requestIdGiven, permits, onDeadlock);
    }

    /** A lock request (EXCLUSIVE or SHARED). */
    public AcquireRequest(String sessionId, LockName name, Mode mode, long waitMs, String requestId, OnTimeout onTimeout,
                          boolean requestIdGiven) {
        this(sessionId, name, mode, waitMs, requestId, onTimeout, requestIdGiven, 0);
    }

    /** A lock request whose id the caller gave. */
    public AcquireRequest(String sessionId, LockName name, Mode mode, long waitMs, String requestId, OnTimeout onTimeout) {
        this(sessionId, name, mode, waitMs, requestId, onTimeout, true, 0);
    }

    /** A try-lock that, when it cannot be granted, is answered TIMED_OUT and removed (docs/api.md). */
    public boolean isTry() {
        return waitMs == 0 && onTimeout == OnTimeout.CANCEL;
    }

    public AcquireRequest {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(onTimeout, "onTimeout");
        Objects.requireNonNull(onDeadlock, "onDeadlock");
        if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
            throw WardenException.invalid("wait_ms", "must be between 0 and " + MAX_WAIT_MS + ", got " + waitMs);
        }
        if (mode == Mode.SEMAPHORE && (permits < MIN_PERMITS || permits > MAX_PERMITS)) {
            throw WardenException.invalid("permits", "a SEMAPHORE request needs permits between " + MIN_PERMITS + " and "
                    + MAX_PERMITS + ", got " + permits);
        }
        if (mode != Mode.SEMAPHORE && permits != 0) {
            throw WardenException.invalid("permits", "only a SEMAPHORE request takes permits; this one is " + mode);
        }
    }
}
