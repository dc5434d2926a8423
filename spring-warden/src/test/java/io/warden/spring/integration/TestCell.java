package io.warden.spring.integration;

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

/**
 * A real ZooKeeper ({@link WardenFixture}) with one real gateway on the system clock (TTLs and keepalives run in real
 * time; the smallest session TTL lowered to 500 ms), as the SDK's tests use, plus a plain HTTP client that looks at
 * locks the way any other client would. Each {@link WardenClient} stands for one application instance.
 *
 * <p>Thread-safety: made and closed by the test class; {@link #client} and {@link #closeClients} by the test thread;
 * the look-ups may be called from any thread (the HTTP client is thread-safe).
 */
final class TestCell implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final WardenFixture fx;
    private final Gateway gateway;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    TestCell() throws Exception {
        fx = new WardenFixture();
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").sessionTtlMin(Duration.ofMillis(500)).build());
    }

    String url() {
        return "http://127.0.0.1:" + gateway.httpPort();
    }

    /** A client (an application instance) with a 5 s session, closed by {@link #closeClients}. */
    WardenClient client(String clientId) {
        WardenClient c = WardenClient.builder().endpoints(url()).clientId(clientId).sessionTtl(Duration.ofSeconds(5))
                .requestTimeout(Duration.ofSeconds(3)).build();
        closeables.add(c);
        return c;
    }

    /** A registry of {@code jobs/...} locks on a new client, with this default TTL; closed by {@link #closeClients}. */
    WardenLockRegistry registry(String clientId, Duration defaultTtl) {
        WardenLockRegistry r = new WardenLockRegistry(client(clientId), "jobs", defaultTtl);
        closeables.add(0, r);
        return r;
    }

    WardenLockRegistry registry(String clientId) {
        return registry(clientId, WardenLockRegistry.DEFAULT_TTL);
    }

    /** Closes the registries, then the clients (their sessions, and with them anything they still hold). */
    void closeClients() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        closeables.clear();
    }

    /** {@code GET /v1/locks/{name}}: the linearizable view of holders and waiters. */
    JsonNode lock(String name) {
        return send(HttpRequest.newBuilder(URI.create(url() + "/v1/locks/" + name)).GET().build());
    }

    int holders(String name) {
        return lock(name).path("holders").size();
    }

    int waiters(String name) {
        return lock(name).path("waiters").size();
    }

    /** {@code POST /v1/release} by token: the grant ends elsewhere (another process, an operator). */
    JsonNode release(String sessionId, String name, long token) {
        return send(HttpRequest.newBuilder(URI.create(url() + "/v1/release"))
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

    @Override
    public void close() throws Exception {
        closeClients();
        gateway.close();
        fx.close();
    }
}
