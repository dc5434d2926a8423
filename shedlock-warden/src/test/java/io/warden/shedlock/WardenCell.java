package io.warden.shedlock;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.WardenClient;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A real ZooKeeper ({@link WardenFixture}) and one real gateway on the system clock (TTLs and keepalives run in real
 * time), Warden clients of it, and a plain HTTP client for looking at locks (and releasing them behind a holder's back)
 * the way another process would. Close it after the tests that use it.
 *
 * <p>Thread-safety: the look-ups ({@link #holders}, {@link #releaseElsewhere}, ...) may be called from any thread (the
 * HTTP client is thread-safe); {@link #client} and {@link #close} from the test thread only.
 */
final class WardenCell implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final WardenFixture fx;
    private final Gateway gateway;
    private final List<WardenClient> clients = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    WardenCell() {
        fx = WardenFixture.create();
        try {
            gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").sessionTtlMin(Duration.ofMillis(500)).build());
        } catch (RuntimeException e) {
            closeFixture();
            throw e;
        }
    }

    String url() {
        return "http://127.0.0.1:" + gateway.httpPort();
    }

    /** A client of the gateway, with its own session of {@code ttl}; closed with the cell. */
    WardenClient client(String clientId, Duration ttl) {
        WardenClient c = WardenClient.builder().endpoints(url()).clientId(clientId).sessionTtl(ttl)
                .requestTimeout(Duration.ofSeconds(3)).build();
        clients.add(c);
        return c;
    }

    /** {@code GET /v1/locks/{name}}: the linearizable view of the lock's holders and waiters. */
    JsonNode lock(String name) {
        return send(HttpRequest.newBuilder(URI.create(url() + "/v1/locks/" + name)).GET().build());
    }

    int holders(String name) {
        return lock(name).path("holders").size();
    }

    /** The session id of the lock's first holder, or null when it is free. */
    String holderSession(String name) {
        JsonNode holders = lock(name).path("holders");
        return holders.isEmpty() ? null : holders.get(0).path("session_id").asText();
    }

    /** {@code POST /v1/release} by token: another process (with the session id and token) ends the grant. */
    boolean releaseElsewhere(String sessionId, String name, long token) {
        return send(HttpRequest.newBuilder(URI.create(url() + "/v1/release"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\"" + sessionId + "\",\"name\":\"" + name
                        + "\",\"token\":" + token + "}")).build()).path("released").asBoolean();
    }

    /** {@code DELETE /v1/sessions/{id}}: the session is closed behind its client's back. */
    void deleteSession(String sessionId) {
        send(HttpRequest.newBuilder(URI.create(url() + "/v1/sessions/" + sessionId)).DELETE().build());
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
    static void await(String what, BooleanSupplier condition) {
        WardenFixture.await(what, condition);
    }

    @Override
    public void close() {
        for (WardenClient c : clients) {
            c.close();
        }
        gateway.close();
        closeFixture();
    }

    private void closeFixture() {
        try {
            fx.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop the test ZooKeeper", e);
        }
    }
}
