package io.warden.shedlock;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.client.Cell;
import io.warden.client.WardenClient;
import io.warden.service.Gateway;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The SDK's test cell ({@link Cell}: a real ZooKeeper, a real gateway on the system clock, a plain HTTP client) with
 * one gateway, and the look-ups these tests make at it: a lock's holders, a release or a session's close behind a
 * holder's back, the way another process would. Close it after the tests that use it.
 *
 * <p>Thread-safety: the look-ups ({@link #holders}, {@link #releaseElsewhere}, ...) may be called from any thread (the
 * HTTP client is thread-safe); {@link #client} and {@link #close} from the test thread only.
 */
final class WardenCell implements AutoCloseable {
    private final Cell cell;
    private final Gateway gateway;

    WardenCell() {
        try {
            cell = new Cell();
        } catch (Exception e) {
            throw new IllegalStateException("could not start the test ZooKeeper", e);
        }
        try {
            gateway = cell.gateway();
        } catch (RuntimeException e) {
            cell.close();
            throw e;
        }
    }

    String url() {
        return Cell.url(gateway);
    }

    /** A client of the gateway, with its own session of {@code ttl}; closed with the cell. */
    WardenClient client(String clientId, Duration ttl) {
        return cell.client(clientId, ttl, url());
    }

    /** {@code GET /v1/locks/{name}}: the linearizable view of the lock's holders and waiters. */
    JsonNode lock(String name) {
        return cell.lock(gateway, name);
    }

    int holders(String name) {
        return cell.holders(gateway, name);
    }

    /** The session id of the lock's first holder, or null when it is free. */
    String holderSession(String name) {
        JsonNode holders = lock(name).path("holders");
        return holders.isEmpty() ? null : holders.get(0).path("session_id").asText();
    }

    /** {@code POST /v1/release} by token: another process (with the session id and token) ends the grant. */
    boolean releaseElsewhere(String sessionId, String name, long token) {
        return cell.release(gateway, sessionId, name, token).path("released").asBoolean();
    }

    /** {@code DELETE /v1/sessions/{id}}: the session is closed behind its client's back. */
    void deleteSession(String sessionId) {
        cell.deleteSession(gateway, sessionId);
    }

    /** Waits for a condition with a deadline (no sleeps as synchronisation). */
    static void await(String what, BooleanSupplier condition) {
        Cell.await(what, condition);
    }

    @Override
    public void close() {
        cell.close();
    }
}
