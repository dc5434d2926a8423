package io.warden.service.session;

import io.warden.service.api.WardenException;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The sessions whose TTL this gateway tracks, and the two rules that make expiry late, never early (guarantee 3 of
 * docs/guarantees.md):
 * <ol>
 *   <li><b>Acknowledge only while vouched.</b> {@link #acknowledge} resets a deadline only when {@link Vouching} is
 *   fresh and the session's record watch is set in the current ZooKeeper session ({@link TrackedSession#armedIn}), or
 *   right after a write of the record that succeeded at the version this gateway holds. Anything else is a retry, then
 *   a 503.</li>
 *   <li><b>Acknowledge and expire exclude each other.</b> Both decide under the session's monitor: an expiry starts
 *   only with the deadline passed and no acknowledgement can come while it runs ({@link TrackedSession#expiring}); a
 *   keepalive that meets it waits for its outcome.</li>
 * </ol>
 * The record watch tells this gateway of a takeover, a close or an expiry elsewhere. It is re-armed after every
 * notification and every failure (retried every 500 ms until it works), and after a ZooKeeper session loss every
 * tracked record is read again; until then the session is not vouched for. A change that leaves the record this
 * gateway's (another gateway added a cell to it) is taken in by that re-read: its version, for the expiry, and its
 * cells; an expiry that meets the new version before the re-read does reads it itself ({@link SessionExpiry}:
 * BADVERSION with the record still ours).
 *
 * <p>Concurrency: {@link #tracked} is a concurrent map (bounded by {@code max-sessions-per-gateway}, enforced by the
 * callers that add to it); each {@link TrackedSession} guards its own state. Work runs on ZooKeeper's event thread, the
 * clock's thread and request threads, never blocks, and does no I/O under a monitor.
 */
final class Tracker {
    private static final Logger log = LoggerFactory.getLogger(Tracker.class);
    static final Duration RETRY_DELAY = Duration.ofMillis(500);

    /** The outcome of an acknowledgement: the TTL granted, or null when the caller must look again (state moved). */
    record Ack(Long ttlMs) {
        static final Ack RETRY = new Ack(null);
    }

    private final Zk zk;
    private final Clock clock;
    private final Owner owner;
    private final SessionListener listener;
    private final ExpiryRule expiryRule;
    private final Vouching vouching;
    private final SessionExpiry expiry;
    private final Map<String, TrackedSession> tracked = new ConcurrentHashMap<>();

    /** The sessions counted against the gateway's and each owner's limits: every tracked one, and reserved places. */
    private final SessionQuotas quotas;

    Tracker(Zk zk, Clock clock, Owner owner, SessionListener listener, ExpiryRule expiryRule, Duration bound, SessionExpiry.Factory expiries,
            SessionQuotas quotas) {
        this.quotas = quotas;
        this.zk = zk;
        this.clock = clock;
        this.owner = owner;
        this.listener = listener;
        this.expiryRule = expiryRule;
        this.vouching = new Vouching(zk, clock, bound, this::freshTtlForAll);
        this.expiry = expiries.create(this);
        zk.client().getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.RECONNECTED) {
                rearmStale(); // after a ZooKeeper session loss every watch is gone; after a short disconnection none is
            }
        });
    }

    void start() {
        vouching.start();
    }

    long boundNanos() {
        return vouching.boundNanos();
    }

    Vouching vouching() {
        return vouching;
    }

    /** The expiry of this tracker's sessions (tests). */
    SessionExpiry expiry() {
        return expiry;
    }

    TrackedSession get(String id) {
        return tracked.get(id);
    }

    SessionQuotas quotas() {
        return quotas;
    }

    int size() {
        return tracked.size();
    }

    // ------------------------------------------------------------------ tracking

    /**
     * Tracks the session (or refreshes its tracking) with a deadline of TTL + {@code extraNanos} from now, at least, and
     * arms its record watch; the tracking takes the record's version and the other cells it lists. {@code extraNanos}
     * is B for a takeover or an adoption (see {@link Vouching}), 0 for a session opened here.
     */
    TrackedSession track(String id, SessionRecord rec, int version, long extraNanos) {
        return track(id, rec, version, extraNanos, false);
    }

    /**
     * As {@link #track(String, SessionRecord, int, long)}; {@code reserved}: the caller took a place in
     * {@link #quotas()} for it (an open or takeover), which the session now holds, or gives back when it was tracked
     * already. Without a reservation (adoption) the session is counted without a limit.
     */
    TrackedSession track(String id, SessionRecord rec, int version, long extraNanos, boolean reserved) {
        String quotaOwner = SessionQuotas.owner(rec);
        boolean[] created = new boolean[1];
        TrackedSession[] replaced = new TrackedSession[1];
        TrackedSession t = tracked.compute(id, (k, cur) -> {
            if (cur == null || cur.gone) {
                created[0] = true;
                replaced[0] = cur; // gone but not yet removed by its untrack, whose remove now misses: released here
                return new TrackedSession(k, rec.clientId(), rec.principal(), quotaOwner, rec.lockDelayMs(), this::watcherFor);
            }
            return cur;
        });
        if (replaced[0] != null) {
            quotas.release(replaced[0].quotaOwner);
        }
        if (created[0] && !reserved) {
            quotas.add(quotaOwner);
        } else if (!created[0] && reserved) {
            quotas.release(quotaOwner);
        }
        long now = clock.read();
        synchronized (t) {
            t.ttlMs = rec.ttlMs();
            seen(t, rec, version);
            t.deadline = Math.max(t.deadline, now + ttlNanos(rec.ttlMs()) + extraNanos);
            checkBy(t, t.deadline, now);
        }
        arm(t);
        return t;
    }

    /**
     * This gateway saw {@code rec}, a record that names this gateway run, at {@code version}: the newest version is
     * kept (the expiry deletes at it), and the cells {@code rec} lists when it is at least as new as any seen before
     * (never an older record's). Under {@code t}'s monitor.
     */
    private static void seen(TrackedSession t, SessionRecord rec, int version) {
        if (version >= t.version) {
            t.cells = rec.cells();
        }
        t.version = Math.max(t.version, version);
    }

    /**
     * This gateway read {@code rec} at {@code version}, or wrote it, making {@code version}, over a version it had read
     * that named this gateway run (so no takeover came between: the write would have failed); {@code rec} names this
     * gateway run. The session's tracking here, if any, takes the version and cells as {@link #arm}'s re-read would,
     * so that its expiry deletes at the version now current and its keepalives go to the cells the record lists.
     * Nothing when the session is not tracked here. Any thread; no I/O.
     */
    void sawOwnRecord(String id, SessionRecord rec, int version) {
        TrackedSession t = tracked.get(id);
        if (t == null) {
            return;
        }
        synchronized (t) {
            if (!t.gone) {
                seen(t, rec, version);
            }
        }
    }

    void untrack(TrackedSession t, boolean ended) {
        synchronized (t) {
            if (t.gone) {
                return;
            }
            t.gone = true;
            if (t.timer != null) {
                t.timer.cancel();
                t.timer = null;
            }
        }
        if (tracked.remove(t.id, t)) {
            quotas.release(t.quotaOwner);
        }
        if (ended) {
            listener.sessionEnded(t.id);
        }
    }

    void untrack(String id, boolean ended) {
        TrackedSession t = tracked.get(id);
        if (t != null) {
            untrack(t, ended);
        } else if (ended) {
            listener.sessionEnded(id);
        }
    }

    private Watcher watcherFor(TrackedSession t) {
        return event -> {
            log.debug("record watch of session {}: {}", t.id, event);
            switch (event.getType()) {
                case None -> {
                    // connection state: the listeners handle it
                }
                case NodeDeleted -> untrack(t, true);
                default -> {
                    synchronized (t) {
                        t.armedIn = 0; // fired: until re-read, a takeover would go unheard
                    }
                    arm(t);
                }
            }
        };
    }

    /**
     * Reads the record and sets its watch; untracks the session when the record is gone or names another gateway run.
     * Completes when that is done (never exceptionally); a failure schedules another attempt.
     */
    CompletableFuture<Void> arm(TrackedSession t) {
        long zkSession = zk.sessionId();
        log.debug("arming the record watch of session {} in ZooKeeper session {}", t.id, Long.toHexString(zkSession));
        return zk.dataWatched(CellPaths.session(t.id), t.watcher).handle((ds, err) -> {
            if (t.gone) {
                return null;
            }
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    untrack(t, true);
                } else {
                    log.debug("could not read the record of session {} to watch it: {}; trying again", t.id, Zk.unwrap(err).toString());
                    scheduleRearm(t);
                }
                return null;
            }
            SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
            if (!owner.owns(rec)) {
                log.debug("session {} is now tracked by gateway {}", t.id, rec == null ? null : rec.gateway() + "#" + rec.incarnation());
                untrack(t, false);
                return null;
            }
            boolean sameZkSession = zkSession != 0 && zk.sessionId() == zkSession;
            synchronized (t) {
                // A version written elsewhere (another gateway added a cell to the record) is the one to expire at,
                // and the cells it lists are where this session's keepalives must go from now on.
                seen(t, rec, ds.stat().getVersion());
                if (sameZkSession) {
                    t.armedIn = zkSession;
                }
            }
            if (!sameZkSession) {
                scheduleRearm(t); // set in a ZooKeeper session that ended meanwhile
            }
            return null;
        });
    }

    private void scheduleRearm(TrackedSession t) {
        synchronized (t) {
            if (t.gone || t.rearmScheduled) {
                return;
            }
            t.rearmScheduled = true;
        }
        clock.schedule(RETRY_DELAY, () -> {
            synchronized (t) {
                t.rearmScheduled = false;
            }
            if (!t.gone && !armed(t)) {
                arm(t);
            }
        });
    }

    private boolean armed(TrackedSession t) {
        long current = zk.sessionId();
        synchronized (t) {
            return current != 0 && t.armedIn == current;
        }
    }

    /** Re-reads every record whose watch is not set in the current ZooKeeper session. */
    private void rearmStale() {
        int n = 0;
        for (TrackedSession t : tracked.values()) {
            if (!armed(t)) {
                arm(t);
                n++;
            }
        }
        if (n > 0) {
            log.info("gateway {} re-reads {} session records whose watches were lost with its ZooKeeper session", owner, n);
        }
    }

    /** This gateway can vouch again after refusing: every session it tracks gets a fresh TTL from now (late, never early). */
    private void freshTtlForAll() {
        long now = clock.read();
        for (TrackedSession t : tracked.values()) {
            synchronized (t) {
                if (!t.gone && t.expiring == null) {
                    t.deadline = Math.max(t.deadline, now + ttlNanos(t.ttlMs));
                }
            }
        }
    }

    // ------------------------------------------------------------------ acknowledging

    /**
     * A keepalive for a session tracked here: resets its deadline, and with {@code newTtlMs} (already clamped) changes
     * its TTL. Completes with {@link Ack#RETRY} when the session moved meanwhile (untracked, or its watch just fired);
     * fails with UNAVAILABLE when this gateway cannot vouch, SESSION_NOT_FOUND when an expiry removed it.
     */
    CompletableFuture<Ack> acknowledge(TrackedSession t, Long newTtlMs) {
        return vouching.awaitFresh()
                .thenCompose(v -> armed(t) ? CompletableFuture.completedFuture(null) : arm(t))
                .thenCompose(v -> {
                    long now = clock.read();
                    boolean fresh = vouching.freshAt(now); // before armedIn: see Vouching.freshAt
                    long zkSession = zk.sessionId();
                    CompletableFuture<Boolean> expiring;
                    synchronized (t) {
                        if (t.gone) {
                            return CompletableFuture.completedFuture(Ack.RETRY);
                        }
                        expiring = t.expiring;
                        if (expiring == null) {
                            if (!fresh || zkSession == 0 || t.armedIn != zkSession) {
                                return CompletableFuture.completedFuture(Ack.RETRY);
                            }
                            // Accepted now. A TTL change counts as a heartbeat at once; its new TTL applies once written.
                            t.deadline = now + ttlNanos(t.ttlMs); // earlier than before after a takeover's + B
                            checkBy(t, t.deadline, now);
                            if (newTtlMs == null || newTtlMs == t.ttlMs) {
                                return CompletableFuture.completedFuture(new Ack(t.ttlMs));
                            }
                        }
                    }
                    if (expiring != null) {
                        return afterExpiry(t, expiring);
                    }
                    return changeTtl(t, newTtlMs);
                });
    }

    private static CompletableFuture<Ack> afterExpiry(TrackedSession t, CompletableFuture<Boolean> expiring) {
        return expiring.thenApply(expired -> {
            if (expired) {
                throw WardenException.sessionNotFound(t.id);
            }
            return Ack.RETRY;
        });
    }

    /**
     * Writes the new TTL into the record at the version read, and acknowledges with it: the write's success vouches as
     * of its send time (a takeover elsewhere would have changed the version), so it needs no watch.
     */
    private CompletableFuture<Ack> changeTtl(TrackedSession t, long ttl) {
        String path = CellPaths.session(t.id);
        return zk.data(path).thenCompose(ds -> {
            SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
            if (!owner.owns(rec)) {
                untrack(t, false);
                return CompletableFuture.completedFuture(Ack.RETRY);
            }
            long sent = clock.read();
            return zk.setData(path, Json.write(rec.withTtl(ttl)), ds.stat().getVersion()).thenCompose(stat -> {
                vouching.heard(sent);
                long now = clock.read();
                CompletableFuture<Boolean> expiring;
                synchronized (t) {
                    if (t.gone) {
                        return CompletableFuture.completedFuture(Ack.RETRY);
                    }
                    expiring = t.expiring;
                    if (expiring == null) {
                        t.ttlMs = ttl;
                        seen(t, rec, stat.getVersion()); // rec's cells: withTtl kept them
                        if (now - sent > vouching.boundNanos()) {
                            return CompletableFuture.completedFuture(Ack.RETRY); // written, but too long ago to vouch
                        }
                        t.deadline = now + ttlNanos(ttl); // earlier than before when the TTL was shortened
                        checkBy(t, t.deadline, now);
                        return CompletableFuture.completedFuture(new Ack(ttl));
                    }
                }
                return afterExpiry(t, expiring);
            });
        }).handle((ack, err) -> {
            if (err == null) {
                return ack;
            }
            Code code = Zk.code(err);
            if (code == Code.NONODE) {
                untrack(t, true);
                throw WardenException.sessionNotFound(t.id);
            }
            if (code == Code.BADVERSION) {
                return Ack.RETRY; // the record changed under us: look again
            }
            throw Zk.translate(err);
        });
    }

    /** How long after a keepalive a TTL of {@code ttlMs} runs out: the whole TTL ({@link ExpiryRule#CONTRACT}). */
    private long ttlNanos(long ttlMs) {
        return expiryRule.nanosAfterKeepalive(ttlMs);
    }

    // ------------------------------------------------------------------ expiry

    /**
     * Makes sure the deadline check runs by {@code at} (clock ns): keeps a check scheduled no later than that, else
     * replaces it. A deadline that moves later needs nothing (the check finds it not passed and schedules itself
     * again); one that moves earlier (a shortened TTL, the first keepalive after a takeover's TTL + B) needs the
     * earlier check, or the session would outlive its TTL by the difference. Under {@code t}'s monitor.
     */
    private void checkBy(TrackedSession t, long at, long now) {
        if (t.gone || t.expiring != null || (t.timer != null && t.timerAt <= at)) {
            return;
        }
        if (t.timer != null) {
            t.timer.cancel();
        }
        long generation = ++t.timerGeneration; // a replaced check that runs all the same does nothing
        t.timerAt = at;
        t.timer = clock.schedule(Duration.ofNanos(Math.max(0, at - now)), () -> checkDeadline(t, generation));
    }

    private void checkDeadline(TrackedSession t, long generation) {
        long now = clock.read();
        synchronized (t) {
            if (generation != t.timerGeneration) {
                return; // replaced by an earlier check
            }
            t.timer = null;
            if (t.gone || t.expiring != null) {
                return;
            }
            if (now < t.deadline) {
                checkBy(t, t.deadline, now);
                return;
            }
            if (!zk.connected() || vouching.refusing()) {
                // No expiry for keepalives this gateway refused: it gives a fresh TTL when it can vouch again.
                checkBy(t, now + RETRY_DELAY.toNanos(), now);
                return;
            }
            t.expiring = new CompletableFuture<>();
        }
        expiry.run(t);
    }

    /**
     * Starts the expiry now, as if the TTL had run out (an admin action); completes as {@link TrackedSession#expiring}.
     */
    CompletableFuture<Boolean> expireNow(TrackedSession t) {
        CompletableFuture<Boolean> result;
        boolean start = false;
        synchronized (t) {
            if (t.gone) {
                return CompletableFuture.completedFuture(true);
            }
            if (t.expiring == null) {
                if (t.timer != null) {
                    t.timer.cancel();
                    t.timer = null;
                    t.timerGeneration++;
                }
                t.deadline = clock.read();
                t.expiring = new CompletableFuture<>();
                start = true;
            }
            result = t.expiring;
        }
        if (start) {
            log.info("expiring session {} of client {} now, on an admin's request", t.id, t.clientId);
            expiry.run(t);
        }
        return result;
    }

    /** The expiry of {@code t} ended: {@code expired}, or not (then it is tried again unless the session moved). */
    void expiryDone(TrackedSession t, boolean expired) {
        CompletableFuture<Boolean> f;
        synchronized (t) {
            f = t.expiring;
            t.expiring = null;
            if (!expired && !t.gone && t.timer == null) {
                long now = clock.read();
                checkBy(t, now + RETRY_DELAY.toNanos(), now);
            }
        }
        if (f != null) {
            f.complete(expired);
        }
    }

    // ------------------------------------------------------------------ views

    /** TTL left as this gateway measures it, in ms; null when it does not track the session. */
    Long remainingMs(String id) {
        TrackedSession t = tracked.get(id);
        if (t == null) {
            return null;
        }
        synchronized (t) {
            return Math.max(0, Duration.ofNanos(t.deadline - clock.read()).toMillis());
        }
    }

    Map<String, Long> remainingMs() {
        Map<String, Long> out = new HashMap<>();
        long now = clock.read();
        for (TrackedSession t : tracked.values()) {
            synchronized (t) {
                out.put(t.id, Math.max(0, Duration.ofNanos(t.deadline - now).toMillis()));
            }
        }
        return out;
    }

    boolean tracks(String id) {
        return tracked.containsKey(id);
    }

    void stop() {
        vouching.stop();
        for (TrackedSession t : List.copyOf(tracked.values())) {
            untrack(t, false);
        }
    }
}
