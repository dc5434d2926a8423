package io.warden.service.api;

import java.util.Objects;

/**
 * One acquire call. {@code requestId} is the idempotency key within the session: the same id yields
 * the same queue entry, on any gateway. {@code waitMs} 0 is a try-lock.
 */
public record AcquireRequest(String sessionId, LockName name, Mode mode, long waitMs, String requestId, OnTimeout onTimeout) {
    public static final long MAX_WAIT_MS = 300_000;

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
