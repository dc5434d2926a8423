package io.warden.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Heartbeats as {@code POST /v1/sessions/{id}/keepalive}, one attempt each at the current endpoint. A failed attempt
 * moves the gateway client on to the next endpoint, so the next heartbeat fails over by itself.
 *
 * <p>Concurrency: stateless beyond the thread-safe {@link HttpGateway}.
 */
final class UnaryKeepaliveTransport implements KeepaliveTransport {
    private final HttpGateway gateway;

    UnaryKeepaliveTransport(HttpGateway gateway) {
        this.gateway = gateway;
    }

    @Override
    public CompletableFuture<Long> heartbeat(String sessionId, Duration timeout) {
        var call = new HttpGateway.Call<>("POST", "/v1/sessions/" + sessionId + "/keepalive", null,
                Wire.KeepaliveAck.class, "keepalive of session " + sessionId);
        return gateway.once(call, timeout).thenApply(Wire.KeepaliveAck::ttlMsRemaining);
    }

    @Override
    public void close() {
        // nothing held between heartbeats
    }
}
