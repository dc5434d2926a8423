package io.warden.service.session;

import io.warden.service.metrics.WardenMetrics;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.LockDelayRecord;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The expiry of one session, as one ZooKeeper {@code multi}: create the marker {@code /expired/{id}} (so watches tell
 * expiry from release; deleted right after), delete the session's queue nodes and request records, then the record
 * itself at the version the tracker last saw. All or nothing:
 * <ul>
 *   <li>BADVERSION: the record changed — another gateway took the session over (it owns the expiry now: let go), or
 *   this gateway wrote it (read the version again and retry);</li>
 *   <li>NOTEMPTY / NONODE / NODEEXISTS from a racing acquire or release: read the session's requests again and retry;</li>
 *   <li>NONODE for the record, or NODEEXISTS for the marker: a multi that expired the session was already applied (this
 *   gateway's, its reply lost) or the session was closed: it is gone.</li>
 * </ul>
 * With lock-delay, the holders' queue nodes stay and a {@code /lockdelay/{id}} record lists them ({@link LockDelays}).
 *
 * <p>Concurrency: stateless between calls; one expiry per session at a time, because the {@link Tracker} starts it only
 * in the EXPIRING state and is told the outcome through {@link Tracker#expiryDone} exactly once.
 */
final class SessionExpiry {
    private static final Logger log = LoggerFactory.getLogger(SessionExpiry.class);
    private static final int MAX_ATTEMPTS = 20;

    /** Builds the expiry for a tracker (they refer to each other). */
    interface Factory {
        SessionExpiry create(Tracker tracker);
    }

    private final Zk zk;
    private final WardenMetrics metrics;
    private final Owner owner;
    private final SessionRequests requests;
    private final LockDelays lockDelays;
    private final Tracker tracker;

    SessionExpiry(Zk zk, WardenMetrics metrics, Owner owner, SessionRequests requests, LockDelays lockDelays, Tracker tracker) {
        this.zk = zk;
        this.metrics = metrics;
        this.owner = owner;
        this.requests = requests;
        this.lockDelays = lockDelays;
        this.tracker = tracker;
    }

    /** Expires {@code t}, which the tracker has put in the EXPIRING state. */
    void run(TrackedSession t) {
        attempt(t, 0);
    }

    private void attempt(TrackedSession t, int attempt) {
        if (t.gone) {
            // This tracking ended while its expiry was under way (taken over elsewhere, closed): whoever tracks the
            // session now decides, from its own deadline (see recheckOwner).
            tracker.expiryDone(t, false);
            return;
        }
        List<String> delayed = new ArrayList<>();
        requests.load(t.id).thenCompose(reqs -> {
            boolean delay = t.lockDelayMs > 0;
            List<CuratorOp> ops = new ArrayList<>();
            List<String> released = new ArrayList<>();
            List<String> cancelled = new ArrayList<>();
            int version;
            synchronized (t) {
                version = t.version;
            }
            try {
                // First: the marker whose notification tells watches that this transaction's deletions are an expiry.
                ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(CellPaths.expiredMarker(t.id)));
                java.util.Set<String> recordsDeleted = new java.util.HashSet<>();
                for (SessionRequests.Request r : reqs) {
                    if (r.node() != null) {
                        if (r.holds() && delay) {
                            delayed.add(r.nodePath());
                        } else {
                            ops.add(zk.ops().delete().forPath(r.nodePath()));
                        }
                        (r.holds() ? released : cancelled).add(r.name() + " (czxid " + r.czxid() + ")");
                    }
                    if (recordsDeleted.add(r.uuid())) { // a multi-lock request's one record, for all its entries
                        ops.add(zk.ops().delete().forPath(CellPaths.sessionRequest(t.id, r.uuid())));
                    }
                }
                if (!delayed.isEmpty()) {
                    ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(CellPaths.lockDelay(t.id),
                            Json.write(new LockDelayRecord(t.id, t.lockDelayMs, delayed, owner.gatewayId(), owner.incarnation()))));
                }
                ops.add(zk.ops().delete().withVersion(version).forPath(CellPaths.session(t.id)));
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
            long ttl;
            synchronized (t) {
                ttl = t.ttlMs;
            }
            return zk.multi(ops).thenApply(r -> {
                log.info("expired session {} of client {}: no keepalive for {} ms; released {}, cancelled {}{}",
                        t.id, t.clientId, ttl, released, cancelled,
                        delayed.isEmpty() ? "" : "; holds kept for lock-delay " + t.lockDelayMs + " ms");
                metrics.sessionExpired();
                return true;
            });
        }).whenComplete((expired, err) -> {
            if (err == null) {
                if (!delayed.isEmpty()) {
                    lockDelays.schedule(t.id, t.lockDelayMs);
                }
                deleteMarker(t.id);
                gone(t);
                return;
            }
            Code code = Zk.code(err);
            if (code == Code.NONODE && Zk.unwrap(err) instanceof KeeperException) {
                // The record itself is gone: closed elsewhere, or an earlier attempt was applied and its reply lost.
                // In the second case it may have left a lock-delay for us to finish (a no-op if there is none).
                if (t.lockDelayMs > 0) {
                    lockDelays.schedule(t.id, t.lockDelayMs);
                }
                gone(t);
                return;
            }
            if (code == Code.NODEEXISTS && Zk.unwrap(err) instanceof Zk.MultiFailure mf && mf.failedIndex() == 0) {
                // The marker exists: a multi that expired this session was applied (ours, its reply lost).
                if (t.lockDelayMs > 0) {
                    lockDelays.schedule(t.id, t.lockDelayMs);
                }
                deleteMarker(t.id);
                gone(t);
                return;
            }
            if (code == Code.BADVERSION) {
                recheckOwner(t, attempt);
                return;
            }
            if ((code == Code.NOTEMPTY || code == Code.NONODE || code == Code.NODEEXISTS) && attempt < MAX_ATTEMPTS) {
                attempt(t, attempt + 1); // raced with an acquire or a release: read again
                return;
            }
            log.warn("could not expire session {} yet ({}); will retry", t.id, code != null ? code : Zk.unwrap(err).toString());
            tracker.expiryDone(t, false);
        });
    }

    private void gone(TrackedSession t) {
        tracker.untrack(t, true);
        tracker.expiryDone(t, true);
    }

    /** The marker has done its work once its creation was notified; a leftover is swept by the watch's next rebuild. */
    private void deleteMarker(String sessionId) {
        zk.delete(CellPaths.expiredMarker(sessionId), -1).whenComplete((v, err) -> {
            if (err != null && Zk.code(err) != Code.NONODE) {
                log.debug("could not delete the expiry marker of session {}: {}", sessionId, Zk.unwrap(err).toString());
            }
        });
    }

    private void recheckOwner(TrackedSession t, int attempt) {
        zk.data(CellPaths.session(t.id)).whenComplete((ds, err) -> {
            SessionRecord rec = err == null ? Json.readOrNull(ds.data(), SessionRecord.class) : null;
            if (err != null && Zk.code(err) == Code.NONODE) {
                tracker.untrack(t, true);
                tracker.expiryDone(t, false);
            } else if (err == null && !owner.owns(rec)) {
                tracker.untrack(t, false); // taken over: the new tracker decides
                tracker.expiryDone(t, false);
            } else if (err == null && (t.gone || tracker.get(t.id) != t)) {
                // The record names this gateway run again, but under another tracking (the session was taken over
                // elsewhere and then back, with a fresh TTL + B): this expiry's deadline is not that tracking's. Taking
                // the new version here would expire a session 0.2 s after acknowledging its keepalive (JepsenIT seed
                // 4167334835; SessionTrustTest.aStaleExpiry_*).
                tracker.expiryDone(t, false);
            } else if (err == null && attempt < MAX_ATTEMPTS) {
                synchronized (t) {
                    t.version = ds.stat().getVersion();
                }
                attempt(t, attempt + 1);
            } else {
                tracker.expiryDone(t, false);
            }
        });
    }
}
