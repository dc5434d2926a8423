package io.warden.console.model;

import java.time.Instant;
import java.util.Objects;

/**
 * One request in a lock's queue, holding or waiting.
 *
 * @param sessionId   the Warden session, or null for a node of a direct-mode (plain Curator) client
 * @param clientId    the client id the session was opened with ("curator" for direct-mode nodes)
 * @param requestId   the request id, or null for direct-mode nodes
 * @param mode        EXCLUSIVE, SHARED or SEMAPHORE
 * @param token       the fencing token: the queue node's czxid
 * @param position    0-based place in the queue (holders first)
 * @param holds       whether it holds the lock now
 * @param requestedAt when the queue node was created (ZooKeeper's ctime)
 * @param grantedAt   when this gateway saw it granted, or null when it waits or the grant came before this gateway
 *                    started watching (then {@code requestedAt} is the earliest it can have been granted)
 */
public record QueuedRequest(String sessionId, String clientId, String requestId, Mode mode, long token, int position,
                            boolean holds, Instant requestedAt, Instant grantedAt) {
    public QueuedRequest {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(requestedAt, "requestedAt");
    }

    /** Since when it holds, as well as known: the grant if seen, else the request. */
    public Instant heldSince() {
        return grantedAt != null ? grantedAt : requestedAt;
    }
}
