package io.warden.console.model;

import java.time.Instant;
import java.util.Objects;

/**
 * A session as the cell knows it.
 *
 * @param ttlRemainingMs the TTL left as the tracking gateway measures it, or null when that gateway could not be asked
 *                       (heartbeats are never written to ZooKeeper, so only the tracking gateway knows)
 * @param gateway        the gateway that tracks the session's TTL
 * @param gatewayLive    whether that gateway is registered now (if not, the leader adopts the session soon)
 * @param openedAt       when the session record was created (ZooKeeper's ctime)
 */
public record SessionState(String sessionId, String clientId, long ttlMs, Long ttlRemainingMs, String gateway,
                           boolean gatewayLive, long lockDelayMs, Instant openedAt) {
    public SessionState {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(clientId, "clientId");
    }
}
