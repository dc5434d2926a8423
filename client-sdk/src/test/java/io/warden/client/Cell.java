package io.warden.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.config.WardenConfig;
import io.warden.service.support.WardenFixture;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A real ZooKeeper ({@link WardenFixture}) with real gateways on the system clock (so TTLs, keepalives and adoption
 * run in real time), the smallest session TTL lowered to 500 ms, and a plain HTTP client for looking at locks the
 * way any other client would. Close it after each test. Shared with the adapters' tests through this module's test jar.
 *
 * <p>Thread-safety: made, used and closed by one test thread; its look-ups ({@link #lock}, {@link #release}, ...) may
 * also be called from helper threads (the HTTP client is thread-safe); the lists of gateways and clients are touched by
 * the test thread only.
 */
public final class Cell implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    public final WardenFixture fx;
    private final List<Gateway> gateways = new ArrayList<>();
    private final List<WardenClient> clients = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    public Cell() throws Exception {
        fx = new WardenFixture();
    }

    public WardenConfig config() {
        return fx.config().toBuilder().httpHost("127.0.0.1").sessionTtlMin(Duration.ofMillis(500)).build();
    }

    public Gateway gateway() {
        return gateway(config());
    }

    public Gateway gateway(WardenConfig config) {
        Gateway g = Gateway.start(config);
        gateways.add(g);
        return g;
    }

    public static String url(Gateway g) {
        return "http://127.0.0.1:" + g.httpPort();
    }

    /** A builder for a client of these gateways (in this order), closed with the cell. */
    public WardenClient client(String clientId, Duration ttl, String... endpoints) {
        WardenClient c = WardenClient.builder().endpoints(endpoints).clientId(clientId).sessionTtl(ttl)
                .requestTimeout(Duration.ofSeconds(3)).build();
        clients.add(c);
        return c;
    }

    public WardenClient client(String clientId, String... endpoints) {
        return client(clientId, Duration.ofSeconds(5), endpoints);
    }

    public WardenClient track(WardenClient c) {
        clients.add(c);
        return c;
    }

    /** {@code GET /v1/locks/{name}} at {@code gateway}: the linearizable view of holders and waiters. */
    public JsonNode lock(Gateway gateway, String name) {
        return get(gateway, "/v1/locks/" + name);
    }

    public int waiters(Gateway gateway, String name) {
        return lock(gateway, name).path("waiters").size();
    }

    public int holders(Gateway gateway, String name) {
        return lock(gateway, name).path("holders").size();
    }

    public JsonNode get(Gateway gateway, String path) {
        return send(HttpRequest.newBuilder(URI.create(url(gateway) + path)).GET().build());
    }

    /** {@code DELETE /v1/sessions/{id}}: the session is closed behind its client's back. */
    public JsonNode deleteSession(Gateway gateway, String sessionId) {
        return send(HttpRequest.newBuilder(URI.create(url(gateway) + "/v1/sessions/" + sessionId)).DELETE().build());
    }

    /** {@code POST /v1/sessions/{id}/keepalive} with {@code {"ttl_ms": ttlMs}}: another caller changes the session's TTL. */
    public JsonNode keepalive(Gateway gateway, String sessionId, long ttlMs) {
        return send(HttpRequest.newBuilder(URI.create(url(gateway) + "/v1/sessions/" + sessionId + "/keepalive"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"ttl_ms\":" + ttlMs + "}")).build());
    }

    /** {@code POST /v1/release} by token: a release from elsewhere (another process with the session id and token). */
    public JsonNode release(Gateway gateway, String sessionId, String name, long token) {
        return send(HttpRequest.newBuilder(URI.create(url(gateway) + "/v1/release"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\"" + sessionId + "\",\"name\":\"" + name
                        + "\",\"token\":" + token + "}")).build());
    }

    private JsonNode send(HttpRequest request) {
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new AssertionError(request.method() + " " + request.uri() + " answered " + r.statusCode() + ": " + r.body());
            }
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Waits for a condition with a deadline (no sleeps as synchronisation). */
    public static void await(String what, BooleanSupplier condition) {
        WardenFixture.await(what, condition);
    }

    /** Asserts that {@code condition} holds throughout {@code period} (an observation over time, not a sync). */
    public static void holdsFor(String what, Duration period, BooleanSupplier condition) {
        long end = System.nanoTime() + period.toNanos();
        while (System.nanoTime() - end < 0) {
            if (!condition.getAsBoolean()) {
                throw new AssertionError("no longer true: " + what);
            }
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    @Override
    public void close() {
        for (WardenClient c : clients) {
            c.close();
        }
        for (Gateway g : gateways) {
            g.close();
        }
        try {
            fx.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop the test ZooKeeper", e);
        }
    }
}
