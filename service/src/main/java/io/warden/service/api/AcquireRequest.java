package io.warden.service.api;

import java.util.Objects;

/**
 * One acquire call. {@code requestId} is the idempotency key within the session: the same id yields
 * the same queue entry, on any gateway. {@code waitMs} 0 is a try-lock. {@code requestIdGiven}: the caller named the
 * request (false when the gateway picked its id, which no caller can repeat knowingly), so a repeat of a refused try
 * must find it refused.
 */
public record AcquireRequest(String sessionId, LockName name, Mode mode, long waitMs, String requestId, OnTimeout onTimeout,
                             boolean requestIdGiven) {
    public static final long MAX_WAIT_MS = 300_000;

    /** A request whose id the caller gave. */
    public AcquireRequest(String sessionId, LockName name, Mode mode, long waitMs, String requestId, OnTimeout onTimeout) {
        this(sessionId, name, mode, waitMs, requestId, onTimeout, true);
    }

    /** A try-lock that, when it cannot be granted, is answered TIMED_OUT and removed (contract §3). */
    public boolean isTry() {
        return waitMs == 0 && onTimeout == OnTimeout.CANCEL;
    }

    public AcquireRequest {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(onTimeout, "onTimeout");
        if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
            throw WardenException.invalid("wait_ms", "must be between 0 and " + MAX_WAIT_MS + ", got " + waitMs);
        }
    }
}
