package io.warden.client;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The JSON bodies of docs/api.md this client sends and reads, in snake_case. Replies may carry members this client
 * does not know (e.g. {@code holders}): they are ignored, so a newer gateway does not break it.
 *
 * <p>Thread-safety: the records are immutable; {@link #JSON} is configured once and then safe from any thread.
 */
final class Wire {
    static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .defaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL, JsonInclude.Include.NON_NULL))
            .build();

    private Wire() {
    }

    record OpenSession(String clientId, Long ttlMs, Long lockDelayMs) {
    }

    record SessionOpened(String sessionId, long ttlMs, long keepaliveIntervalMs) {
    }

    record KeepaliveAck(long ttlMsRemaining) {
    }

    /** {@code permits}: a SEMAPHORE request's, null for a lock request (left out of the body). */
    /** {@code onDeadlock}: "FAIL", or null for the default (WAIT, left out of the body). */
    record Acquire(String sessionId, String name, LockMode mode, Integer permits, long waitMs, String requestId,
                   String onTimeout, String onDeadlock) {
    }

    /** {@code revision}: the zxid the answer reflects; for a GRANTED one, at or after the change that made the grant. */
    /** {@code cell}: on a gateway that serves several cells, the cell the lock is in (null from a one-cell gateway). */
    record Acquired(String status, Long token, Integer position, Long revision, String cell) {
        Acquired(String status, Long token, Integer position, Long revision) {
            this(status, token, position, revision, null);
        }

        static final String GRANTED = "GRANTED";
        static final String QUEUED = "QUEUED";
        static final String TIMED_OUT = "TIMED_OUT";
    }

    /** A multi-lock acquire: {@code names} instead of {@code name}. */
    record AcquireMany(String sessionId, java.util.List<String> names, LockMode mode, long waitMs, String requestId,
                       String onTimeout, String onDeadlock) {
    }

    /** The answer to a multi-lock acquire: a token per name when GRANTED. */
    record AcquiredMany(String status, java.util.Map<String, Long> tokens, Integer position, Long revision, String cell) {
        AcquiredMany(String status, java.util.Map<String, Long> tokens, Integer position, Long revision) {
            this(status, tokens, position, revision, null);
        }
    }

    /** The end of a whole request (every name of a multi-lock request) by its request id. */
    record ReleaseRequest(String sessionId, String requestId) {
    }

    record ReleaseToken(String sessionId, String name, long token) {
    }

    record CancelRequest(String sessionId, String name, String requestId) {
    }

    record Released(boolean released) {
    }

    /** {@code cycle}: with a 409 DEADLOCK, the deadlock its request was removed to break. */
    record Problem(String title, Integer status, String detail, String code, Cycle cycle) {
    }

    record Cycle(java.util.List<Member> members, long sinceRevision) {
    }

    record Member(String sessionId, String clientId, String requestId, String request, String name, LockMode mode,
                  String onDeadlock, java.util.List<String> waitsFor) {
    }

    /** A reply with no members this client needs (e.g. the close of a session). */
    record Ignored() {
    }
}
