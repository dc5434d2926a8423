package io.warden.service.lock;

import io.warden.service.api.WardenException;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.SessionListing;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What this gateway knows of sessions without reading ZooKeeper, for acquires: a session's client id, principal and quota
 * owner (they never change)
 * and how many live requests it has — counted here, so exact for a session that uses one gateway; when the count says
 * the limit is reached, it is taken again from ZooKeeper ({@link #liveRequests}), so the limit never refuses a session
 * below it. A session whose requests are spread over several gateways is counted per gateway.
 *
 * <p>Concurrency: a concurrent map of at most {@link Hints#PER_SESSION} sessions, least recently used evicted (a
 * miss costs one read of the session record); each hint's count is atomic.
 */
final class SessionHints {
    /**
     * A session's client id, principal, quota owner ({@link SessionRecord#quotaOwner}) and request count; {@code exact}:
     * the count is of live requests only (no tombstones).
     */
    record Prepared(String clientId, String principal, String owner, int requests, boolean exact) {
    }

    private record Hint(String clientId, String principal, String owner, AtomicInteger requests) {
    }

    private final Zk zk;
    private final SessionListing listing;
    private final int maxRequestsPerSession;
    private final Map<String, Hint> hints = Hints.bounded(Hints.PER_SESSION);

    SessionHints(Zk zk, SessionListing listing, int maxRequestsPerSession) {
        this.zk = zk;
        this.listing = listing;
        this.maxRequestsPerSession = maxRequestsPerSession;
    }

    /**
     * The session's client id and request count: from the hint when there is one below the limit (no read), else from
     * the session record (whose child count includes tombstones and end markers: not exact). The acquire's multi
     * checks that the session exists either way.
     */
    CompletableFuture<Prepared> prepare(String sessionId) {
        Hint hint = hints.get(sessionId);
        if (hint != null && hint.requests.get() < maxRequestsPerSession) {
            return CompletableFuture.completedFuture(new Prepared(hint.clientId, hint.principal, hint.owner,
                    hint.requests.get(), true));
        }
        return zk.data(CellPaths.session(sessionId)).handle((ds, err) -> {
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    throw WardenException.sessionNotFound(sessionId);
                }
                throw Zk.translate(err);
            }
            SessionRecord record = Json.readOrNull(ds.data(), SessionRecord.class);
            if (record == null) {
                throw WardenException.sessionNotFound(sessionId);
            }
            int requests = ds.stat().getNumChildren();
            String owner = SessionRecord.quotaOwner(record.principal(), record.address());
            hints.put(sessionId, new Hint(record.clientId(), record.principal(), owner, new AtomicInteger(requests)));
            return new Prepared(record.clientId(), record.principal(), owner, requests, false);
        });
    }

    /** The exact count of the session's live requests, from the names of its record's children; remembered. */
    CompletableFuture<Prepared> exact(String sessionId, String clientId, String principal, String owner) {
        return listing.children(sessionId, "its live requests cannot be counted, and it may make no more")
                .thenApply(Tombstones::live).thenApply(live -> {
            Hint hint = hints.get(sessionId);
            if (hint != null) {
                hint.requests.set(live);
            }
            return new Prepared(clientId, principal, owner, live, true);
        });
    }

    /** A session opened here: its client id and owner are known, and it has no requests yet. */
    void opened(String sessionId, String clientId, String principal, String owner) {
        hints.put(sessionId, new Hint(clientId, principal, owner, new AtomicInteger()));
    }

    /** One request of the session was made ({@code +1}) or ended ({@code -1}) through this gateway. */
    void count(String sessionId, int delta) {
        Hint hint = hints.get(sessionId);
        if (hint != null) {
            hint.requests.updateAndGet(n -> Math.max(0, n + delta));
        }
    }

    void forget(String sessionId) {
        hints.remove(sessionId);
    }
}
