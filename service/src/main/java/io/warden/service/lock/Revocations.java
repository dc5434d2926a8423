package io.warden.service.lock;

import io.warden.service.api.LockName;
import io.warden.service.api.RevokeResult;
import io.warden.service.api.WardenException;
import io.warden.service.queue.QueueNodeData;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.RevocationRecord;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * Graded revocation ({@code POST /v1/revoke}; docs/decisions/0011): a holder is asked to let go, and force-released if it
 * still holds {@code grace_ms} later.
 *
 * <p><b>The record.</b> A revoke is one {@code multi}: a {@code setData} of the hold's queue node, conditional on the
 * version just read (its {@link QueueNodeData} again, with a {@link QueueNodeData.RevokeNote}; a plain Curator client's
 * node gets Curator's {@code __REVOKE__}, what its {@code Revoker} writes), and the create of
 * {@code /revocations/r-{token}-{hash}} ({@link RevocationRecord}). The data change is what every gateway's watch mirror
 * turns into a REVOKE_REQUESTED event; the record is what the grace timers are run from. Both survive any gateway.
 *
 * <p><b>The grace timer.</b> The gateway that took the request runs it: {@code grace_ms} from the reply of its write
 * on its monotonic clock (never before the request was committed). Every gateway lists {@code /revocations} every
 * {@code pollEvery} and keeps the records it finds, each with a deadline of {@code grace_ms} from when it first saw
 * it (so also never early); past that deadline it finishes the revocation itself only when the gateway that took the
 * request is no longer in {@code /gateways} (dead, or cut off from ZooKeeper for longer than its session timeout). A
 * gateway that restarts with the same id finds its own records and runs them again from its start.
 *
 * <p><b>Finishing</b> ({@link #finish}): the hold's node is read; gone, the holder let go (or its session ended); there,
 * it is released by its token through {@code release} — the release of guarantee 4 in docs/guarantees.md, which never
 * touches another holder, and to which a hold released meanwhile is a no-op; no lock-delay applies — or, for a session
 * that expired and whose hold is kept by its lock-delay, the node itself is deleted (its path is that hold's and no
 * other's). Then the record is deleted and the outcome audited. Two gateways finishing the same record (a taker and an
 * owner that comes back) both find the same hold: one releases it, the other finds it gone; at worst the audit log has
 * two entries.
 *
 * <p>Concurrency: called from any thread; continuations run on Curator's threads, timers on the clock's. {@code pending}
 * is a concurrent map of the records this gateway knows, by record path, bounded by {@link #maxPending} (a revoke is
 * refused with 429 when {@code /revocations} has that many; the poll adds no more than that); a {@link Pending}'s timer
 * and flags are guarded by the instance. {@code liveGateways} is a volatile reference to an immutable set.
 */
public final class Revocations implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Revocations.class);
    /** What Curator's {@code Revoker.attemptRevoke} writes on a lock node ({@code RevocationSpec}'s message). */
    static final byte[] CURATOR_REVOKE = "__REVOKE__".getBytes(StandardCharsets.UTF_8);
    /** Pending revocations a cell may have: each costs a record in ZooKeeper and an entry here on every gateway. */
    public static final int DEFAULT_MAX_PENDING = 10_000;
    public static final Duration DEFAULT_POLL = Duration.ofSeconds(2);
    private static final int MAX_ATTEMPTS = 3;

    /** Where each step is written down: the cell's audit log. */
    @FunctionalInterface
    public interface Audit {
        void record(String action, String target, String reason, String by, String outcome);
    }

    /** A release by token, as a client's ({@code Warden#release}): false when the token no longer holds. */
    @FunctionalInterface
    public interface Release {
        CompletableFuture<Boolean> release(String sessionId, LockName name, long token);
    }

    private final Zk zk;
    private final Clock clock;
    private final LockReader reader;
    private final String gatewayId;
    private final Duration pollEvery;
    private final int maxPending;
    private final Audit audit;
    private final Release release;
    private final BooleanSupplier serving;
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();
    /** Counts {@link #track} calls: orders a listing against the records tracked before it was sent. */
    private final java.util.concurrent.atomic.AtomicLong tracked = new java.util.concurrent.atomic.AtomicLong();
    private volatile Set<String> liveGateways = Set.of();
    private volatile Clock.Cancellable pollTimer;
    private volatile boolean stopped;

    /**
     * @param serving whether this gateway may write to the cell now (a cell that went back is not written by timers)
     */
    public Revocations(Zk zk, Clock clock, LockReader reader, String gatewayId, Duration pollEvery, int maxPending,
                       Audit audit, Release release, BooleanSupplier serving) {
        this.zk = zk;
        this.clock = clock;
        this.reader = reader;
        this.gatewayId = gatewayId;
        this.pollEvery = pollEvery;
        this.maxPending = maxPending;
        this.audit = audit;
        this.release = release;
        this.serving = serving;
    }

    /** One pending revocation this gateway knows. Its mutable fields are guarded by the instance. */
    private static final class Pending {
        final String recordPath;
        final RevocationRecord record;
        final LockName name;
        final long deadlineNanos;
        /** When it was tracked, in {@link #tracked} order: a listing sent later than this reflects its record. */
        final long trackedSeq;
        Clock.Cancellable timer;
        boolean finishing;

        Pending(String recordPath, RevocationRecord record, long deadlineNanos, long trackedSeq) {
            this.trackedSeq = trackedSeq;
            this.recordPath = recordPath;
            this.record = record;
            this.name = LockName.parse("name", record.name());
            this.deadlineNanos = deadlineNanos;
        }

        String target() {
            return record.name() + " token " + record.token();
        }
    }

    // ------------------------------------------------------------------ the request

    /** See {@link io.warden.service.api.Warden#revoke}. */
    public CompletableFuture<RevokeResult> revoke(LockName name, long token, long graceMs, String reason, String by) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return revoke(name, token, graceMs, reason, by, 1);
    }

    private CompletableFuture<RevokeResult> revoke(LockName name, long token, long graceMs, String reason, String by,
                                                   int attempt) {
        return reader.holder(name, token).thenCompose(info -> {
            if (info == null) {
                throw notHeld(name, token);
            }
            return zk.data(info.path()).handle((ds, err) -> {
                if (err != null && Zk.code(err) == Code.NONODE) {
                    throw notHeld(name, token);
                }
                if (err != null) {
                    throw Zk.translate(err);
                }
                return ds;
            }).thenCompose(ds -> {
                RevokeResult earlier = earlier(name, token, info, ds);
                if (earlier != null) {
                    audit.record("revoke", name + " token " + token, reason, by,
                            "no-op: already asked to let go (grace " + earlier.graceMs() + " ms, reason \"" + earlier.reason() + "\")");
                    return CompletableFuture.completedFuture(earlier);
                }
                return zk.exists(CellPaths.REVOCATIONS).thenCompose(stat -> {
                    if (stat != null && stat.getNumChildren() >= maxPending) {
                        throw WardenException.exhausted("the cell has " + stat.getNumChildren() + " pending revocations, the "
                                + "most allowed; retry once some have ended");
                    }
                    return write(name, token, graceMs, reason, by, info, ds, attempt);
                });
            });
        });
    }

    /** The request already made for this hold, or null. */
    private static RevokeResult earlier(LockName name, long token, NodeInfo info, Zk.DataAndStat ds) {
        if (Arrays.equals(ds.data(), CURATOR_REVOKE)) {
            // Asked through Curator's Revoker (on a Warden node too, which then no longer says whose it is).
            return new RevokeResult(name.toString(), token, info.sessionId(), 0, "Curator Revoker", true,
                    ds.stat().getMzxid());
        }
        if (info.sessionId() == null) {
            return null;
        }
        QueueNodeData data = Json.readOrNull(ds.data(), QueueNodeData.class);
        if (data == null || data.revoke() == null) {
            return null;
        }
        return new RevokeResult(name.toString(), token, info.sessionId(), data.revoke().graceMs(), data.revoke().reason(),
                true, ds.stat().getMzxid());
    }

    private CompletableFuture<RevokeResult> write(LockName name, long token, long graceMs, String reason, String by,
                                                  NodeInfo info, Zk.DataAndStat ds, int attempt) {
        String recordPath = CellPaths.revocation(name, token);
        RevocationRecord record = new RevocationRecord(name.toString(), token, info.path(), info.sessionId(), graceMs,
                reason, by, gatewayId);
        byte[] nodeData;
        if (info.sessionId() == null) {
            nodeData = CURATOR_REVOKE;
        } else {
            QueueNodeData data = Json.readOrNull(ds.data(), QueueNodeData.class);
            if (data == null) {
                return CompletableFuture.failedFuture(notHeld(name, token));
            }
            nodeData = Json.write(data.withRevoke(new QueueNodeData.RevokeNote(graceMs, reason, by, gatewayId)));
        }
        List<CuratorOp> ops;
        try {
            ops = List.of(zk.ops().setData().withVersion(ds.stat().getVersion()).forPath(info.path(), nodeData),
                    zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(recordPath, Json.write(record)));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.multi(ops).handle((results, err) -> {
            if (err == null) {
                // Measured from the reply: the request is committed by now, so the grace is never cut short.
                track(recordPath, record, clock.read());
                long revision = results.get(0).getResultStat().getMzxid();
                log.info("revoke of {} token {} (session {}) by {}: grace {} ms, reason \"{}\"", name, token,
                        info.sessionId(), by, graceMs, reason);
                audit.record("revoke", name + " token " + token, reason, by, "done: asked to let go within " + graceMs
                        + " ms" + (info.sessionId() == null
                        ? " (a plain Curator client's hold, asked through Curator's Revoker: it is not force-released)"
                        : ", then force-released"));
                return CompletableFuture.completedFuture(new RevokeResult(name.toString(), token, info.sessionId(), graceMs,
                        reason, false, revision));
            }
            if (Zk.unwrap(err) instanceof Zk.MultiFailure && attempt < MAX_ATTEMPTS) {
                // The node changed (another revoke) or went (released) since it was read, or the record exists, or a
                // lost reply hides a first attempt that was applied: read again, which says which.
                return revoke(name, token, graceMs, reason, by, attempt + 1);
            }
            return CompletableFuture.<RevokeResult>failedFuture(Zk.translate(err));
        }).thenCompose(f -> f);
    }

    private static WardenException notHeld(LockName name, long token) {
        return WardenException.invalid("token", "token " + token + " does not hold " + name
                + " (released, expired, or not granted yet): nothing to revoke, nothing changed");
    }

    // ------------------------------------------------------------------ timers

    /** Starts listing {@code /revocations} every {@code pollEvery} (the first list now). */
    public void start() {
        poll();
    }

    /** Known pending revocations (tests, metrics). */
    public int pendingCount() {
        return pending.size();
    }

    /** A hold ended (RELEASED, EXPIRED or CANCELLED on the watch): a revocation this gateway runs is finished now. */
    public void holdEnded(String name, long token) {
        LockName parsed;
        try {
            parsed = LockName.parse("name", name);
        } catch (RuntimeException e) {
            return;
        }
        Pending p = pending.get(CellPaths.revocation(parsed, token));
        if (p != null && gatewayId.equals(p.record.gateway())) {
            finish(p);
        }
    }

    private void track(String recordPath, RevocationRecord record, long seenAtNanos) {
        if (stopped) {
            return;
        }
        Pending p = new Pending(recordPath, record, seenAtNanos + Duration.ofMillis(record.graceMs()).toNanos(),
                tracked.incrementAndGet());
        if (pending.putIfAbsent(recordPath, p) != null) {
            return;
        }
        synchronized (p) {
            p.timer = clock.schedule(Duration.ofMillis(record.graceMs()), () -> due(p));
        }
    }

    /** The deadline passed: finish it if this gateway runs it, or its gateway is gone. */
    private void due(Pending p) {
        if (stopped || pending.get(p.recordPath) != p) {
            return;
        }
        if (gatewayId.equals(p.record.gateway()) || !liveGateways.contains(p.record.gateway())) {
            finish(p);
        }
        // Else the gateway that took it finishes it; the poll looks again.
    }

    private void poll() {
        if (stopped) {
            return;
        }
        // Note on ordering: a revocation tracked before the listing is sent had its record created before (track
        // follows the create's reply), and ZooKeeper answers one connection's requests in order: the listing has it
        // unless it was deleted. One tracked after may be missing from the listing and is not forgotten.
        long listedAfter = tracked.get();
        // One read while nothing is pending (the usual case); the live gateways only when there is something to decide.
        zk.childrenOrEmpty(CellPaths.REVOCATIONS).thenCompose(children -> children.isEmpty() && pending.isEmpty()
                ? CompletableFuture.completedFuture(children)
                : zk.childrenOrEmpty(CellPaths.GATEWAYS).thenApply(gws -> {
                    liveGateways = Set.copyOf(gws);
                    return children;
                })).thenApply(children -> {
            Set<String> present = new HashSet<>(children.size() * 2);
            for (String child : children) {
                present.add(CellPaths.REVOCATIONS + "/" + child);
            }
            for (Pending p : pending.values()) {
                if (!present.contains(p.recordPath)) {
                    if (p.trackedSeq <= listedAfter) {
                        forget(p); // finished by another gateway
                    }
                } else if (clock.read() - p.deadlineNanos >= 0) {
                    due(p);
                }
            }
            for (String path : present) {
                if (pending.size() >= maxPending) {
                    break; // the rest when some have ended
                }
                if (!pending.containsKey(path)) {
                    long seen = clock.read();
                    zk.data(path).thenAccept(ds -> {
                        RevocationRecord r = Json.readOrNull(ds.data(), RevocationRecord.class);
                        if (r != null && r.name() != null) {
                            track(path, r, seen);
                        }
                    }).exceptionally(err -> null); // gone meanwhile, or the next poll reads it
                }
            }
            return null;
        }).whenComplete((v, err) -> {
            if (err != null) {
                log.debug("could not list the pending revocations: {}", Zk.unwrap(err).toString());
            }
            if (!stopped) {
                pollTimer = clock.schedule(pollEvery, this::poll);
            }
        });
    }

    private void forget(Pending p) {
        pending.remove(p.recordPath, p);
        synchronized (p) {
            if (p.timer != null) {
                p.timer.cancel();
                p.timer = null;
            }
        }
    }

    // ------------------------------------------------------------------ finishing

    private void finish(Pending p) {
        synchronized (p) {
            if (p.finishing || stopped) {
                return;
            }
            p.finishing = true;
        }
        if (!serving.getAsBoolean()) {
            retryLater(p, "the cell is not served");
            return;
        }
        RevocationRecord r = p.record;
        zk.data(r.node()).handle((ds, err) -> {
            if (err != null && Zk.code(err) == Code.NONODE) {
                return CompletableFuture.completedFuture("done: the holder let go before it was forced");
            }
            if (err != null) {
                throw Zk.translate(err);
            }
            if (r.sessionId() == null) {
                return CompletableFuture.completedFuture("no-op: a plain Curator client's hold is not force-released "
                        + "(end that client's ZooKeeper session to take it)");
            }
            return forceRelease(p);
        }).thenCompose(f -> f).thenCompose(outcome -> zk.delete(p.recordPath, -1).handle((v, err) -> {
            if (err != null && Zk.code(err) != Code.NONODE) {
                throw Zk.translate(err);
            }
            return outcome;
        })).whenComplete((outcome, err) -> {
            if (err != null) {
                retryLater(p, Zk.unwrap(err).toString());
                return;
            }
            forget(p);
            log.info("revocation of {} token {} finished: {}", r.name(), r.token(), outcome);
            audit.record("revoke-deadline", p.target(), r.reason(), r.by(), outcome);
        });
    }

    /** Releases the hold by its token; a session kept only by its lock-delay loses the node itself. */
    private CompletableFuture<String> forceRelease(Pending p) {
        RevocationRecord r = p.record;
        return release.release(r.sessionId(), p.name, r.token()).handle((released, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(released
                        ? "done: force-released after " + r.graceMs() + " ms (session " + r.sessionId() + ")"
                        : "done: the holder let go before it was forced");
            }
            if (Zk.unwrap(err) instanceof WardenException we && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
                // The session expired and its hold is kept for its lock-delay: the node is this hold's alone.
                return zk.delete(r.node(), -1).handle((v, e2) -> {
                    if (e2 != null && Zk.code(e2) != Code.NONODE) {
                        throw Zk.translate(e2);
                    }
                    return e2 == null ? "done: force-released the hold kept by the lock-delay of expired session "
                            + r.sessionId() : "done: the holder let go before it was forced";
                });
            }
            return CompletableFuture.<String>failedFuture(err);
        }).thenCompose(f -> f);
    }

    private void retryLater(Pending p, String why) {
        log.debug("revocation of {}: could not finish yet ({}); trying again", p.target(), why);
        synchronized (p) {
            p.finishing = false;
            if (!stopped && pending.get(p.recordPath) == p) {
                p.timer = clock.schedule(pollEvery, () -> due(p));
            }
        }
    }

    @Override
    public void close() {
        stopped = true;
        Clock.Cancellable t = pollTimer;
        if (t != null) {
            t.cancel();
        }
        for (Pending p : pending.values()) {
            forget(p);
        }
    }
}
