package io.warden.service;

import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.CellView;
import io.warden.service.api.CheckResult;
import io.warden.service.api.CloseResult;
import io.warden.service.api.LockName;
import io.warden.service.api.LockPage;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.MultiAcquireResult;
import io.warden.service.api.NamespaceStats;
import io.warden.service.api.RevokeResult;
import io.warden.service.api.SessionGrant;
import io.warden.service.api.SessionView;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.watch.WatchFilter;
import io.warden.service.watch.WatchHub;
import io.warden.service.watch.WatchSink;
import io.warden.service.watch.WatchSource;
import io.warden.service.zk.Zk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@link Warden} over the cells a gateway serves: each call goes to the cell of its lock name's namespace (the routes,
 * else the default cell), so a cell that lost its quorum answers 503 for its own namespaces only.
 *
 * <p>Sessions span cells: opened in the default cell, their home, they join another cell at their first acquire there,
 * and are kept alive, viewed and closed in every cell they use ({@link CellSessions}).
 *
 * <p>Multi-lock requests name one cell's namespaces: one transaction is one ensemble. A whole-session watch
 * (no name or prefix) covers one cell's locks (its {@code cell} parameter, else the default cell's); a watch of a name or
 * prefix goes to its namespace's cell. While a move has a namespace served by no cell, acquires of it wait.
 *
 * <p>Concurrency: the cells are a {@link CellSet}, only ever added to (a call sees the set as it was when it looked); the
 * routes are each cell's {@code CellRouting}, changed by moves and read here without locks; {@link #awaitingRoutes} is
 * a concurrent set. Every call may come from any thread,
 * and each cell's parts keep their own rules.
 */
final class CellRouter implements Warden, WatchSource {
    private static final Logger log = LoggerFactory.getLogger(CellRouter.class);

    private final CellRuntime home;
    /** Every cell by name, the default first; cells added while the gateway runs join it. */
    private final CellSet cells;
    private final io.warden.service.time.Clock clock;
    /** Sessions across the cells: joins, keepalives, closes, views. */
    private final CellSessions sessions;
    /**
     * Calls waiting for their namespace to be served again (a move under way): each completes at the next change of
     * any cell's routes (and then looks again) or at its own deadline. Bounded by the calls held open on this gateway.
     */
    private final java.util.Set<CompletableFuture<Void>> awaitingRoutes = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** How many times a call is routed again after a cell said it no longer serves the namespace. */
    private static final int REROUTES = 3;

    /**
     * The routes setting (namespace to cell): consulted only for a cell whose own routes are not read yet, so that its
     * namespaces answer 503 rather than be served by another cell.
     */
    private final Map<String, String> seeds;

    CellRouter(CellSet cells, io.warden.service.time.Clock clock, Map<String, String> seeds) {
        this.seeds = Map.copyOf(seeds);
        this.cells = cells;
        this.clock = clock;
        this.home = cells.home();
        for (CellRuntime r : cells.values()) {
            r.routing().onChange(this::routesChanged);
        }
        cells.onAdded(r -> {
            r.routing().onChange(this::routesChanged);
            routesChanged(); // a call waiting for its namespace may find it served by the new cell
        });
        this.sessions = new CellSessions(home, cells);
    }

    /** Wakes every call waiting for a route; each looks again (on ZooKeeper's event thread: it only completes futures). */
    private void routesChanged() {
        for (CompletableFuture<Void> waiting : List.copyOf(awaitingRoutes)) {
            awaitingRoutes.remove(waiting);
            waiting.complete(null);
        }
    }

    /**
     * The cell that serves {@code namespace} now as this gateway knows the routes, or null while none does (a move
     * between its freeze and its flip). A one-cell gateway's only cell serves everything.
     */
    CellRuntime cellOf(String namespace) {
        if (cells.size() == 1) {
            return home;
        }
        for (CellRuntime cell : cells.values()) {
            if (cell.routing().serves(namespace)) {
                return cell;
            }
        }
        return null;
    }

    /**
     * The cell to read {@code namespace} from: the one that serves it, else the one it is being moved from (its entries
     * are there until the move flips it). Reads never wait for a move.
     */
    CellRuntime readCellOf(String namespace) {
        CellRuntime serving = cellOf(namespace);
        if (serving != null) {
            return serving;
        }
        for (CellRuntime cell : cells.values()) {
            if (cell.routing().frozen(namespace)) {
                return cell;
            }
        }
        CellRuntime unread = notReadYet(namespace);
        return unread != null ? unread : home;
    }

    /**
     * A cell whose routes are not read yet (it was out of reach at the gateway's start) that the routes setting gives
     * {@code namespace}: its calls go there and answer 503 at once, instead of being served by another cell.
     */
    private CellRuntime notReadYet(String namespace) {
        String seeded = seeds.get(namespace);
        CellRuntime cell = seeded == null ? null : cells.get(seeded);
        return cell != null && cell.routing().current() == null ? cell : null;
    }

    private CellRuntime cellOf(LockName name) {
        return readCellOf(name.namespace());
    }

    /**
     * Completes with the cell that serves {@code namespace} once one does, waiting (no thread) for the routes to change
     * while none does, up to {@code deadlineNanos} on the gateway's clock; then fails with 503.
     */
    private CompletableFuture<CellRuntime> served(String namespace, long deadlineNanos) {
        CellRuntime cell = cellOf(namespace);
        if (cell == null) {
            cell = notReadYet(namespace);
        }
        if (cell != null) {
            return CompletableFuture.completedFuture(cell);
        }
        long left = deadlineNanos - clock.read();
        if (left <= 0) {
            return CompletableFuture.failedFuture(new io.warden.service.api.NotServedException(null, namespace, true));
        }
        CompletableFuture<Void> changed = new CompletableFuture<>();
        awaitingRoutes.add(changed);
        io.warden.service.time.Clock.Cancellable timer = clock.schedule(java.time.Duration.ofNanos(left), () -> {
            awaitingRoutes.remove(changed);
            changed.complete(null);
        });
        if (cellOf(namespace) != null) { // changed between the look and the registration
            awaitingRoutes.remove(changed);
            changed.complete(null);
        }
        return changed.thenCompose(v -> {
            timer.cancel();
            return served(namespace, deadlineNanos);
        });
    }

    /** After a cell refused a write as not serving the namespace: its routes read again, so the next look is current. */
    private CompletableFuture<Void> refreshed() {
        List<CompletableFuture<?>> loads = new ArrayList<>();
        for (CellRuntime cell : cells.values()) {
            loads.add(cell.routing().load());
        }
        return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new)).exceptionally(e -> null);
    }

    private static boolean notServed(Throwable err) {
        return Zk.unwrap(err) instanceof io.warden.service.api.NotServedException;
    }

    /** Set once, before the gateway serves: what {@link #moveNamespace} hands moves to. */
    private volatile CellMoves moves;

    void useMoves(CellMoves m) {
        this.moves = m;
    }

    @Override
    public CompletableFuture<io.warden.service.api.MoveResult> moveNamespace(String namespace, String cell, long deadlineMs,
                                                                             String by) {
        CellMoves m = moves;
        if (m == null || cells.size() == 1) {
            return CompletableFuture.failedFuture(WardenException.invalid("cell", "this gateway serves one cell (no "
                    + "cells setting): there is nowhere to move a namespace to"));
        }
        return m.move(namespace, cell, deadlineMs, by);
    }

    @Override
    public CompletableFuture<Long> raiseTokenFloor(String cell, long above, String by) {
        CellRuntime named = cells.get(cell);
        if (named == null) {
            return CompletableFuture.failedFuture(WardenException.invalid("cell", "this gateway serves no cell " + cell
                    + "; its cells are " + cells.keySet()));
        }
        if (above < 1) {
            return CompletableFuture.failedFuture(WardenException.invalid("above", "must be a positive token, got " + above));
        }
        log.warn("raising the token floor of cell {} above {} (asked by {})", cell, above, by);
        return io.warden.service.cell.FloorRaise.above(named.zk(), named.guard().tokens(), above, "raised by " + by)
                .handle((floor, err) -> {
                    if (err != null) {
                        throw Zk.translate(err);
                    }
                    return floor;
                });
    }

    /** Every cell, the default first. */
    List<CellRuntime> all() {
        return List.copyOf(cells.values());
    }

    // ------------------------------------------------------------------ sessions

    @Override
    public CompletableFuture<SessionGrant> openSession(String clientId, long ttlMs, long lockDelayMs) {
        return home.service().openSession(clientId, ttlMs, lockDelayMs);
    }

    @Override
    public CompletableFuture<SessionGrant> openSession(String principal, String address, String clientId, long ttlMs,
                                                       long lockDelayMs) {
        return home.service().openSession(principal, address, clientId, ttlMs, lockDelayMs);
    }

    @Override
    public CompletableFuture<Optional<String>> sessionPrincipal(String sessionId) {
        return home.service().sessionPrincipal(sessionId);
    }

    /** The session's view across the cells it uses ({@link CellSessions#view}). */
    @Override
    public CompletableFuture<SessionView> session(String sessionId) {
        return cells.size() == 1 ? home.service().session(sessionId) : sessions.view(sessionId);
    }

    /** Acknowledged only when every cell the session uses acknowledges ({@link CellSessions#keepalive}). */
    @Override
    public CompletableFuture<Long> keepalive(String sessionId, Long newTtlMs) {
        return cells.size() == 1 ? home.service().keepalive(sessionId, newTtlMs) : sessions.keepalive(sessionId, newTtlMs);
    }

    /** Ended in every cell it uses, the home last ({@link CellSessions#close}). */
    @Override
    public CompletableFuture<CloseResult> closeSession(String sessionId) {
        return cells.size() == 1 ? home.service().closeSession(sessionId) : sessions.close(sessionId);
    }

    // ------------------------------------------------------------------ locks

    /**
     * Goes to the cell that serves the name's namespace. While a move has the namespace served by no cell, the call
     * waits (no thread) for the move to flip it, within its own {@code wait_ms}; what it waited is taken off the wait it
     * gets in the cell. A cell that refuses the write as not serving the namespace (this gateway's view of the routes
     * was behind) has its routes read again, and the call is routed again.
     */
    @Override
    public CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        if (cells.size() == 1) {
            return home.service().acquire(request);
        }
        long start = clock.read();
        return acquire(request, start, 0);
    }

    private CompletableFuture<AcquireResult> acquire(AcquireRequest request, long start, int reroutes) {
        long deadline = start + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(request.waitMs());
        return served(request.name().namespace(), deadline).thenCompose(cell -> {
            long waited = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(clock.read() - start);
            AcquireRequest rest = waited <= 0 ? request : new AcquireRequest(request.sessionId(), request.name(),
                    request.mode(), Math.max(0, request.waitMs() - waited), request.requestId(), request.onTimeout(),
                    request.requestIdGiven(), request.permits(), request.onDeadlock());
            return sessions.joined(request.sessionId(), cell).thenCompose(v -> cell.service().acquire(rest))
                    .thenApply(r -> r.inCell(cell.name()));
        }).handle((r, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(r);
            }
            if (notServed(err) && reroutes < REROUTES) {
                return refreshed().thenCompose(v -> acquire(request, start, reroutes + 1));
            }
            return CompletableFuture.<AcquireResult>failedFuture(Zk.unwrap(err));
        }).thenCompose(f -> f);
    }

    @Override
    public CompletableFuture<MultiAcquireResult> acquireAll(MultiAcquireRequest request) {
        if (cells.size() == 1) {
            return home.service().acquireAll(request);
        }
        long start = clock.read();
        return acquireAll(request, start, start + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(request.waitMs()), 0);
    }

    /**
     * As {@link #acquire}: waits while a name's namespace is served by no cell (a move), then sends the request to the
     * one cell that serves every name; names of two cells are a 400.
     */
    private CompletableFuture<MultiAcquireResult> acquireAll(MultiAcquireRequest request, long start, long deadline,
                                                             int reroutes) {
        CompletableFuture<CellRuntime> first = CompletableFuture.completedFuture(null);
        for (LockName name : request.names()) {
            first = first.thenCompose(v -> served(name.namespace(), deadline));
        }
        return first.thenCompose(v -> {
            CellRuntime cell = null;
            for (LockName name : request.names()) {
                CellRuntime c = cellOf(name.namespace());
                if (c == null) {
                    throw new io.warden.service.api.NotServedException(null, name.namespace(), true);
                }
                if (cell != null && c != cell) {
                    throw WardenException.invalid("names", "every name of a multi-lock request must be in namespaces of "
                            + "one cell (one transaction is one ZooKeeper ensemble): " + request.names().get(0)
                            + " is in cell " + cell.name() + ", " + name + " in cell " + c.name());
                }
                cell = c;
            }
            CellRuntime only = cell;
            long waited = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(clock.read() - start);
            MultiAcquireRequest rest = waited <= 0 ? request : new MultiAcquireRequest(request.sessionId(), request.names(),
                    request.mode(), Math.max(0, request.waitMs() - waited), request.requestId(), request.onTimeout(),
                    request.requestIdGiven(), request.onDeadlock());
            return sessions.joined(request.sessionId(), only).thenCompose(x -> only.service().acquireAll(rest))
                    .thenApply(r -> r.inCell(only.name()));
        }).handle((r, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(r);
            }
            if (notServed(err) && reroutes < REROUTES) {
                return refreshed().thenCompose(v -> acquireAll(request, start, deadline, reroutes + 1));
            }
            return CompletableFuture.<MultiAcquireResult>failedFuture(Zk.unwrap(err));
        }).thenCompose(f -> f);
    }

    /** Ends the request in every cell of the session: a request id names one request, in whichever cell it was made. */
    @Override
    public CompletableFuture<Boolean> releaseRequest(String sessionId, String requestId) {
        return cells.size() == 1 ? home.service().releaseRequest(sessionId, requestId)
                : sessions.releaseRequest(sessionId, requestId);
    }

    @Override
    public CompletableFuture<Boolean> release(String sessionId, LockName name, long token) {
        return cellOf(name).service().release(sessionId, name, token);
    }

    @Override
    public CompletableFuture<RevokeResult> revoke(LockName name, long token, long graceMs, String reason, String by) {
        return cellOf(name).service().revoke(name, token, graceMs, reason, by);
    }

    @Override
    public CompletableFuture<Boolean> cancel(String sessionId, LockName name, String requestId) {
        return cellOf(name).service().cancel(sessionId, name, requestId);
    }

    @Override
    public CompletableFuture<LockView> lock(LockName name) {
        return cellOf(name).service().lock(name);
    }

    @Override
    public CompletableFuture<Optional<AcquireResult>> tryRefusal(LockName name, Mode mode) {
        return cellOf(name).service().tryRefusal(name, mode);
    }

    /**
     * A namespace's locks from its cell; without a namespace, every cell's, merged by name: each cell's page is
     * read, and the merged page ends at the smallest last name of the cells that have more (a later name of a cell
     * could otherwise be skipped), so the next page continues after it in every cell.
     */
    @Override
    public CompletableFuture<LockPage> locks(String namespace, String prefix, int limit, String after) {
        if (namespace != null || cells.size() == 1) {
            return (namespace == null ? home : readCellOf(namespace)).service().locks(namespace, prefix, limit, after);
        }
        List<CellRuntime> order = all();
        List<CompletableFuture<LockPage>> pages = new ArrayList<>();
        for (CellRuntime cell : order) {
            pages.add(cell.service().locks(null, prefix, limit, after));
        }
        return CompletableFuture.allOf(pages.toArray(CompletableFuture[]::new)).thenApply(v -> {
            String cut = null;
            List<io.warden.service.api.LockSummary> merged = new ArrayList<>();
            for (int i = 0; i < order.size(); i++) {
                LockPage page = pages.get(i).join();
                if (page.nextAfter() != null && (cut == null || page.nextAfter().compareTo(cut) < 0)) {
                    cut = page.nextAfter();
                }
                for (io.warden.service.api.LockSummary lock : page.locks()) {
                    if (readCellOf(LockName.parse(lock.name()).namespace()) == order.get(i)) {
                        merged.add(lock);
                    }
                }
            }
            merged.sort(Comparator.comparing(io.warden.service.api.LockSummary::name));
            List<io.warden.service.api.LockSummary> out = new ArrayList<>();
            for (io.warden.service.api.LockSummary lock : merged) {
                if (out.size() == limit || (cut != null && lock.name().compareTo(cut) > 0)) {
                    break;
                }
                out.add(lock);
            }
            boolean more = cut != null || out.size() < merged.size();
            String next = more && !out.isEmpty() ? out.get(out.size() - 1).name() : more ? cut : null;
            return new LockPage(out, next, 0);
        });
    }

    @Override
    public CompletableFuture<CheckResult> check(LockName name, long token) {
        return cellOf(name).service().check(name, token);
    }

    /**
     * Every cell's namespaces, each from the cell that serves it (a cell may still have nodes of a namespace routed
     * elsewhere: not listed). 503 when a cell cannot answer: a partial list would look complete.
     */
    @Override
    public CompletableFuture<List<NamespaceStats>> namespaces() {
        if (cells.size() == 1) {
            return home.service().namespaces();
        }
        List<CompletableFuture<List<NamespaceStats>>> lists = new ArrayList<>();
        List<CellRuntime> order = all();
        for (CellRuntime cell : order) {
            lists.add(cell.service().namespaces());
        }
        return CompletableFuture.allOf(lists.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<NamespaceStats> out = new ArrayList<>();
            for (int i = 0; i < order.size(); i++) {
                for (NamespaceStats ns : lists.get(i).join()) {
                    if (readCellOf(ns.namespace()) == order.get(i)) {
                        out.add(ns);
                    }
                }
            }
            out.sort(Comparator.comparing(NamespaceStats::namespace));
            return out;
        });
    }

    @Override
    public CompletableFuture<List<CellView>> cells() {
        List<CellView> out = new ArrayList<>();
        for (CellRuntime cell : cells.values()) {
            out.add(view(cell));
        }
        return CompletableFuture.completedFuture(out);
    }

    /** One cell as {@code GET /v1/cells} shows it. */
    CellView view(CellRuntime cell) {
        io.warden.service.cell.CellRouting.Snapshot routes = cell.routing().current();
        List<String> namespaces = routes == null || cell == home ? List.of() : routes.routes().serves();
        boolean serving = cell.ready();
        return new CellView(cell.name(), cell.config().zkConnect(), cell.config().chroot(), serving,
                serving ? null : notServing(cell), namespaces);
    }

    /** Set once, before the gateway serves: what {@link #addCell} hands additions to. */
    private volatile CellAdditions additions;

    void useAdditions(CellAdditions a) {
        this.additions = a;
    }

    @Override
    public CompletableFuture<io.warden.service.api.CellAdded> addCell(String cell, String zk, String chroot, String by) {
        CellAdditions a = additions;
        if (a == null) {
            return CompletableFuture.failedFuture(WardenException.unavailable("this gateway adds no cells yet", null));
        }
        java.util.Optional<io.warden.service.config.CellAddress> address =
                io.warden.service.config.CellAddress.checked(cell, zk, chroot);
        if (address.isEmpty()) {
            String name = io.warden.service.config.CellAddress.nameProblem(cell);
            String field = name != null ? "cell" : io.warden.service.config.CellAddress.zkProblem(zk) != null ? "zk" : "chroot";
            return CompletableFuture.failedFuture(WardenException.invalid(field, "is not valid"));
        }
        return a.add(address.get(), by);
    }

    private static String notServing(CellRuntime cell) {
        String detail = cell.guard().notReadyDetail();
        return detail != null ? detail : "not connected to ZooKeeper at " + cell.config().zkConnect();
    }

    /** Ready while the home cell serves: every session lives there, so without it no session can be kept alive. */
    @Override
    public boolean ready() {
        return home.service().ready();
    }

    @Override
    public String notReadyDetail() {
        return home.service().notReadyDetail();
    }

    /** The cells that do not serve now, each with why; null when every cell serves. */
    @Override
    public String degradedDetail() {
        List<String> down = new ArrayList<>();
        for (CellRuntime cell : cells.values()) {
            if (cell != home && !cell.ready()) {
                down.add("cell " + cell.name() + " does not serve (" + notServing(cell) + "): its namespaces answer 503");
            }
        }
        return down.isEmpty() ? null : String.join("; ", down);
    }

    // ------------------------------------------------------------------ watches and deadlocks

    /** A watch of a name or prefix goes to its namespace's cell; a whole-session watch to the default cell. */
    @Override
    public Subscription subscribe(WatchFilter filter, Long sinceRevision, WatchSink sink) {
        String namespace = filter.namespace();
        return (namespace == null ? home : readCellOf(namespace)).subscribe(filter, sinceRevision, sink);
    }

    /** A whole session's watch in the named cell (the SDK keeps one per cell its holds are in). */
    @Override
    public Subscription subscribe(String cell, WatchFilter filter, Long sinceRevision, WatchSink sink) {
        if (cell == null) {
            return subscribe(filter, sinceRevision, sink);
        }
        CellRuntime named = cells.get(cell);
        if (named == null) {
            throw WardenException.invalid("cell", "this gateway serves no cell " + cell + "; its cells are " + cells.keySet());
        }
        return named.subscribe(filter, sinceRevision, sink);
    }

    /** Every cell's deadlocks, in one report: a cycle is always within one cell (a cell's graph knows only its locks). */
    CompletableFuture<WatchHub.DeadlockReport> deadlocks() {
        if (cells.size() == 1) {
            return home.deadlocks();
        }
        List<CompletableFuture<WatchHub.DeadlockReport>> reports = new ArrayList<>();
        for (CellRuntime cell : cells.values()) {
            reports.add(cell.deadlocks());
        }
        return CompletableFuture.allOf(reports.toArray(CompletableFuture[]::new)).thenApply(v -> {
            WatchHub.DeadlockReport first = reports.get(0).join();
            List<io.warden.service.api.Deadlock> deadlocks = new ArrayList<>();
            List<io.warden.service.api.WaitEdge> edges = new ArrayList<>();
            int edgeCount = 0;
            long ageMs = 0;
            boolean stale = false;
            for (CompletableFuture<WatchHub.DeadlockReport> f : reports) {
                WatchHub.DeadlockReport r = f.join();
                deadlocks.addAll(r.deadlocks());
                edges.addAll(r.edges());
                edgeCount += r.edgeCount();
                ageMs = Math.max(ageMs, r.ageMs());
                stale |= r.stale();
            }
            return new WatchHub.DeadlockReport(deadlocks, edges, edgeCount, first.revision(), ageMs, stale);
        });
    }
}
