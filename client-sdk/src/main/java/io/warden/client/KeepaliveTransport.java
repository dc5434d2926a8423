package io.warden.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * How a session's heartbeats reach the gateways. {@link Session} decides when to send one and what an answer
 * means; a transport only carries it: {@link WebSocketKeepaliveTransport} (the default: the WebSocket stream
 * {@code GET .../keepalive}, docs/api.md, falling back to unary calls) or {@link UnaryKeepaliveTransport}
 * ({@code POST .../keepalive}).
 *
 * <p>Concurrency: implementations are thread-safe; {@link Session} has at most one heartbeat in flight.
 */
interface KeepaliveTransport extends AutoCloseable {
    /**
     * Sends one heartbeat. Completes with the {@code ttl_ms_remaining} the gateway reported, or exceptionally: with a
     * {@link SessionLostException} when a gateway said the session is gone, otherwise with a failure that the next
     * heartbeat (possibly at another gateway) may overcome.
     */
    CompletableFuture<Long> heartbeat(String sessionId, Duration timeout);

    @Override
    void close();
}
