package io.warden.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small client of the Warden HTTP API (contract §3) that fails over between gateways.
 *
 * <p>A call goes to the current gateway; on a connection error, a timeout or a 503 it moves to the next gateway
 * and retries the same request body (so an acquire keeps its {@code request_id}, and contract §2.7 makes the retry
 * idempotent) until its retry budget runs out. Other statuses are answers, not failures. Every loop is bounded by
 * the budget in time.
 *
 * <p>Concurrency: thread-safe; the current gateway is an atomic index shared by the threads of one client.
 */
public final class WardenClient {
    public static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    private final List<URI> gateways;
    private final Duration retryBudget;
    private final AtomicInteger current;
    private final AtomicLong failovers = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();

    /** {@code gateways} in order of preference starting at {@code preferred}. */
    public WardenClient(HttpClient http, List<URI> gateways, int preferred, Duration retryBudget) {
        if (gateways.isEmpty()) {
            throw new IllegalArgumentException("no gateways");
        }
        this.http = http;
        this.gateways = List.copyOf(gateways);
        this.retryBudget = retryBudget;
        this.current = new AtomicInteger(Math.floorMod(preferred, gateways.size()));
    }

    public static HttpClient newHttpClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
    }

    public record Session(String id, long ttlMs, long keepaliveIntervalMs) {
    }

    /** The reply of an acquire; {@code attempts} counts the HTTP calls it took (more than one after a failover). */
    public record Acquired(String status, Long token, Integer position, int attempts) {
        public boolean granted() {
            return "GRANTED".equals(status);
        }
    }

    /**
     * The reply of a release or cancel. {@code ambiguous}: an earlier attempt may have reached a gateway (it timed out,
     * the connection broke, or it answered 503), so {@code released:false} may only mean that attempt did the work.
     */
    public record Released(boolean released, int attempts, boolean ambiguous) {
    }

    /**
     * A non-retryable HTTP answer that is not what the call expects. {@code ambiguous}: an earlier attempt of the same
     * call may have reached a gateway (see {@link Released}), so this answer does not say that the call did nothing: a
     * release whose reply was lost, sent again after its session expired, answers 404 though it released.
     */
    public static class ProblemException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final int status;
        private final String code;
        private final boolean ambiguous;
        private final String body;

        public ProblemException(int status, String code, String body, boolean ambiguous) {
            super("HTTP " + status + " " + code + ": " + body + (ambiguous ? " (after an attempt that may have done it)" : ""));
            this.status = status;
            this.code = code;
            this.ambiguous = ambiguous;
            this.body = body;
        }

        /** The problem document as sent (a 409 DEADLOCK's carries the cycle). */
        public JsonNode document() {
            return parse(body);
        }

        public int status() {
            return status;
        }

        public String code() {
            return code;
        }

        public boolean ambiguous() {
            return ambiguous;
        }
    }

    /** 404 {@code SESSION_NOT_FOUND}: the session expired or was closed. */
    public static final class SessionNotFoundException extends ProblemException {
        private static final long serialVersionUID = 1L;

        public SessionNotFoundException(String body, boolean ambiguous) {
            super(404, "SESSION_NOT_FOUND", body, ambiguous);
        }
    }

    /** No gateway gave an answer within the retry budget. */
    public static final class UnavailableException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public UnavailableException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private record Reply(int status, JsonNode body, String raw, int attempts, boolean ambiguous) {
    }

    public Session openSession(String clientId, long ttlMs) {
        ObjectNode body = JSON.createObjectNode().put("client_id", clientId).put("ttl_ms", ttlMs);
        Reply reply = expect(call("POST", "/v1/sessions", body, Duration.ofSeconds(5)), 201, 200);
        return new Session(reply.body.path("session_id").asText(), reply.body.path("ttl_ms").asLong(ttlMs),
                reply.body.path("keepalive_interval_ms").asLong(ttlMs / 3));
    }

    /** Returns {@code ttl_ms_remaining}; throws {@link SessionNotFoundException} once the session is gone. */
    public long keepalive(String sessionId) {
        Reply reply = expect(call("POST", "/v1/sessions/" + sessionId + "/keepalive", null, Duration.ofSeconds(3)), 200);
        return reply.body.path("ttl_ms_remaining").asLong();
    }

    public Acquired acquire(String sessionId, String name, String mode, long waitMs, String requestId, String onTimeout) {
        return acquire(sessionId, name, mode, 0, waitMs, requestId, onTimeout);
    }

    /** As above; {@code permits} for a SEMAPHORE request (0: none sent). */
    public Acquired acquire(String sessionId, String name, String mode, int permits, long waitMs, String requestId,
                            String onTimeout) {
        return acquire(sessionId, name, mode, permits, waitMs, requestId, onTimeout, null);
    }

    /** As above; {@code onDeadlock} {@code WAIT} or {@code FAIL} (null: none sent); a victim's 409 is a {@link ProblemException}. */
    public Acquired acquire(String sessionId, String name, String mode, int permits, long waitMs, String requestId,
                            String onTimeout, String onDeadlock) {
        ObjectNode body = JSON.createObjectNode().put("session_id", sessionId).put("name", name).put("mode", mode)
                .put("wait_ms", waitMs);
        if (permits > 0) {
            body.put("permits", permits);
        }
        if (requestId != null) {
            body.put("request_id", requestId);
        }
        if (onTimeout != null) {
            body.put("on_timeout", onTimeout);
        }
        if (onDeadlock != null) {
            body.put("on_deadlock", onDeadlock);
        }
        Reply reply = expect(call("POST", "/v1/acquire", body, Duration.ofMillis(waitMs + 5000)), 200);
        JsonNode token = reply.body.get("token");
        JsonNode position = reply.body.get("position");
        return new Acquired(reply.body.path("status").asText(),
                token == null || token.isNull() ? null : token.asLong(),
                position == null || position.isNull() ? null : position.asInt(), reply.attempts);
    }

    /** A multi-lock acquire's reply: {@code tokens} by name when GRANTED. */
    public record AcquiredMany(String status, java.util.Map<String, Long> tokens, int attempts) {
        public boolean granted() {
            return "GRANTED".equals(status);
        }
    }

    /** {@code POST /v1/acquire} with {@code names}: one request for every name (contract §2.11). */
    public AcquiredMany acquireMany(String sessionId, List<String> names, String mode, long waitMs, String requestId,
                                    String onTimeout) {
        ObjectNode body = JSON.createObjectNode().put("session_id", sessionId).put("mode", mode).put("wait_ms", waitMs)
                .put("request_id", requestId).put("on_timeout", onTimeout);
        names.forEach(body.putArray("names")::add);
        Reply reply = expect(call("POST", "/v1/acquire", body, Duration.ofMillis(waitMs + 5000)), 200);
        java.util.Map<String, Long> tokens = new java.util.LinkedHashMap<>();
        reply.body.path("tokens").fields().forEachRemaining(e -> tokens.put(e.getKey(), e.getValue().asLong()));
        return new AcquiredMany(reply.body.path("status").asText(), tokens, reply.attempts);
    }

    public Released release(String sessionId, String name, long token) {
        ObjectNode body = JSON.createObjectNode().put("session_id", sessionId).put("name", name).put("token", token);
        Reply reply = expect(call("POST", "/v1/release", body, Duration.ofSeconds(5)), 200);
        return new Released(reply.body.path("released").asBoolean(), reply.attempts, reply.ambiguous);
    }

    /** Ends a whole request by its {@code request_id} (contract §3: releases its holds, cancels its waits). */
    public Released releaseRequest(String sessionId, String requestId) {
        ObjectNode body = JSON.createObjectNode().put("session_id", sessionId).put("request_id", requestId);
        Reply reply = expect(call("POST", "/v1/release", body, Duration.ofSeconds(5)), 200);
        return new Released(reply.body.path("released").asBoolean(), reply.attempts, reply.ambiguous);
    }

    /** Cancels a queued request by its {@code request_id}. */
    public Released cancel(String sessionId, String name, String requestId) {
        ObjectNode body = JSON.createObjectNode().put("session_id", sessionId).put("name", name)
                .put("request_id", requestId);
        Reply reply = expect(call("POST", "/v1/release", body, Duration.ofSeconds(5)), 200);
        return new Released(reply.body.path("released").asBoolean(), reply.attempts, reply.ambiguous);
    }

    public JsonNode session(String sessionId) {
        return expect(call("GET", "/v1/sessions/" + sessionId, null, Duration.ofSeconds(5)), 200).body;
    }

    public JsonNode lock(String name) {
        return expect(call("GET", "/v1/locks/" + name, null, Duration.ofSeconds(5)), 200).body;
    }

    public JsonNode closeSession(String sessionId) {
        return expect(call("DELETE", "/v1/sessions/" + sessionId, null, Duration.ofSeconds(5)), 200).body;
    }

    /** Sends the following calls to gateway {@code index} first (fail-over goes on from there). */
    public void prefer(int index) {
        current.set(Math.floorMod(index, gateways.size()));
    }

    public URI currentGateway() {
        return gateways.get(current.get());
    }

    public long failovers() {
        return failovers.get();
    }

    public long retries() {
        return retries.get();
    }

    private static Reply expect(Reply reply, int... ok) {
        for (int status : ok) {
            if (reply.status == status) {
                return reply;
            }
        }
        String code = reply.body == null ? "" : reply.body.path("code").asText("");
        if (reply.status == 404 && "SESSION_NOT_FOUND".equals(code)) {
            throw new SessionNotFoundException(reply.raw, reply.ambiguous);
        }
        throw new ProblemException(reply.status, code, reply.raw, reply.ambiguous);
    }

    private Reply call(String method, String path, JsonNode body, Duration attemptTimeout) {
        long deadline = System.nanoTime() + retryBudget.toNanos();
        byte[] bytes = body == null ? null : body.toString().getBytes(StandardCharsets.UTF_8);
        Exception last = null;
        boolean ambiguous = false;
        long backoffMs = 25;
        for (int attempt = 1; ; attempt++) {
            int index = current.get();
            URI uri = gateways.get(index).resolve(path);
            HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(attemptTimeout)
                    .header("Accept", "application/json");
            if (bytes != null) {
                request.header("Content-Type", "application/json")
                        .method(method, HttpRequest.BodyPublishers.ofByteArray(bytes));
            } else {
                request.method(method, HttpRequest.BodyPublishers.noBody());
            }
            try {
                HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                int status = response.statusCode();
                if (status != 503 && status != 502) {
                    String raw = response.body();
                    return new Reply(status, parse(raw), raw, attempt, ambiguous);
                }
                last = new IOException(uri + " answered " + status + ": " + response.body());
                ambiguous = true;
            } catch (IOException e) {
                last = e;
                // A refused connection delivered nothing; anything else may have.
                ambiguous |= !(e instanceof java.net.ConnectException);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UnavailableException("interrupted during " + method + " " + path, e);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new UnavailableException(method + " " + path + " failed " + attempt + " times in "
                        + retryBudget.toMillis() + " ms; last: " + last, last);
            }
            retries.incrementAndGet();
            // Move on to the next gateway (another thread may have moved already).
            if (current.compareAndSet(index, (index + 1) % gateways.size())) {
                failovers.incrementAndGet();
            }
            Await.sleepQuietly(Duration.ofMillis(backoffMs));
            backoffMs = Math.min(500, backoffMs * 2);
        }
    }

    private static JsonNode parse(String raw) {
        if (raw == null || raw.isBlank()) {
            return JSON.createObjectNode();
        }
        try {
            return JSON.readTree(raw);
        } catch (IOException e) {
            return JSON.createObjectNode().put("unparsed", raw);
        }
    }
}
