package io.warden.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Heartbeats as {@code POST /v1/sessions/{id}/keepalive}, one attempt each at the current endpoint. A failed attempt
 * (anything but the session being gone, even a final-looking answer such as a gateway's RESOURCE_EXHAUSTED when it
 * tracks too many sessions to take this one over) moves the gateway client on to the next endpoint, so the next
 * heartbeat fails over by itself: a heartbeat changes nothing that another gateway could not do.
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
        int index = gateway.currentIndex();
        return gateway.once(call, timeout).whenComplete((ack, error) -> {
            if (error != null && !Failures.sessionGone(error)) {
                gateway.moveOn(index); // no-op when once() already moved on
            }
        }).thenApply(Wire.KeepaliveAck::ttlMsRemaining);
    }

    @Override
    public void close() {
        // nothing held between heartbeats
    }
}
