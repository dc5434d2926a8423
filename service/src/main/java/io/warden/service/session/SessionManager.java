package io.warden.service.session;

import io.warden.service.api.CloseResult;
import io.warden.service.api.SessionGrant;
import io.warden.service.api.SessionView;
import io.warden.service.api.WardenException;
import io.warden.service.lock.LockEngine;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Sessions: durable records in ZooKeeper, TTLs tracked in this gateway's memory on the injected clock.
 *
 * <p>Heartbeats never touch ZooKeeper. A keepalive at a gateway that does not track the session takes it over with
 * a compare-and-set of the record's {@code gateway} field and a fresh TTL. The tracking gateway watches the record,
 * so it stops tracking when another gateway takes over or the session is closed elsewhere.
 *
 * <p>Expiry is one {@code multi}: create the marker {@code /expired/{id}} (so watches tell expiry from release; deleted
 * again right after), delete the session's queue nodes and request records, then the record itself at
 * the version this gateway last saw. A version conflict means another gateway took the session over (it then owns
 * expiry); a record with children this multi did not delete fails the delete (NOTEMPTY), so a racing acquire is
 * never orphaned. With lock-delay, the holders' queue nodes stay and a {@code /lockdelay/{id}} record lists them,
 * deleted after the delay by this gateway (or, if it dies, by the leader).
 *
 * <p>Concurrency: {@link #tracked} is a concurrent map; each {@link Tracked}'s mutable fields are guarded by the
 * Tracked object itself. Continuations run on Curator's event thread or the clock's thread and never block.
 */
public final class SessionManager {
    private static final Logger log = LoggerFactory.getLogger(SessionManager.class);
    public static final long MAX_LOCK_DELAY_MS = 60_000;
    private static final Pattern SESSION_ID = Pattern.compile("[0-9a-f]{32}");
    private static final Duration RETRY_DELAY = Duration.ofMillis(500);
    private static final int MAX_ATTEMPTS = 20;

    private final Zk zk;
    private final Clock clock;
    private final WardenMetrics metrics;
    private final LockEngine engine;
    private final String gatewayId;
    private final long ttlMinMs;
    private final long ttlMaxMs;
    private final long ttlDefaultMs;
    private final int maxSessions;
    private final SessionRequests requests;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Tracked> tracked = new ConcurrentHashMap<>();
    private final LockDelays lockDelays;
    /** Set on LOST (our ZooKeeper session may have expired and our sessions been adopted); cleared by revalidation. */
    private volatile boolean lostSinceConnected;

    public SessionManager(Zk zk, Clock clock, WardenMetrics metrics, LockEngine engine, String gatewayId,
                          Duration ttlMin, Duration ttlMax, Duration ttlDefault, int maxSessions) {
        this.zk = zk;
        this.clock = clock;
        this.metrics = metrics;
        this.engine = engine;
        this.gatewayId = gatewayId;
        this.ttlMinMs = ttlMin.toMillis();
        this.ttlMaxMs = ttlMax.toMillis();
        this.ttlDefaultMs = ttlDefault.toMillis();
        this.maxSessions = maxSessions;
        this.requests = new SessionRequests(zk);
        this.lockDelays = new LockDelays(zk, clock, gatewayId);
        metrics.trackedSessions(tracked::size);
        zk.client().getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.LOST) {
                lostSinceConnected = true;
                log.warn("ZooKeeper session of gateway {} lost: {} sessions it tracks may be adopted elsewhere; "
                        + "their keepalives answer 503 until it reconnects", gatewayId, tracked.size());
            } else if (state == ConnectionState.RECONNECTED && lostSinceConnected) {
                revalidateAll();
            }
        });
    }

    public long defaultTtlMs() {
        return ttlDefaultMs;
    }

    long clampTtl(long ttlMs) {
        return Math.max(ttlMinMs, Math.min(ttlMaxMs, ttlMs));
    }

    public static void validateSessionId(String sessionId) {
        if (sessionId == null || !SESSION_ID.matcher(sessionId).matches()) {
            throw WardenException.invalid("session_id", "must be 32 lowercase hex characters as returned by POST /v1/sessions");
        }
    }

    // ------------------------------------------------------------------ open

    public CompletableFuture<SessionGrant> open(String clientId, long ttlMs, long lockDelayMs) {
        try {
            if (clientId == null || clientId.isEmpty() || clientId.length() > 128) {
                throw WardenException.invalid("client_id", "must be 1 to 128 characters");
            }
            if (ttlMs <= 0) {
                throw WardenException.invalid("ttl_ms", "must be positive, got " + ttlMs);
            }
            if (lockDelayMs < 0 || lockDelayMs > MAX_LOCK_DELAY_MS) {
                throw WardenException.invalid("lock_delay_ms", "must be between 0 and " + MAX_LOCK_DELAY_MS + ", got " + lockDelayMs);
            }
            if (tracked.size() >= maxSessions) {
                throw WardenException.exhausted("this gateway already tracks " + tracked.size()
                        + " sessions, the most allowed (max-sessions-per-gateway); try another gateway");
            }
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        long ttl = clampTtl(ttlMs);
        byte[] id = new byte[16];
        random.nextBytes(id);
        String sessionId = HexFormat.of().formatHex(id);
        SessionRecord record = new SessionRecord(clientId, ttl, lockDelayMs, gatewayId);
        String path = CellPaths.session(sessionId);
        return zk.create(path, Json.write(record), CreateMode.PERSISTENT, false)
                .handle((created, err) -> {
                    // The id is 128 random bits: NODEEXISTS can only be our own create, applied before a lost reply
                    // and sent again by Curator.
                    if (err != null && Zk.code(err) != Code.NODEEXISTS) {
                        throw Zk.translate(err);
                    }
                    return path;
                })
                .thenCompose(zk::exists)
                .handle((stat, err) -> {
                    if (err != null) {
                        throw Zk.translate(err);
                    }
                    track(sessionId, record, stat.getVersion());
                    engine.sessionOpened(sessionId, clientId);
                    log.info("opened session {} for client {} (ttl {} ms, lock-delay {} ms)", sessionId, clientId, ttl, lockDelayMs);
                    return new SessionGrant(sessionId, ttl, keepaliveInterval(ttl), lockDelayMs, stat.getCzxid());
                });
    }

    static long keepaliveInterval(long ttlMs) {
        return Math.max(1, ttlMs / 3);
    }

    // ------------------------------------------------------------------ keepalive and takeover

    /** Resets the TTL; returns ms remaining. Takes the session over when this gateway does not track it. */
    public CompletableFuture<Long> keepalive(String sessionId, Long newTtlMs) {
        try {
            validateSessionId(sessionId);
            if (newTtlMs != null && newTtlMs <= 0) {
                throw WardenException.invalid("ttl", "must be positive, got " + newTtlMs);
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        Tracked t = tracked.get(sessionId);
        if (t == null) {
            return takeOver(sessionId, newTtlMs, 0).whenComplete((r, e) -> metrics.keepalive(e == null ? "takeover" : "error"));
        }
        if (lostSinceConnected) {
            metrics.keepalive("unavailable");
            return CompletableFuture.failedFuture(WardenException.unavailable("this gateway lost its ZooKeeper session and "
                    + "cannot vouch for session " + sessionId + " until it reconnects; send keepalives to another gateway", null));
        }
        CompletableFuture<Boolean> expiring;
        synchronized (t) {
            expiring = t.expiring;
        }
        if (expiring != null) {
            // An expiry is in flight: the session lives only if it fails.
            return expiring.thenCompose(expired -> {
                if (expired) {
                    throw WardenException.sessionNotFound(sessionId);
                }
                return keepalive(sessionId, newTtlMs);
            });
        }
        if (newTtlMs != null && clampTtl(newTtlMs) != t.ttlMs) {
            return changeTtl(t, clampTtl(newTtlMs));
        }
        synchronized (t) {
            t.deadline = clock.read() + Duration.ofMillis(t.ttlMs).toNanos();
        }
        metrics.keepalive("ok");
        return CompletableFuture.completedFuture(t.ttlMs);
    }

    private CompletableFuture<Long> changeTtl(Tracked t, long ttl) {
        return zk.data(CellPaths.session(t.id)).thenCompose(ds -> {
            SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
            if (rec == null || !gatewayId.equals(rec.gateway())) {
                untrack(t.id, false);
                return keepalive(t.id, ttl);
            }
            return zk.setData(CellPaths.session(t.id), Json.write(rec.withTtl(ttl)), ds.stat().getVersion()).thenApply(stat -> {
                synchronized (t) {
                    t.ttlMs = ttl;
                    t.version = Math.max(t.version, stat.getVersion());
                    t.deadline = clock.read() + Duration.ofMillis(ttl).toNanos();
                }
                metrics.keepalive("ok");
                return ttl;
            });
        }).exceptionally(err -> {
            if (Zk.code(err) == Code.NONODE) {
                untrack(t.id, true);
                throw WardenException.sessionNotFound(t.id);
            }
            throw Zk.translate(err);
        });
    }

    /** Makes this gateway track the session (compare-and-set on the record), with a fresh full TTL. */
    private CompletableFuture<Long> takeOver(String sessionId, Long newTtlMs, int attempt) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String path = CellPaths.session(sessionId);
        return zk.data(path).thenCompose(ds -> {
            SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
            if (rec == null) {
                throw WardenException.sessionNotFound(sessionId);
            }
            SessionRecord mine = rec.withGateway(gatewayId);
            if (newTtlMs != null) {
                mine = mine.withTtl(clampTtl(newTtlMs));
            }
            SessionRecord written = mine;
            return zk.setData(path, Json.write(mine), ds.stat().getVersion()).thenApply(stat -> {
                if (!gatewayId.equals(rec.gateway())) {
                    log.info("took over session {} of client {} from gateway {} with a fresh TTL of {} ms",
                            sessionId, rec.clientId(), rec.gateway(), written.ttlMs());
                }
                track(sessionId, written, stat.getVersion());
                return written.ttlMs();
            });
        }).handle((ttl, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(ttl);
            }
            Code code = Zk.code(err);
            if (code == Code.NONODE) {
                throw WardenException.sessionNotFound(sessionId);
            }
            if (code == Code.BADVERSION && attempt < 5) {
                return takeOver(sessionId, newTtlMs, attempt + 1);
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    private void track(String sessionId, SessionRecord rec, int version) {
        Tracked t = tracked.computeIfAbsent(sessionId, id -> new Tracked(id, rec.clientId(), rec.lockDelayMs()));
        synchronized (t) {
            t.ttlMs = rec.ttlMs();
            t.version = Math.max(t.version, version);
            t.deadline = clock.read() + Duration.ofMillis(rec.ttlMs()).toNanos();
            if (t.timer == null) {
                t.timer = clock.schedule(Duration.ofMillis(rec.ttlMs()), () -> checkDeadline(t));
            }
        }
        watch(t);
    }

    private void untrack(String sessionId, boolean ended) {
        Tracked t = tracked.remove(sessionId);
        if (t != null) {
            synchronized (t) {
                if (t.timer != null) {
                    t.timer.cancel();
                    t.timer = null;
                }
            }
        }
        if (ended) {
            engine.sessionEnded(sessionId);
        }
    }

    /** Watches the record: another gateway's takeover or a close elsewhere ends our tracking. */
    private void watch(Tracked t) {
        zk.dataWatched(CellPaths.session(t.id), t.watcher).whenComplete((ds, err) -> {
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    untrack(t.id, true);
                }
                return; // connection trouble: revalidation after reconnect re-arms
            }
            SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
            if (rec != null && !gatewayId.equals(rec.gateway())) {
                log.debug("session {} is now tracked by gateway {}", t.id, rec.gateway());
                untrack(t.id, false);
            } else {
                synchronized (t) {
                    t.version = Math.max(t.version, ds.stat().getVersion());
                }
            }
        });
    }

    private void onRecordEvent(Tracked t, Watcher.Event.EventType type) {
        if (tracked.get(t.id) != t) {
            return;
        }
        if (type == Watcher.Event.EventType.NodeDeleted) {
            untrack(t.id, true);
        } else if (type == Watcher.Event.EventType.NodeDataChanged) {
            watch(t);
        }
    }

    private void revalidateAll() {
        log.info("gateway {} reconnected after losing its ZooKeeper session; revalidating {} sessions", gatewayId, tracked.size());
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (Tracked t : tracked.values()) {
            all.add(zk.data(CellPaths.session(t.id)).handle((ds, err) -> {
                if (err != null) {
                    if (Zk.code(err) == Code.NONODE) {
                        untrack(t.id, true);
                    }
                    return null;
                }
                SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
                if (rec == null || !gatewayId.equals(rec.gateway())) {
                    untrack(t.id, false);
                } else {
                    // Late, never early: a fresh full TTL from now.
                    track(t.id, rec, ds.stat().getVersion());
                }
                return null;
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> lostSinceConnected = false);
    }

    // ------------------------------------------------------------------ expiry

    private void checkDeadline(Tracked t) {
        if (tracked.get(t.id) != t) {
            return;
        }
        long now = clock.read();
        synchronized (t) {
            t.timer = null;
            if (now < t.deadline) {
                t.timer = clock.schedule(Duration.ofNanos(t.deadline - now), () -> checkDeadline(t));
                return;
            }
            if (!zk.connected() || lostSinceConnected || t.expiring != null) {
                t.timer = clock.schedule(RETRY_DELAY, () -> checkDeadline(t));
                return;
            }
            t.expiring = new CompletableFuture<>();
        }
        expire(t, 0);
    }

    /**
     * Expires the session now, as if its TTL had run out (an admin action): a session tracked by another gateway is
     * taken over first. Completes true when the session is gone (this call or a racing expiry or close ended it), false
     * when the expiry could not be written yet (it is retried as for any expiry); SESSION_NOT_FOUND when there was no
     * such session.
     */
    public CompletableFuture<Boolean> expireNow(String sessionId) {
        try {
            validateSessionId(sessionId);
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Long> tracking = tracked.containsKey(sessionId) ? CompletableFuture.completedFuture(0L)
                : takeOver(sessionId, null, 0);
        return tracking.thenCompose(ttl -> {
            Tracked t = tracked.get(sessionId);
            if (t == null) {
                return CompletableFuture.completedFuture(true); // ended between the takeover and now
            }
            CompletableFuture<Boolean> result;
            boolean start = false;
            synchronized (t) {
                if (t.expiring == null) {
                    if (t.timer != null) {
                        t.timer.cancel();
                        t.timer = null;
                    }
                    t.deadline = clock.read();
                    t.expiring = new CompletableFuture<>();
                    start = true;
                }
                result = t.expiring;
            }
            if (start) {
                log.info("expiring session {} of client {} now, on an admin's request", sessionId, t.clientId);
                expire(t, 0);
            }
            return result;
        });
    }

    private void expire(Tracked t, int attempt) {
        requests.load(t.id).thenCompose(reqs -> {
            boolean delay = t.lockDelayMs > 0;
            List<CuratorOp> ops = new ArrayList<>();
            List<String> delayed = new ArrayList<>();
            List<String> released = new ArrayList<>();
            List<String> cancelled = new ArrayList<>();
            int version;
            synchronized (t) {
                version = t.version;
            }
            try {
                // First: the marker whose notification tells watches that this transaction's deletions are an expiry.
                ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(CellPaths.expiredMarker(t.id)));
                for (SessionRequests.Request r : reqs) {
                    if (r.node() != null) {
                        if (r.holds() && delay) {
                            delayed.add(r.nodePath());
                        } else {
                            ops.add(zk.ops().delete().forPath(r.nodePath()));
                        }
                        (r.holds() ? released : cancelled).add(r.name() + "#" + r.token());
                    }
                    ops.add(zk.ops().delete().forPath(CellPaths.sessionRequest(t.id, r.uuid())));
                }
                if (!delayed.isEmpty()) {
                    ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(CellPaths.lockDelay(t.id),
                            Json.write(new LockDelayRecord(t.id, t.lockDelayMs, delayed, gatewayId))));
                }
                ops.add(zk.ops().delete().withVersion(version).forPath(CellPaths.session(t.id)));
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
            return zk.multi(ops).thenApply(r -> {
                log.info("expired session {} of client {}: no keepalive for {} ms; released {}, cancelled {}{}",
                        t.id, t.clientId, t.ttlMs, released, cancelled,
                        delayed.isEmpty() ? "" : "; holds kept for lock-delay " + t.lockDelayMs + " ms");
                metrics.sessionExpired();
                if (!delayed.isEmpty()) {
                    lockDelays.schedule(t.id, t.lockDelayMs);
                }
                deleteExpiredMarker(t.id);
                return true;
            });
        }).whenComplete((expired, err) -> {
            if (err == null) {
                untrack(t.id, true);
                finishExpiring(t, true);
                return;
            }
            Code code = Zk.code(err);
            if (code == Code.NONODE && Zk.unwrap(err) instanceof org.apache.zookeeper.KeeperException) {
                // The record itself is gone: closed elsewhere, or our own earlier attempt was applied and its reply
                // lost. In the second case it may have left a lock-delay for us to finish (a no-op if there is none).
                if (t.lockDelayMs > 0) {
                    lockDelays.schedule(t.id, t.lockDelayMs);
                }
                untrack(t.id, true);
                finishExpiring(t, true);
                return;
            }
            if (code == Code.NODEEXISTS && Zk.unwrap(err) instanceof Zk.MultiFailure mf && mf.failedIndex() == 0) {
                // The marker exists: a multi that expired this session was applied (ours, its reply lost).
                if (t.lockDelayMs > 0) {
                    lockDelays.schedule(t.id, t.lockDelayMs);
                }
                deleteExpiredMarker(t.id);
                untrack(t.id, true);
                finishExpiring(t, true);
                return;
            }
            if (code == Code.BADVERSION) {
                recheckOwner(t, attempt);
                return;
            }
            if ((code == Code.NOTEMPTY || code == Code.NONODE || code == Code.NODEEXISTS) && attempt < MAX_ATTEMPTS) {
                expire(t, attempt + 1); // raced with an acquire or a release: read again
                return;
            }
            log.warn("could not expire session {} yet ({}); will retry", t.id, code != null ? code : Zk.unwrap(err).toString());
            finishExpiring(t, false);
            synchronized (t) {
                if (tracked.get(t.id) == t && t.timer == null) {
                    t.timer = clock.schedule(RETRY_DELAY, () -> checkDeadline(t));
                }
            }
        });
    }

    /** The marker has done its work once its creation was notified; a leftover is swept by the watch's next rebuild. */
    private void deleteExpiredMarker(String sessionId) {
        zk.delete(CellPaths.expiredMarker(sessionId), -1).whenComplete((v, err) -> {
            if (err != null && Zk.code(err) != Code.NONODE) {
                log.debug("could not delete the expiry marker of session {}: {}", sessionId, Zk.unwrap(err).toString());
            }
        });
    }

    private void recheckOwner(Tracked t, int attempt) {
        zk.data(CellPaths.session(t.id)).whenComplete((ds, err) -> {
            SessionRecord rec = err == null ? Json.readOrNull(ds.data(), SessionRecord.class) : null;
            if (err != null && Zk.code(err) == Code.NONODE || err == null && (rec == null || !gatewayId.equals(rec.gateway()))) {
                untrack(t.id, err != null);
                finishExpiring(t, false);
            } else if (err == null) {
                synchronized (t) {
                    t.version = ds.stat().getVersion();
                }
                expire(t, attempt + 1);
            } else {
                finishExpiring(t, false);
                synchronized (t) {
                    if (tracked.get(t.id) == t && t.timer == null) {
                        t.timer = clock.schedule(RETRY_DELAY, () -> checkDeadline(t));
                    }
                }
            }
        });
    }

    private void finishExpiring(Tracked t, boolean expired) {
        CompletableFuture<Boolean> f;
        synchronized (t) {
            f = t.expiring;
            t.expiring = null;
        }
        if (f != null) {
            f.complete(expired);
        }
    }

    // ------------------------------------------------------------------ close and view

    public CompletableFuture<CloseResult> close(String sessionId) {
        try {
            validateSessionId(sessionId);
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return close(sessionId, 0);
    }

    private CompletableFuture<CloseResult> close(String sessionId, int attempt) {
        String path = CellPaths.session(sessionId);
        AtomicReference<CloseResult> attempted = new AtomicReference<>();
        return zk.exists(path).thenCompose(stat -> {
            if (stat == null) {
                throw WardenException.sessionNotFound(sessionId);
            }
            return requests.load(sessionId).thenCompose(reqs -> {
                List<CuratorOp> ops = new ArrayList<>();
                List<String> released = new ArrayList<>();
                List<String> cancelled = new ArrayList<>();
                try {
                    for (SessionRequests.Request r : reqs) {
                        if (r.node() != null) {
                            ops.add(zk.ops().delete().forPath(r.nodePath()));
                            (r.holds() ? released : cancelled).add(r.name().toString());
                        }
                        ops.add(zk.ops().delete().forPath(CellPaths.sessionRequest(sessionId, r.uuid())));
                    }
                    ops.add(zk.ops().delete().withVersion(stat.getVersion()).forPath(path));
                } catch (Exception e) {
                    return CompletableFuture.failedFuture(e);
                }
                attempted.set(new CloseResult(released, cancelled, 0));
                return zk.multi(ops).thenApply(r -> closed(sessionId, attempted.get()));
            });
        }).handle((r, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(r);
            }
            Code code = Zk.code(err);
            if (Zk.MultiFailure.maybeApplied(err) && attempt < MAX_ATTEMPTS) {
                // Our first attempt may have closed it and lost its reply: if the record is gone, it did.
                CloseResult mayHave = attempted.get();
                return zk.exists(path).thenCompose(stat -> stat == null && mayHave != null
                        ? CompletableFuture.completedFuture(closed(sessionId, mayHave)) : close(sessionId, attempt + 1));
            }
            if (code != null && code != Code.CONNECTIONLOSS && code != Code.SESSIONEXPIRED && attempt < MAX_ATTEMPTS
                    && !(Zk.unwrap(err) instanceof WardenException)) {
                return close(sessionId, attempt + 1); // raced with an acquire, a release or a takeover
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    private CloseResult closed(String sessionId, CloseResult result) {
        log.info("closed session {}; released {}, cancelled {}", sessionId, result.released(), result.cancelled());
        untrack(sessionId, true);
        return result;
    }

    public CompletableFuture<SessionView> view(String sessionId) {
        try {
            validateSessionId(sessionId);
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String path = CellPaths.session(sessionId);
        return zk.sync(path).thenCompose(v -> zk.data(path)).thenCompose(ds -> {
            SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
            if (rec == null) {
                throw WardenException.sessionNotFound(sessionId);
            }
            return requests.load(sessionId).thenApply(reqs -> {
                List<SessionView.Hold> holds = new ArrayList<>();
                List<SessionView.Wait> waits = new ArrayList<>();
                long revision = ds.stat().getPzxid();
                for (SessionRequests.Request r : reqs) {
                    if (r.node() == null) {
                        continue;
                    }
                    if (r.holds()) {
                        holds.add(new SessionView.Hold(r.name().toString(), r.mode(), r.token()));
                    } else {
                        waits.add(new SessionView.Wait(r.name().toString(), r.mode(), r.requestId()));
                    }
                }
                return new SessionView(sessionId, rec.clientId(), rec.ttlMs(), remainingMs(sessionId, rec.ttlMs()),
                        rec.lockDelayMs(), holds, waits, revision);
            });
        }).exceptionally(err -> {
            if (Zk.code(err) == Code.NONODE) {
                throw WardenException.sessionNotFound(sessionId);
            }
            throw Zk.translate(err);
        });
    }

    /** TTL left as this gateway measures it; a session tracked elsewhere reports its full TTL. */
    private long remainingMs(String sessionId, long ttlMs) {
        Tracked t = tracked.get(sessionId);
        if (t == null) {
            return ttlMs;
        }
        synchronized (t) {
            return Math.max(0, Duration.ofNanos(t.deadline - clock.read()).toMillis());
        }
    }

    // ------------------------------------------------------------------ adoption

    /**
     * Adopts the sessions and lock-delays of gateways that are gone: each gets a fresh full TTL here. Called by the
     * elected leader when the set of gateways changes, and periodically.
     */
    public CompletableFuture<Integer> adoptOrphans() {
        if (!zk.connected()) {
            return CompletableFuture.completedFuture(0);
        }
        return zk.children(CellPaths.GATEWAYS).thenCompose(live -> {
            Set<String> alive = Set.copyOf(live);
            // Not sessions naming this gateway: those it tracks, or is opening right now (adoptOwn covers a restart).
            return adopt(g -> g == null || !alive.contains(g));
        });
    }

    /**
     * Tracks, with a fresh full TTL, every session and lock-delay whose record names this gateway: a gateway that
     * restarts under the same id must not leave its earlier incarnation's sessions without a tracker.
     */
    public CompletableFuture<Integer> adoptOwn() {
        return adopt(gatewayId::equals);
    }

    private CompletableFuture<Integer> adopt(Predicate<String> orphaned) {
        CompletableFuture<Integer> sessions = zk.children(CellPaths.SESSIONS).thenCompose(ids -> {
            List<CompletableFuture<Integer>> adopted = new ArrayList<>();
            for (String id : ids) {
                if (tracked.containsKey(id)) {
                    continue;
                }
                adopted.add(zk.data(CellPaths.session(id)).thenCompose(ds -> {
                    SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
                    if (rec == null || !orphaned.test(rec.gateway())) {
                        return CompletableFuture.completedFuture(0);
                    }
                    // Compare-and-set against the version just read: if the record changed meanwhile (a keepalive
                    // took the session over elsewhere), it is not an orphan any more and this pass leaves it.
                    SessionRecord mine = rec.withGateway(gatewayId);
                    return zk.setData(CellPaths.session(id), Json.write(mine), ds.stat().getVersion()).thenApply(stat -> {
                        track(id, mine, stat.getVersion());
                        log.info("adopted session {} of client {} (tracked by gateway {} before) with a fresh TTL of {} ms",
                                id, rec.clientId(), rec.gateway(), mine.ttlMs());
                        return 1;
                    });
                }).exceptionally(e -> {
                    log.debug("could not adopt session {}: {}", id, e.toString());
                    return 0;
                }));
            }
            return CompletableFuture.allOf(adopted.toArray(CompletableFuture[]::new))
                    .thenApply(v -> adopted.stream().mapToInt(CompletableFuture::join).sum());
        });
        return sessions.thenCombine(lockDelays.adoptOrphans(orphaned), Integer::sum);
    }

    /** The TTL left, in ms, of every session this gateway tracks, as it measures it now. */
    public Map<String, Long> trackedRemainingMs() {
        Map<String, Long> out = new HashMap<>();
        long now = clock.read();
        for (Tracked t : tracked.values()) {
            synchronized (t) {
                out.put(t.id, Math.max(0, Duration.ofNanos(t.deadline - now).toMillis()));
            }
        }
        return out;
    }

    public int trackedCount() {
        return tracked.size();
    }

    public boolean tracks(String sessionId) {
        return tracked.containsKey(sessionId);
    }

    /** Stops all timers (the gateway is going away; another gateway adopts the sessions). */
    public void stop() {
        for (String id : List.copyOf(tracked.keySet())) {
            untrack(id, false);
        }
    }

    /** A session whose TTL this gateway tracks. Mutable fields are guarded by the instance. */
    private final class Tracked {
        final String id;
        final String clientId;
        final long lockDelayMs;
        final Watcher watcher;
        long ttlMs;
        long deadline;
        int version = -1;
        Clock.Cancellable timer;
        CompletableFuture<Boolean> expiring;

        Tracked(String id, String clientId, long lockDelayMs) {
            this.id = id;
            this.clientId = clientId;
            this.lockDelayMs = lockDelayMs;
            this.watcher = event -> onRecordEvent(this, event.getType());
        }
    }
}
