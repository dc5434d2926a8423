package io.warden.service.session;

import io.warden.service.api.CloseResult;
import io.warden.service.api.SessionGrant;
import io.warden.service.api.SessionView;
import io.warden.service.api.WardenException;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.QueueListing;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

/**
 * Sessions (guarantees 3, 9 and 10 of docs/guarantees.md): durable records in ZooKeeper, TTLs tracked in this gateway's
 * memory on the injected clock. This class is the front: opening, keepalives, takeover, close and views. The mechanisms
 * live in their own classes, each with the rule a reader can check in one place:
 * <ul>
 *   <li>{@link Tracker}: the tracked sessions; "acknowledge only while vouched" and "acknowledge and expire exclude
 *   each other";</li>
 *   <li>{@link Vouching}: how fresh this gateway's view of ZooKeeper is, the bound B, refusals and fresh TTLs;</li>
 *   <li>{@link SessionExpiry}: the expiry {@code multi};</li>
 *   <li>{@link Adoption}: "adoption is idempotent";</li>
 *   <li>{@link LockDelays}: holds kept after an expiry.</li>
 * </ul>
 * Heartbeats never touch ZooKeeper. A keepalive at a gateway that does not track the session takes it over with a
 * compare-and-set of the record's owner ({@link Owner}: gateway id and incarnation) and TTL + B.
 *
 * <p>One manager serves one cell (ZooKeeper ensemble). A session opened in its home cell may also live in other cells:
 * its home record lists them ({@link #addCell}, {@link #cellsOf}), and each of them holds a record of its own made by
 * {@link #join}, tracked, kept alive and expired there by that cell's manager on the same TTL.
 *
 * <p>Concurrency: no state of its own beyond final references; see each mechanism's note. Continuations run on
 * ZooKeeper's event thread, the clock's thread or the caller's, and never block.
 */
public final class SessionManager {
    private static final Logger log = LoggerFactory.getLogger(SessionManager.class);
    public static final long MAX_LOCK_DELAY_MS = 60_000;
    private static final Pattern SESSION_ID = Pattern.compile("[0-9a-f]{32}");
    private static final int MAX_ATTEMPTS = 20;
    /** Looks at a session again at most this often in one keepalive before answering 503. */
    private static final int MAX_KEEPALIVE_ATTEMPTS = 5;
    /** How many times {@link #addCell} reads the record again after it changed under the write, before answering 503. */
    private static final int MAX_ADD_CELL_ATTEMPTS = 5;

    private final Zk zk;
    private final Clock clock;
    private final WardenMetrics metrics;
    private final SessionListener listener;
    private final Owner owner;
    private final long ttlMinMs;
    private final long ttlMaxMs;
    private final long ttlDefaultMs;
    private final SessionRequests requests;
    private final SecureRandom random = new SecureRandom();
    private final LockDelays lockDelays;
    private final Tracker tracker;
    private final Adoption adoption;
    /** A queue node's token from its czxid (the cell's token floor added); set before start. */
    private volatile io.warden.service.cell.Tokens tokens = io.warden.service.cell.Tokens.CZXID;

    /**
     * @param bound B (see {@link Vouching#bound}): how old the ZooKeeper response behind an acknowledged keepalive may
     *              be, and what a takeover or adoption adds to the TTL
     */
    public SessionManager(Zk zk, Clock clock, WardenMetrics metrics, SessionListener listener, QueueListing queues,
                          Owner owner, Duration ttlMin, Duration ttlMax, Duration ttlDefault, int maxSessions,
                          Duration bound) {
        this(zk, clock, metrics, listener, queues, owner, ttlMin, ttlMax, ttlDefault, maxSessions, maxSessions, bound,
                ExpiryRule.CONTRACT);
    }

    /** @param maxPerOwner sessions one principal (in open mode one client address) may have tracked here */
    public SessionManager(Zk zk, Clock clock, WardenMetrics metrics, SessionListener listener, QueueListing queues,
                          Owner owner, Duration ttlMin, Duration ttlMax, Duration ttlDefault, int maxSessions,
                          int maxPerOwner, Duration bound, ExpiryRule expiryRule) {
        this.zk = zk;
        this.clock = clock;
        this.metrics = metrics;
        this.listener = listener;
        this.owner = owner;
        this.ttlMinMs = ttlMin.toMillis();
        this.ttlMaxMs = ttlMax.toMillis();
        this.ttlDefaultMs = ttlDefault.toMillis();
        this.requests = new SessionRequests(zk, queues);
        this.lockDelays = new LockDelays(zk, clock, owner);
        this.tracker = new Tracker(zk, clock, owner, listener, expiryRule, bound,
                t -> new SessionExpiry(zk, metrics, owner, requests, lockDelays, t), new SessionQuotas(maxSessions, maxPerOwner));
        this.adoption = new Adoption(zk, owner, tracker, lockDelays);
        metrics.trackedSessions(tracker::size);
    }

    /** B for a gateway whose own ZooKeeper session timeout is {@code zkSessionTimeout}. */
    public static Duration vouchBound(Duration zkSessionTimeout) {
        return Vouching.bound(zkSessionTimeout);
    }

    /**
     * Joins the sessions to the cell's guard, before {@link #start}: holds are shown with {@code tokens}; while
     * {@code cellServing} says no (the cell is being checked after a reconnection, or was rolled back) this gateway
     * cannot vouch for any session — keepalives are refused and nothing expires — and once it says yes again every
     * tracked session gets a fresh TTL.
     */
    public void guardedBy(io.warden.service.cell.Tokens tokens, java.util.function.BooleanSupplier cellServing) {
        this.tokens = tokens;
        tracker.vouching().servingCell(cellServing);
    }

    /** The cell was found rolled back: refuse keepalives and expire nothing from now on, until it is served again. */
    public void cellRefused() {
        tracker.vouching().refuse("its ZooKeeper cell was rolled back");
    }

    /** Starts vouching (a sync every B/4); call once connected. */
    public void start() {
        tracker.start();
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
        return open(null, null, clientId, ttlMs, lockDelayMs);
    }

    /**
     * Opens a session owned by {@code principal} (null in open mode): only it, or an admin, may use it (docs/api.md,
     * authorization). {@code address} is the caller's (kept in the record); the session counts against its owner's
     * quota, the principal or in open mode that address ({@link SessionQuotas}).
     */
    public CompletableFuture<SessionGrant> open(String principal, String address, String clientId, long ttlMs,
                                                long lockDelayMs) {
        String quotaOwner = SessionQuotas.owner(principal, address);
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
            zk.failFast();
            tracker.quotas().reserve(quotaOwner); // given back below if the session is not opened
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        long ttl = clampTtl(ttlMs);
        byte[] id = new byte[16];
        random.nextBytes(id);
        String sessionId = HexFormat.of().formatHex(id);
        SessionRecord record = new SessionRecord(clientId, ttl, lockDelayMs, owner.gatewayId(), owner.incarnation(), principal,
                address);
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
                        tracker.quotas().release(quotaOwner);
                        throw Zk.translate(err);
                    }
                    tracker.track(sessionId, record, stat.getVersion(), 0, true);
                    listener.sessionOpened(sessionId, clientId, principal, quotaOwner);
                    log.info("opened session {} for client {}{} (ttl {} ms, lock-delay {} ms)", sessionId, clientId,
                            principal == null ? "" : " of principal " + principal, ttl, lockDelayMs);
                    return new SessionGrant(sessionId, ttl, keepaliveInterval(ttl), lockDelayMs, stat.getCzxid());
                });
    }

    static long keepaliveInterval(long ttlMs) {
        return Math.max(1, ttlMs / 3);
    }

    // ------------------------------------------------------------------ keepalive and takeover

    /**
     * Resets the TTL (and with {@code newTtlMs} changes it); returns the TTL in ms. Takes the session over when this
     * gateway does not track it. UNAVAILABLE when this gateway cannot vouch for the session now.
     */
    public CompletableFuture<Long> keepalive(String sessionId, Long newTtlMs) {
        try {
            validateSessionId(sessionId);
            if (newTtlMs != null && newTtlMs <= 0) {
                throw WardenException.invalid("ttl", "must be positive, got " + newTtlMs);
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return keepalive(sessionId, newTtlMs == null ? null : clampTtl(newTtlMs), 0);
    }

    private CompletableFuture<Long> keepalive(String sessionId, Long ttl, int attempt) {
        if (attempt >= MAX_KEEPALIVE_ATTEMPTS) {
            tracker.vouching().refuse();
            metrics.keepalive("unavailable");
            return CompletableFuture.failedFuture(WardenException.unavailable("session " + sessionId + " kept changing under "
                    + "this keepalive; send it again, or to another gateway", null));
        }
        TrackedSession t = tracker.get(sessionId);
        if (t == null) {
            return takeOver(sessionId, ttl, 0).whenComplete((r, e) -> metrics.keepalive(e == null ? "takeover" : "error"));
        }
        return tracker.acknowledge(t, ttl).handle((ack, err) -> {
            if (err != null) {
                metrics.keepalive(Zk.unwrap(err) instanceof WardenException we
                        && we.code() == WardenException.ErrorCode.UNAVAILABLE ? "unavailable" : "error");
                return CompletableFuture.<Long>failedFuture(Zk.unwrap(err));
            }
            if (ack.ttlMs() == null) {
                return keepalive(sessionId, ttl, attempt + 1);
            }
            metrics.keepalive("ok");
            return CompletableFuture.completedFuture(ack.ttlMs());
        }).thenCompose(f -> f);
    }

    // ------------------------------------------------------------------ cells

    /**
     * The other cells the session has records in, as the record this gateway tracks it by lists them (from memory: no
     * ZooKeeper request), or null when this gateway does not track the session. A change of the list written by another
     * gateway is seen here once this gateway's record watch has re-read the record (a keepalive acknowledged here
     * re-reads it first when that watch has fired). Any thread.
     */
    public List<String> cellsOf(String sessionId) {
        TrackedSession t = tracker.get(sessionId);
        if (t == null || t.gone) {
            return null;
        }
        return t.cells;
    }

    /**
     * The session's record, read from ZooKeeper (whoever tracks the session). SESSION_NOT_FOUND when there is none,
     * after a sync (this gateway's server may lag the one the session was opened or joined through).
     */
    public CompletableFuture<SessionRecord> record(String sessionId) {
        try {
            validateSessionId(sessionId);
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return readRecord(sessionId, false).thenApply(VersionedRecord::record);
    }

    /** A session record and the version it was read at. */
    private record VersionedRecord(SessionRecord record, int version) {
    }

    /**
     * Reads the record; NONODE is SESSION_NOT_FOUND only after a sync and a second read ({@code synced}: that sync came
     * before this read). Other ZooKeeper failures are translated.
     */
    private CompletableFuture<VersionedRecord> readRecord(String sessionId, boolean synced) {
        String path = CellPaths.session(sessionId);
        return zk.data(path).handle((ds, err) -> {
            if (err == null) {
                SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
                if (rec == null) {
                    throw WardenException.sessionNotFound(sessionId);
                }
                return CompletableFuture.completedFuture(new VersionedRecord(rec, ds.stat().getVersion()));
            }
            if (Zk.code(err) == Code.NONODE && !synced) {
                return zk.sync(path).thenCompose(v -> readRecord(sessionId, true));
            }
            if (Zk.code(err) == Code.NONODE) {
                throw WardenException.sessionNotFound(sessionId);
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /**
     * Records in the session's record (in its home cell: this manager's) that the session also lives in {@code cell}:
     * a read, then a compare-and-set at the version read, of the record with {@code cell} added to its
     * {@link SessionRecord#cells}; nothing is written when it lists {@code cell} already (so a call sent again after a
     * lost reply finds it done). A record that changed between the read and the write is read again, a few
     * times, then UNAVAILABLE; SESSION_NOT_FOUND when the session is gone.
     *
     * <p>The write leaves the record's owner as it was; it only moves the record's version. When this gateway tracks
     * the session (the record read named it), its tracking takes the new version and cells at once, so that its expiry
     * deletes at the version now current. When another gateway tracks it, that gateway's record watch fires and its
     * re-read takes the new version and cells ({@link Tracker#arm}); an expiry of its that meets the new version first
     * fails with BADVERSION, reads the record, finds it still that gateway's and tries again at the new version
     * ({@link SessionExpiry}). The session expires on time either way.
     *
     * <p>Continuations run on ZooKeeper's event thread; nothing blocks.
     */
    public CompletableFuture<Void> addCell(String sessionId, String cell) {
        try {
            validateSessionId(sessionId);
            if (cell == null || cell.isEmpty()) {
                throw WardenException.invalid("cell", "must name a cell");
            }
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return addCell(sessionId, cell, 0);
    }

    private CompletableFuture<Void> addCell(String sessionId, String cell, int attempt) {
        if (attempt >= MAX_ADD_CELL_ATTEMPTS) {
            return CompletableFuture.failedFuture(WardenException.unavailable("session " + sessionId
                    + " kept changing while cell " + cell + " was added to its record; try again", null));
        }
        String path = CellPaths.session(sessionId);
        return readRecord(sessionId, false).thenCompose(read -> {
            SessionRecord rec = read.record();
            if (rec.cells().contains(cell)) {
                if (owner.owns(rec)) {
                    tracker.sawOwnRecord(sessionId, rec, read.version()); // in case its watch has not re-read it yet
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            SessionRecord written = rec.withCell(cell);
            return zk.setData(path, Json.write(written), read.version()).thenAccept(stat -> {
                // The write succeeded at the version read, so the record was rec until then: when rec names this
                // gateway run, no takeover came between, and the new version is this gateway's to expire at.
                if (owner.owns(rec)) {
                    tracker.sawOwnRecord(sessionId, written, stat.getVersion());
                }
                log.info("session {} of client {} now also lives in cell {} (its cells: {})", sessionId,
                        rec.clientId(), cell, written.cells());
            });
        }).handle((v, err) -> {
            if (err == null) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            Code code = Zk.code(err);
            if (code == Code.BADVERSION) {
                // Changed since the read (a takeover, a TTL change, another cell added), or our own write applied
                // with its reply lost and sent again by Curator: read again, which finds the cell listed then.
                return addCell(sessionId, cell, attempt + 1);
            }
            if (code == Code.NONODE) {
                throw WardenException.sessionNotFound(sessionId); // closed or expired between the read and the write
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /**
     * Makes the session, opened in its home cell ({@code home}: its record there), live in this cell too: creates its
     * record here with the same client id, TTL, lock-delay, principal and address, no cells, owned by this gateway run,
     * and tracks it as {@link #open} does (a fresh TTL, no + B: no gateway can have acknowledged a keepalive for it in
     * this cell before), counted against the same quotas. Returns the TTL. The TTL is the home record's as it is, not
     * clamped to this cell's range: the session's records in all its cells have one TTL.
     *
     * <p>When the record exists already (the session joined this cell through another gateway, or this create was
     * applied and its reply lost), or this gateway tracks the session already, this is a {@link #keepalive} (which
     * takes the session over when this gateway does not track it). The caller, not this manager, records the cell in
     * the home record ({@link #addCell} on the home cell's manager), and before it: a session whose home record does not
     * list this cell would not be kept alive here.
     *
     * <p>Continuations run on ZooKeeper's event thread; nothing blocks.
     */
    public CompletableFuture<Long> join(String sessionId, SessionRecord home) {
        try {
            validateSessionId(sessionId);
            if (home == null) {
                throw WardenException.invalid("session", "the home record of session " + sessionId + " is missing");
            }
            if (home.ttlMs() <= 0) {
                throw WardenException.invalid("ttl_ms", "must be positive, got " + home.ttlMs());
            }
            if (home.lockDelayMs() < 0 || home.lockDelayMs() > MAX_LOCK_DELAY_MS) {
                throw WardenException.invalid("lock_delay_ms", "must be between 0 and " + MAX_LOCK_DELAY_MS + ", got "
                        + home.lockDelayMs());
            }
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        TrackedSession tracked = tracker.get(sessionId);
        if (tracked != null && !tracked.gone) {
            return keepalive(sessionId, null, 0);
        }
        String quotaOwner = SessionQuotas.owner(home);
        try {
            tracker.quotas().reserve(quotaOwner); // given back below if the record is not made here
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        SessionRecord record = new SessionRecord(home.clientId(), home.ttlMs(), home.lockDelayMs(), owner.gatewayId(),
                owner.incarnation(), home.principal(), home.address());
        String path = CellPaths.session(sessionId);
        return zk.create(path, Json.write(record), CreateMode.PERSISTENT, false).handle((created, err) -> {
            if (err == null) {
                // Created at version 0; a write by anyone since is heard by the record watch that track() arms.
                tracker.track(sessionId, record, 0, 0, true);
                listener.sessionOpened(sessionId, record.clientId(), record.principal(), quotaOwner);
                log.info("session {} of client {} joined this cell (ttl {} ms, lock-delay {} ms)", sessionId,
                        record.clientId(), record.ttlMs(), record.lockDelayMs());
                return CompletableFuture.completedFuture(record.ttlMs());
            }
            tracker.quotas().release(quotaOwner);
            if (Zk.code(err) == Code.NODEEXISTS) {
                return keepalive(sessionId, null, 0);
            }
            if (Zk.code(err) == Code.NONODE) {
                // The cell lacks its session shards (its ensemble lost its data): not the caller's fault, and not ours.
                throw io.warden.service.api.WardenException.unavailable("this cell has no " + CellPaths.SESSIONS
                        + " shard for the session (its ensemble lost its layout); try again shortly", null);
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /** The tracker of this gateway's sessions (tests). */
    Tracker tracker() {
        return tracker;
    }

    /**
     * Makes this gateway track the session (compare-and-set of the record's owner) with TTL + B: the gateway that
     * tracked it may have acknowledged a keepalive up to B before it could no longer vouch (see {@link Vouching}).
     */
    private CompletableFuture<Long> takeOver(String sessionId, Long newTtlMs, int attempt) {
        return takeOver(sessionId, newTtlMs, attempt, false);
    }

    /** {@code synced}: a sync came before this attempt's read, so a NONODE now means the session is gone. */
    private CompletableFuture<Long> takeOver(String sessionId, Long newTtlMs, int attempt, boolean synced) {
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
            SessionRecord mine = rec.withOwner(owner.gatewayId(), owner.incarnation());
            if (newTtlMs != null) {
                mine = mine.withTtl(newTtlMs);
            }
            SessionRecord written = mine;
            String quotaOwner = SessionQuotas.owner(rec);
            // The gateway-wide and per-owner limits hold for takeovers too; the place is reserved before the write, so
            // concurrent takeovers cannot overshoot them, and given back if it fails.
            tracker.quotas().reserve(quotaOwner);
            long sent = clock.read();
            return zk.setData(path, Json.write(mine), ds.stat().getVersion()).handle((stat, err) -> {
                if (err != null) {
                    tracker.quotas().release(quotaOwner);
                    throw err instanceof java.util.concurrent.CompletionException c ? c
                            : new java.util.concurrent.CompletionException(err);
                }
                tracker.vouching().heard(sent);
                if (!owner.owns(rec)) {
                    log.info("took over session {} of client {} from gateway {}#{} with a fresh TTL of {} ms + B",
                            sessionId, rec.clientId(), rec.gateway(), rec.incarnation(), written.ttlMs());
                }
                tracker.track(sessionId, written, stat.getVersion(), tracker.boundNanos(), true);
                return written.ttlMs();
            });
        }).handle((ttl, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(ttl);
            }
            Code code = Zk.code(err);
            if (code == Code.NONODE && !synced) {
                // This gateway's server may be a follower that has not applied the session's creation yet (it was
                // opened through another server a moment ago): "not found" only after a sync.
                return zk.sync(path).thenCompose(v -> takeOver(sessionId, newTtlMs, attempt, true));
            }
            if (code == Code.NONODE) {
                throw WardenException.sessionNotFound(sessionId);
            }
            if (code == Code.BADVERSION && attempt < 5) {
                return takeOver(sessionId, newTtlMs, attempt + 1, synced);
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
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
        CompletableFuture<Long> tracking = tracker.tracks(sessionId) ? CompletableFuture.completedFuture(0L)
                : takeOver(sessionId, null, 0);
        return tracking.thenCompose(ttl -> {
            TrackedSession t = tracker.get(sessionId);
            if (t == null) {
                return CompletableFuture.completedFuture(true); // ended between the takeover and now
            }
            return tracker.expireNow(t);
        });
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
        // synced: what it reads (the session, its requests) must be at least as new as the call, whichever server this
        // gateway reads from (a follower behind the leader may not have the session opened elsewhere a moment ago)
        return zk.sync(path).thenCompose(v -> zk.exists(path)).thenCompose(stat -> {
            if (stat == null) {
                throw WardenException.sessionNotFound(sessionId);
            }
            return requests.load(sessionId).thenCompose(reqs -> {
                List<CuratorOp> ops = new ArrayList<>();
                List<String> released = new ArrayList<>();
                List<String> cancelled = new ArrayList<>();
                try {
                    java.util.Set<String> recordsDeleted = new java.util.HashSet<>();
                    for (SessionRequests.Request r : reqs) {
                        if (r.node() != null) {
                            ops.add(zk.ops().delete().forPath(r.nodePath()));
                            (r.holds() ? released : cancelled).add(r.name().toString());
                        }
                        if (recordsDeleted.add(r.uuid())) { // a multi-lock request's one record, for all its entries
                            ops.add(zk.ops().delete().forPath(CellPaths.sessionRequest(sessionId, r.uuid())));
                        }
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
        tracker.untrack(sessionId, true);
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
                        holds.add(new SessionView.Hold(r.name().toString(), r.mode(), tokens.of(r.czxid())));
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

    /**
     * The principal that owns the session (empty for one opened in open mode), for the HTTP layer's check of who may
     * use it (docs/api.md, authorization). A session tracked here costs no read; another costs one read of its record,
     * and a sync before "not found" (this gateway's server may lag the one the session was opened through).
     */
    public CompletableFuture<java.util.Optional<String>> principalOf(String sessionId) {
        try {
            validateSessionId(sessionId);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        TrackedSession t = tracker.get(sessionId);
        if (t != null && !t.gone) {
            return CompletableFuture.completedFuture(java.util.Optional.ofNullable(t.principal));
        }
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return principalOf(sessionId, false);
    }

    private CompletableFuture<java.util.Optional<String>> principalOf(String sessionId, boolean synced) {
        return readRecord(sessionId, synced).thenApply(read -> java.util.Optional.ofNullable(read.record().principal()));
    }

    /** TTL left as this gateway measures it; a session tracked elsewhere reports its full TTL. */
    private long remainingMs(String sessionId, long ttlMs) {
        Long left = tracker.remainingMs(sessionId);
        return left == null ? ttlMs : left;
    }

    // ------------------------------------------------------------------ adoption

    /**
     * Adopts the sessions and lock-delays whose gateway is not among {@code liveGateways} (the children of
     * {@code /gateways}, read just before): each gets TTL + B here. Called by the elected leader when the set of
     * gateways changes, and periodically. Records are read {@code Adoption.CHUNK} at a time.
     */
    public CompletableFuture<AdoptionTally> adoptOrphans(Set<String> liveGateways) {
        if (!zk.connected()) {
            return CompletableFuture.completedFuture(new AdoptionTally(0, 1));
        }
        return adoption.orphansOf(Set.copyOf(liveGateways));
    }

    /** Tracks, with TTL + B, every session and lock-delay of an earlier run of this gateway id. */
    public CompletableFuture<AdoptionTally> adoptOwn() {
        return adoption.ownEarlierRuns();
    }

    /** The TTL left, in ms, of every session this gateway tracks, as it measures it now. */
    public Map<String, Long> trackedRemainingMs() {
        return tracker.remainingMs();
    }

    public int trackedCount() {
        return tracker.size();
    }

    public boolean tracks(String sessionId) {
        return tracker.tracks(sessionId);
    }

    /** Stops all timers (the gateway is going away; another gateway adopts the sessions). */
    public void stop() {
        tracker.stop();
    }
}
