package io.warden.spring.integration;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.client.Cell;
import io.warden.client.WardenClient;
import io.warden.service.Gateway;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The SDK's test cell ({@link Cell}: a real ZooKeeper, a real gateway on the system clock with the smallest session TTL
 * lowered to 500 ms, a plain HTTP client that looks at locks the way any other client would) with one gateway, and the
 * registries these tests make. Each {@link WardenClient} stands for one application instance.
 *
 * <p>Thread-safety: made and closed by the test class; {@link #client} and {@link #closeClients} by the test thread;
 * the look-ups may be called from any thread (the HTTP client is thread-safe).
 */
final class TestCell implements AutoCloseable {
    private final Cell cell;
    private final Gateway gateway;
    /** Registries and clients, closed by {@link #closeClients} (registries first); the cell closes any left. */
    private final List<AutoCloseable> closeables = new ArrayList<>();

    TestCell() throws Exception {
        cell = new Cell();
        gateway = cell.gateway();
    }

    String url() {
        return Cell.url(gateway);
    }

    /** A client (an application instance) with a 5 s session, closed by {@link #closeClients}. */
    WardenClient client(String clientId) {
        WardenClient c = cell.client(clientId, Duration.ofSeconds(5), url());
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
        return cell.lock(gateway, name);
    }

    int holders(String name) {
        return cell.holders(gateway, name);
    }

    int waiters(String name) {
        return cell.waiters(gateway, name);
    }

    /** {@code POST /v1/release} by token: the grant ends elsewhere (another process, an operator). */
    JsonNode release(String sessionId, String name, long token) {
        return cell.release(gateway, sessionId, name, token);
    }

    @Override
    public void close() throws Exception {
        closeClients();
        cell.close();
    }
}
