package io.warden.service.console;

import io.warden.console.ConsoleBackend;
import io.warden.console.model.AdminResult;
import io.warden.console.model.AuditEntry;
import io.warden.console.model.CellInfo;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.Health;
import io.warden.console.model.LockDetail;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import io.warden.console.model.QueuedRequest;
import io.warden.console.model.SessionState;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.lock.LockLister;
import io.warden.service.session.SessionManager;
import io.warden.service.time.Clock;
import io.warden.service.watch.WatchSource;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * The gateway's side of the console ({@link ConsoleBackend}): reads ZooKeeper through the cells' lock listers
 * ({@link CellLocks}: every cell's locks in one listing) and the session records (in the default cell, every session's
 * home), remembers the watch stream's recent events ({@link EventLog}), probes the ZooKeeper servers
 * ({@link ZkServers}), and carries out the two admin actions through the same code paths as a client's release and
 * a TTL expiry, writing each to the {@link AuditLog}.
 *
 * <p>Cost: a {@link #snapshot()} walks {@code /locks} of every cell and reads every session record; it is shared by all callers for
 * {@link #SNAPSHOT_TTL}, so any number of open consoles cost at most one walk per second per gateway. A lock too large
 * for the gateway to read is shown as such ({@link LockState#tooLarge}), with its entries and no queue.
 *
 * <p>Concurrency: the cached snapshot and health are volatile references to immutable futures; everything else is
 * immutable or thread-safe. Safe from any thread.
 */
public final class ConsoleBridge implements ConsoleBackend, AutoCloseable {
    static final Duration SNAPSHOT_TTL = Duration.ofSeconds(1);
    static final Duration HEALTH_TTL = Duration.ofSeconds(2);
    private static final Logger log = LoggerFactory.getLogger(ConsoleBridge.class);

    private final Zk zk;
    private final Warden warden;
    /** The cells' locks: listings merge every cell's, a lock is read in its namespace's cell. */
    private final CellLocks locks;
    private final SessionManager sessions;
    private final Clock ticker;
    private final java.time.Clock wallClock;
    private final String gatewayId;
    private final String zkConnect;
    private final BooleanSupplier leader;
    private final EventLog events;
    private final AuditLog audit;
    private final ZkServers servers;
    private final Peers peers;

    private record Cached<T>(long atNanos, CompletableFuture<T> value) {
    }

    private volatile Cached<CellSnapshot> snapshot;
    private volatile Cached<List<Health.ZkServer>> probe;
    /** The watch hub's wait-for graph; null until set (no mirror). */
    private volatile java.util.function.Supplier<CompletableFuture<io.warden.service.watch.WatchHub.DeadlockReport>> waitFor;

    public ConsoleBridge(Zk zk, Warden warden, CellLocks locks, SessionManager sessions, Clock ticker,
                         java.time.Clock wallClock, String gatewayId, String zkConnect,
                         io.warden.service.zk.ZkSecurity.SocketMaker probeSockets, BooleanSupplier leader) {
        this.zk = zk;
        this.warden = warden;
        this.locks = locks;
        this.sessions = sessions;
        this.ticker = ticker;
        this.wallClock = wallClock;
        this.gatewayId = gatewayId;
        this.zkConnect = zkConnect;
        this.leader = leader;
        this.events = new EventLog(wallClock);
        this.audit = new AuditLog(zk);
        this.servers = new ZkServers(zkConnect, probeSockets);
        this.peers = new Peers(zk, gatewayId);
    }

    /** Serves {@link Peers#PATH}: the TTLs left of the sessions this gateway tracks, for the other gateways' consoles. */
    public void mountPeerRoute(io.javalin.config.JavalinConfig cfg) {
        cfg.routes.get(Peers.PATH, ctx -> ctx.contentType("application/json")
                .result(Json.write(new Peers.Tracked(gatewayId, sessions.trackedRemainingMs()))));
    }

    /** Serves the wait-for page from {@code source}: the watch hub's graph (before the console is served). */
    public void useWaitFor(java.util.function.Supplier<CompletableFuture<io.warden.service.watch.WatchHub.DeadlockReport>> source) {
        this.waitFor = source;
    }

    /**
     * The watch hub's last computation of the wait-for graph (docs/decisions/0013): its deadlocks, as
     * {@code GET /v1/deadlocks} lists them, and its edges; no ZooKeeper read but the members' request ids
     * ({@link io.warden.service.watch.MemberRequestIds}).
     */
    @Override
    public CompletableFuture<io.warden.console.model.WaitFor> waitFor() {
        var source = waitFor;
        if (source == null) {
            return ConsoleBackend.super.waitFor();
        }
        return source.get().thenApply(this::waitFor);
    }

    private io.warden.console.model.WaitFor waitFor(io.warden.service.watch.WatchHub.DeadlockReport r) {
        List<io.warden.console.model.WaitFor.Edge> edges = new ArrayList<>(r.edges().size());
        for (io.warden.service.api.WaitEdge e : r.edges()) {
            edges.add(new io.warden.console.model.WaitFor.Edge(e.waiter(), e.waiterClient(), e.name(), mode(e.waiterMode()),
                    e.blocker(), e.blockerClient(), mode(e.blockerMode()), e.blockerToken(), e.blockerHolds()));
        }
        List<io.warden.console.model.WaitFor.Cycle> cycles = new ArrayList<>(r.deadlocks().size());
        for (io.warden.service.api.Deadlock d : r.deadlocks()) {
            List<io.warden.console.model.WaitFor.Member> members = new ArrayList<>(d.members().size());
            for (io.warden.service.api.Deadlock.Member m : d.members()) {
                members.add(new io.warden.console.model.WaitFor.Member(m.sessionId(), m.clientId(), m.requestId(),
                        m.request(), m.name(), mode(m.mode()), m.onDeadlock() == io.warden.service.api.OnDeadlock.FAIL,
                        m.waitsFor()));
            }
            cycles.add(new io.warden.console.model.WaitFor.Cycle(members, d.sinceRevision(), d.ageMs()));
        }
        return new io.warden.console.model.WaitFor(wallClock.instant().minusMillis(r.ageMs()), r.revision(), r.stale(),
                edges, r.edgeCount(), cycles);
    }

    private static io.warden.console.model.Mode mode(io.warden.service.api.Mode m) {
        return io.warden.console.model.Mode.valueOf(m.name());
    }

    /** Starts remembering events; call once the watch source is running. */
    public void start(WatchSource watches) {
        events.start(watches);
    }

    @Override
    public void close() {
        events.stop();
        servers.close();
    }

    // ------------------------------------------------------------------ reads

    @Override
    public CompletableFuture<CellSnapshot> snapshot() {
        Cached<CellSnapshot> c = snapshot;
        long now = ticker.read();
        if (c != null && now - c.atNanos() < SNAPSHOT_TTL.toNanos() && !c.value().isCompletedExceptionally()) {
            return c.value();
        }
        CompletableFuture<CellSnapshot> fresh = readSnapshot();
        snapshot = new Cached<>(now, fresh);
        return fresh;
    }

    private CompletableFuture<CellSnapshot> readSnapshot() {
        Instant takenAt = wallClock.instant();
        CompletableFuture<Scan> scannedLocks = scanEveryCell();
        CompletableFuture<List<SessionState>> sessionStates = sessionStates();
        return scannedLocks.thenCombine(sessionStates, (scan, ss) -> {
            List<LockLister.ScannedLock> scanned = scan.locks();
            List<LockState> states = new ArrayList<>(scanned.size());
            Set<String> holding = new HashSet<>();
            long revision = 0;
            for (LockLister.ScannedLock l : scanned) {
                states.add(state(l));
                revision = Math.max(revision, l.pzxid());
                for (LockLister.ScannedNode n : l.nodes()) {
                    if (n.holds()) {
                        holding.add(l.name() + "#" + n.token());
                    }
                }
            }
            if (scan.unread().isEmpty()) {
                events.retainGrants(holding); // what is not held any more; with a cell unread, that is not known
            }
            return new CellSnapshot(takenAt, revision, states, ss, scan.unread());
        });
    }

    /** The live locks of the cells read, sorted by name, and the cells (not the default one) that could not be read. */
    private record Scan(List<LockLister.ScannedLock> locks, List<String> unread) {
    }

    /**
     * Every cell's live locks, in one list sorted by name (a namespace is in one cell, so no name comes twice; while a
     * namespace moves, its old cell's entries are listed until they are gone). A cell other than the default one that
     * cannot be read is named in {@link Scan#unread}, so that the pages say its locks are missing rather than show its
     * namespaces free; the default cell failing fails the snapshot, as it holds every session too.
     */
    private CompletableFuture<Scan> scanEveryCell() {
        List<CellLocks.Cell> cells = locks.all();
        if (cells.size() == 1) {
            return cells.get(0).lister().scan().thenApply(l -> new Scan(l, List.of()));
        }
        List<CompletableFuture<List<LockLister.ScannedLock>>> scans = new ArrayList<>(cells.size());
        for (CellLocks.Cell c : cells) {
            CompletableFuture<List<LockLister.ScannedLock>> scan = c.lister().scan();
            scans.add(c == cells.get(0) ? scan : scan.exceptionally(e -> {
                log.debug("console: the locks of cell {} cannot be read: {}", c.name(), e.toString());
                return null;
            }));
        }
        return CompletableFuture.allOf(scans.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<LockLister.ScannedLock> all = new ArrayList<>();
            List<String> unread = new ArrayList<>();
            for (int i = 0; i < cells.size(); i++) {
                List<LockLister.ScannedLock> l = scans.get(i).join();
                if (l == null) {
                    unread.add(cells.get(i).name());
                } else {
                    all.addAll(l);
                }
            }
            all.sort(java.util.Comparator.comparing(LockLister.ScannedLock::name));
            return new Scan(all, unread);
        });
    }

    private LockState state(LockLister.ScannedLock l) {
        if (l.tooLargeEntries() > 0) {
            return LockState.tooLarge(l.name(), l.tooLargeEntries()); // not read: its queue is not known
        }
        List<QueuedRequest> queue = new ArrayList<>(l.nodes().size());
        int position = 0;
        for (LockLister.ScannedNode n : l.nodes()) {
            queue.add(new QueuedRequest(n.sessionId(), n.clientId(), n.requestId(), Mode.valueOf(n.mode().name()),
                    n.token(), position++, n.holds(), Instant.ofEpochMilli(n.ctimeMs()),
                    n.holds() ? events.grantedAt(l.name(), n.token()) : null));
        }
        return new LockState(l.name(), queue);
    }

    /** Every session record, with the TTL left as its tracking gateway measures it (asked over HTTP when not us). */
    private CompletableFuture<List<SessionState>> sessionStates() {
        return zk.childrenOrEmpty(CellPaths.GATEWAYS).thenCompose(gateways -> {
            Set<String> live = new HashSet<>(gateways);
            CompletableFuture<Map<String, Long>> remote = peers.trackedRemainingMs(gateways);
            return zk.shardedChildren(CellPaths.SESSIONS).thenCombine(remote, (ids, remoteRemaining) -> {
                Map<String, Long> remaining = new HashMap<>(remoteRemaining);
                remaining.putAll(sessions.trackedRemainingMs()); // our own measure, fresher than any reply
                List<CompletableFuture<SessionState>> reads = new ArrayList<>(ids.size());
                for (String id : ids) {
                    reads.add(zk.data(CellPaths.session(id)).handle((ds, err) -> {
                        SessionRecord r = err == null ? Json.readOrNull(ds.data(), SessionRecord.class) : null;
                        if (r == null) {
                            return null; // closed or expired meanwhile
                        }
                        return new SessionState(id, r.clientId(), r.ttlMs(), remaining.get(id), r.gateway(),
                                live.contains(r.gateway()), r.lockDelayMs(), Instant.ofEpochMilli(ds.stat().getCtime()));
                    }));
                }
                return reads;
            });
        }).thenCompose(reads -> CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<SessionState> out = new ArrayList<>(reads.size());
            for (CompletableFuture<SessionState> r : reads) {
                if (r.join() != null) {
                    out.add(r.join());
                }
            }
            return out;
        }));
    }

    @Override
    public CompletableFuture<Optional<LockDetail>> lock(String name) {
        LockName parsed;
        try {
            parsed = LockName.parse("name", name);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return locks.of(parsed.namespace()).lister().scan(parsed).thenApply(found -> found.map(l -> new LockDetail(state(l), l.pzxid(),
                events.recent(l.name()))));
    }

    @Override
    public CompletableFuture<Health> health() {
        Cached<List<Health.ZkServer>> c = probe;
        long now = ticker.read();
        if (c == null || now - c.atNanos() >= HEALTH_TTL.toNanos()) {
            c = new Cached<>(now, servers.probe());
            probe = c;
        }
        CompletableFuture<List<String>> gateways = zk.connected() ? zk.childrenOrEmpty(CellPaths.GATEWAYS)
                .exceptionally(e -> List.of()) : CompletableFuture.completedFuture(List.of());
        return c.value().thenCombine(gateways, (zkServers, gws) -> new Health(gatewayId, warden.ready(),
                leader.getAsBoolean(), gws.stream().sorted().toList(), zk.connected(), zkConnect, zkServers));
    }

    /**
     * The gateway's cells as the router lists them ({@link Warden#cells()}, as {@code GET /v1/cells}): every one, with
     * its ensemble and chroot; the console decides who sees those.
     */
    @Override
    public CompletableFuture<List<CellInfo>> cells() {
        return warden.cells().thenApply(cells -> cells.stream()
                .map(c -> new CellInfo(c.name(), c.zk(), c.chroot(), c.serving(), c.detail(), c.namespaces()))
                .toList());
    }

    // ------------------------------------------------------------------ admin actions

    @Override
    public CompletableFuture<AdminResult> forceRelease(String name, long token, AuditEntry entry) {
        LockName parsed;
        try {
            parsed = LockName.parse("name", name);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        CellLocks.Cell cell = locks.of(parsed.namespace());
        return cell.lister().scan(parsed).thenCompose(found -> {
            if (found.isPresent() && found.get().tooLargeEntries() > 0) {
                return CompletableFuture.completedFuture(new AdminResult(false, "lock " + name + " has "
                        + found.get().tooLargeEntries() + " entries, too many for this gateway to read: its holds cannot "
                        + "be found. Nothing changed"));
            }
            Optional<LockLister.ScannedNode> hold = found.flatMap(l -> l.nodes().stream()
                    .filter(n -> n.holds() && n.token() == token).findFirst());
            if (hold.isEmpty()) {
                return CompletableFuture.completedFuture(new AdminResult(false,
                        "token " + token + " does not hold " + name + " (already released?): nothing changed"));
            }
            LockLister.ScannedNode n = hold.get();
            if (n.sessionId() == null) {
                return CompletableFuture.completedFuture(new AdminResult(false, "token " + token + " on " + name
                        + " is held by a direct-mode (Curator) client, not a Warden session: end that client's ZooKeeper "
                        + "session instead. Nothing changed"));
            }
            return warden.release(n.sessionId(), parsed, token).handle((released, err) -> {
                if (err == null) {
                    return CompletableFuture.completedFuture(released
                            ? new AdminResult(true, "released " + name + " token " + token + " of session " + n.sessionId())
                            : new AdminResult(false, "token " + token + " no longer holds " + name + ": nothing changed"));
                }
                if (Zk.unwrap(err) instanceof WardenException we && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
                    // The session expired and its hold is kept for its lock-delay: delete the node itself.
                    return cell.zk().delete(CellPaths.lock(parsed) + "/" + n.node(), -1).handle((v, e2) -> {
                        if (e2 != null && Zk.code(e2) != Code.NONODE) {
                            throw Zk.translate(e2);
                        }
                        return new AdminResult(e2 == null, e2 == null
                                ? "released " + name + " token " + token + ", kept by the lock-delay of expired session "
                                + n.sessionId()
                                : "token " + token + " no longer holds " + name + ": nothing changed");
                    });
                }
                return CompletableFuture.<AdminResult>failedFuture(err);
            }).thenCompose(f -> f);
        }).handle((result, err) -> audited(entry, result, err)).thenCompose(f -> f);
    }

    /**
     * A revoke ({@link Warden#revoke}) on behalf of the console's admin. The revocation writes its own audit entries
     * (the request, its end); a request refused here (a token that does not hold, bad input) is audited as the
     * console's no-op or failure.
     */
    @Override
    public CompletableFuture<AdminResult> askToRelease(String name, long token, long graceMs, AuditEntry entry) {
        LockName parsed;
        try {
            parsed = LockName.parse("name", name);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return warden.revoke(parsed, token, graceMs, entry.reason(), entry.actor()).handle((r, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(r.repeated()
                        ? new AdminResult(false, "the holder of " + name + " token " + token + " was already asked to let go "
                        + "(grace " + r.graceMs() + " ms, reason \"" + r.reason() + "\"): nothing changed")
                        : new AdminResult(true, "asked the holder of " + name + " token " + token + " to let go within "
                        + graceMs + " ms" + (r.sessionId() == null ? " (a plain Curator client: it is not forced)"
                        : "; it is force-released if it still holds then")));
            }
            if (Zk.unwrap(err) instanceof WardenException.InvalidArgumentException invalid) {
                return audited(entry, new AdminResult(false, invalid.getMessage()), null);
            }
            return audited(entry, null, err);
        }).thenCompose(f -> f);
    }

    @Override
    public CompletableFuture<AdminResult> expireSession(String sessionId, AuditEntry entry) {
        return sessions.expireNow(sessionId).thenApply(expired -> expired
                ? new AdminResult(true, "expired session " + sessionId + ": its holds are released (after its lock-delay, "
                + "if any) and its waits cancelled")
                : new AdminResult(false, "could not expire session " + sessionId + " yet; the gateway keeps trying"))
                .exceptionally(err -> {
                    if (Zk.unwrap(err) instanceof WardenException we && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
                        return new AdminResult(false, "session " + sessionId + " does not exist (already closed or expired): "
                                + "nothing changed");
                    }
                    throw Zk.translate(err);
                })
                .handle((result, err) -> audited(entry, result, err)).thenCompose(f -> f);
    }

    /**
     * Appends an entry for a step of a revocation ({@code POST /v1/revoke} and its grace timer) to the cell's audit log;
     * a failure to store it is logged (the {@code warden.audit} line is written either way).
     */
    public void auditRevocation(String action, String target, String reason, String by, String outcome) {
        AuditEntry e = new AuditEntry(wallClock.instant(), by == null ? "open" : by, action, target,
                reason == null ? "" : reason, "api", gatewayId, outcome);
        audit.append(e).whenComplete((v, err) -> {
            if (err != null) {
                log.warn("{} on {} carried out but not stored in the audit log (logged only): {}", action, target,
                        Zk.unwrap(err).toString());
            }
        });
    }

    /** Writes the audit entry with the outcome, then answers with the result (or the failure). */
    private CompletableFuture<AdminResult> audited(AuditEntry entry, AdminResult result, Throwable err) {
        String outcome = err != null ? "failed: " + Zk.unwrap(err).getMessage()
                : (result.done() ? "done: " : "no-op: ") + result.message();
        return audit.append(entry.withOutcome(gatewayId, outcome)).handle((v, auditErr) -> {
            if (err != null) {
                throw Zk.translate(err);
            }
            if (auditErr != null) {
                log.warn("admin action {} on {} carried out but not stored in the audit log (logged only): {}",
                        entry.action(), entry.target(), Zk.unwrap(auditErr).toString());
            }
            return result;
        });
    }

    @Override
    public CompletableFuture<List<AuditEntry>> auditLog(int limit) {
        return audit.newest(limit);
    }
}
