package io.warden.service;

import io.warden.service.api.LockName;
import io.warden.service.api.LockSummary;
import io.warden.service.api.LockView;
import io.warden.service.api.MoveResult;
import io.warden.service.api.WardenException;
import io.warden.service.cell.FloorRaise;
import io.warden.service.lock.Revocations;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellRoutes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Moves a namespace from the cell that serves it to another, so that no holder in one cell overlaps a holder in the
 * other and every token keeps growing. Five steps, each a write that whoever asks for the move next can make again
 * (a move cut short, by a crash or a lost connection, is completed by asking again, on any gateway):
 * <ol>
 *   <li><b>Freeze</b> the namespace in the source cell, naming the target ({@link CellRoutes#freeze}). The source's
 *       routes change version, and every write of a queue entry there checks that version
 *       ({@link io.warden.service.cell.Fence}): from this write on, no gateway makes an entry of the namespace in the
 *       source, however stale its view. New acquires wait for the move (the router holds them, no thread). A namespace
 *       frozen towards one cell can only be moved on to that cell: two moves to two cells cannot both flip.</li>
 *   <li><b>Drain</b>: wait until the source has no entry of the namespace (holders release, waiters are granted and
 *       release, or give up). At the deadline, the holders left are released by their tokens and the waiters
 *       cancelled, each in the audit log, and the move then waits the longest lock-delay of their sessions: a holder
 *       the deadline removed is not followed by a holder in the new cell sooner than its lock-delay allows.</li>
 *   <li><b>Raise</b> the target cell's token floor above the token a node made in the source now would get: every
 *       token of the namespace in the target is above every token it had in the source ({@link FloorRaise}).</li>
 *   <li><b>Serve</b> the namespace in the target: held acquires go there.</li>
 *   <li><b>Release</b> the source: it no longer serves the namespace, and it is no longer frozen there.</li>
 * </ol>
 * Nothing of the namespace can be written between steps 1 and 4, and the target serves it only after the source was
 * seen empty after the freeze: holds never overlap. A queue entry made by a plain ZooKeeper client (direct mode) is not
 * Warden's to end: a drain that still finds one at the deadline fails (409), the namespace stays frozen, and a move
 * asked again once that client is gone completes it.
 *
 * <p>Concurrency: no state of its own but the count of moves under way; every step runs on ZooKeeper's event thread or
 * the clock's, and waits are scheduled, never slept.
 */
final class CellMoves {
    private static final Logger log = LoggerFactory.getLogger(CellMoves.class);
    /** How often a drain looks at the source again. */
    static final Duration DRAIN_POLL = Duration.ofMillis(200);
    /** The longest deadline a move may be given. */
    static final long MAX_DEADLINE_MS = 300_000;
    /** Locks read per page while draining. */
    private static final int PAGE = 200;

    private final CellRouter router;
    private final Clock clock;
    private final Revocations.Audit audit;
    private final MoveRule rule;

    CellMoves(CellRouter router, Clock clock, Revocations.Audit audit, MoveRule rule) {
        this.router = router;
        this.clock = clock;
        this.audit = audit;
        this.rule = rule;
    }

    CompletableFuture<MoveResult> move(String namespace, String to, long deadlineMs, String by) {
        long start = clock.read();
        CellRuntime target;
        try {
            LockName.validateNamespace("namespace", namespace);
            if (deadlineMs < 0 || deadlineMs > MAX_DEADLINE_MS) {
                throw WardenException.invalid("deadline_ms", "must be between 0 and " + MAX_DEADLINE_MS + ", got " + deadlineMs);
            }
            target = router.all().stream().filter(c -> c.name().equals(to)).findFirst().orElseThrow(() ->
                    WardenException.invalid("cell", "no cell " + to + " on this gateway; its cells are "
                            + router.all().stream().map(CellRuntime::name).toList()));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return fresh().thenCompose(v -> {
            CellRuntime source = sourceOf(namespace);
            if (source == target && !target.routing().frozen(namespace)) {
                return CompletableFuture.completedFuture(new MoveResult(namespace, to, to, 0, -1, 0));
            }
            if (source == null) {
                throw WardenException.unavailable("no cell serves namespace " + namespace + " as this gateway knows the "
                        + "routes; repeat the call", null);
            }
            String already = source.routing().current().routes().movingTo(namespace);
            if (already != null && !already.equals(to)) {
                throw WardenException.conflict("namespace " + namespace + " is being moved from cell " + source.name()
                        + " to cell " + already + "; that move can only be completed (ask to move it to " + already + ")");
            }
            log.info("moving namespace {} from cell {} to cell {} (deadline {} ms, asked by {})", namespace,
                    source.name(), to, deadlineMs, by);
            long deadline = start + TimeUnit.MILLISECONDS.toNanos(deadlineMs);
            AtomicInteger forced = new AtomicInteger();
            AtomicLong lockDelayMs = new AtomicLong();
            return freeze(source, namespace, to)
                    .thenCompose(x -> drain(source, namespace, deadline, forced, lockDelayMs, by,
                            new java.util.concurrent.atomic.AtomicBoolean()))
                    .thenCompose(x -> after(Duration.ofMillis(lockDelayMs.get())))
                    .thenCompose(x -> FloorRaise.tokenNow(source.zk(), source.guard().tokens()))
                    .thenCompose(sourceToken -> !rule.raisesFloor() ? CompletableFuture.completedFuture(-1L)
                            : FloorRaise.above(target.zk(), target.guard().tokens(), sourceToken,
                            "namespace " + namespace + " moved in from cell " + source.name()))
                    .thenCompose(floor -> target.routing().update(r -> r.serving(namespace, true, target.routing().isDefault()))
                            .thenCompose(s -> source.routing().update(r -> r.unfreeze(namespace)
                                    .serving(namespace, false, source.routing().isDefault())))
                            .thenApply(s -> {
                                long took = TimeUnit.NANOSECONDS.toMillis(clock.read() - start);
                                log.info("moved namespace {} from cell {} to cell {} in {} ms ({} holds and waits ended at "
                                        + "the deadline; token floor of {} {})", namespace, source.name(), to, took,
                                        forced.get(), to, floor < 0 ? "already above" : "raised to " + floor);
                                audit.record("move-namespace", namespace, "from cell " + source.name() + " to cell " + to,
                                        by, "moved in " + took + " ms, " + forced.get() + " ended at the deadline");
                                return new MoveResult(namespace, source.name(), to, forced.get(), floor, took);
                            }));
        });
    }

    /** Every cell's routes read again (with a sync), so that the move starts from what the cells say now. */
    private CompletableFuture<Void> fresh() {
        List<CompletableFuture<?>> loads = new ArrayList<>();
        for (CellRuntime cell : router.all()) {
            loads.add(cell.zk().sync(io.warden.service.zk.CellPaths.ROUTING).thenCompose(v -> cell.routing().load()));
        }
        return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new));
    }

    /** The cell the namespace is frozen in (a move under way), else the one that serves it. */
    private CellRuntime sourceOf(String namespace) {
        for (CellRuntime cell : router.all()) {
            if (cell.routing().frozen(namespace)) {
                return cell;
            }
        }
        return router.cellOf(namespace);
    }

    /** Step 1: frozen in the source towards {@code to}; refused when it is frozen towards another cell meanwhile. */
    private CompletableFuture<CellRoutes> freeze(CellRuntime source, String namespace, String to) {
        return source.routing().update(r -> {
            String already = r.movingTo(namespace);
            if (already != null && !already.equals(to)) {
                throw WardenException.conflict("namespace " + namespace + " is being moved from cell " + source.name()
                        + " to cell " + already + " (asked meanwhile)");
            }
            if (already == null && !r.serves(namespace, source.routing().isDefault())) {
                throw WardenException.conflict("cell " + source.name() + " no longer serves namespace " + namespace
                        + " (moved meanwhile); ask again");
            }
            return r.freeze(namespace, to);
        }).thenApply(s -> s.routes());
    }

    /**
     * Step 2: until the source has no entry of the namespace, looked at every {@link #DRAIN_POLL}; past the deadline,
     * every entry left is ended once (waiters by request, then holders by token), and the longest lock-delay of their
     * sessions is kept in {@code lockDelayMs}. Holds of expired sessions kept for their lock-delay are not ended: the
     * drain waits for them to go (at most {@code SessionManager.MAX_LOCK_DELAY_MS}), so the new cell never grants a
     * name before the lock-delay of its last holder in the old cell has passed.
     */
    private CompletableFuture<Void> drain(CellRuntime source, String namespace, long deadline, AtomicInteger forced,
                                          AtomicLong lockDelayMs, String by, java.util.concurrent.atomic.AtomicBoolean endedAlready) {
        return live(source, namespace, null, new ArrayList<>()).thenCompose(locks -> {
            if (locks.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            if (clock.read() < deadline || endedAlready.get()) {
                // Before the deadline, or after it once the rest was ended: what is left is ending by itself (a hold
                // of an expired session kept for its lock-delay, at most a minute, or an end under way).
                return after(DRAIN_POLL).thenCompose(v -> drain(source, namespace, deadline, forced, lockDelayMs, by,
                        endedAlready));
            }
            List<CompletableFuture<Void>> ends = new ArrayList<>();
            for (LockSummary lock : locks) {
                ends.add(end(source, LockName.parse(lock.name()), forced, lockDelayMs, by));
            }
            return CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                endedAlready.set(true);
                return drain(source, namespace, deadline, forced, lockDelayMs, by, endedAlready);
            });
        });
    }

    /** Every live lock of the namespace in the cell, page by page. */
    private CompletableFuture<List<LockSummary>> live(CellRuntime cell, String namespace, String after, List<LockSummary> out) {
        return cell.service().locks(namespace, null, PAGE, after).thenCompose(page -> {
            out.addAll(page.locks());
            return page.nextAfter() == null ? CompletableFuture.completedFuture(out)
                    : live(cell, namespace, page.nextAfter(), out);
        });
    }

    /** Ends every Warden entry of the lock in the source: holders by token, waiters by request id; a foreign one fails. */
    private CompletableFuture<Void> end(CellRuntime source, LockName name, AtomicInteger forced, AtomicLong lockDelayMs,
                                        String by) {
        return source.service().lock(name).thenCompose(view -> {
            if (view.tooLargeEntries() > 0) {
                throw WardenException.conflict("lock " + name + " has " + view.tooLargeEntries() + " entries, too many "
                        + "for this gateway to read: the move cannot end them; namespace " + name.namespace()
                        + " stays frozen until they are gone and the move is asked again");
            }
            // The waiters first, so that ending a hold grants nobody; then the holders.
            List<CompletableFuture<?>> waits = new ArrayList<>();
            for (io.warden.service.api.Waiter w : view.waiters()) {
                waits.add(endOne(source, name, w.sessionId(), "waiting request " + w.requestId(), by,
                        () -> source.service().cancel(w.sessionId(), name, w.requestId()), forced, lockDelayMs));
            }
            return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                List<CompletableFuture<?>> holds = new ArrayList<>();
                for (io.warden.service.api.Holder h : view.holders()) {
                    if (h.expired()) {
                        continue; // an expired session's hold kept for its lock-delay: it goes by itself, then
                    }
                    holds.add(endOne(source, name, h.sessionId(), "hold with token " + h.token(), by,
                            () -> source.service().release(h.sessionId(), name, h.token()), forced, lockDelayMs));
                }
                return CompletableFuture.allOf(holds.toArray(CompletableFuture[]::new));
            });
        });
    }

    private CompletableFuture<Void> endOne(CellRuntime source, LockName name, String sessionId, String what, String by,
                                           java.util.function.Supplier<CompletableFuture<Boolean>> ending,
                                           AtomicInteger forced, AtomicLong lockDelayMs) {
        if (sessionId == null) {
            return CompletableFuture.failedFuture(WardenException.conflict("lock " + name + " has a " + what + " of a "
                    + "plain ZooKeeper client (direct mode), which Warden cannot end: namespace " + name.namespace()
                    + " stays frozen until that client lets go and the move is asked again"));
        }
        return source.sessions().view(sessionId).handle((v, err) -> err == null ? v.lockDelayMs() : 0L)
                .thenCompose(delay -> ending.get().thenApply(ended -> {
                    if (ended) {
                        forced.incrementAndGet();
                        lockDelayMs.accumulateAndGet(delay, Math::max);
                        audit.record("move-end", name.toString(), "the " + what + " of session " + sessionId
                                + " was still there at the move's deadline", by, "ended");
                    }
                    return null;
                }));
    }

    private CompletableFuture<Void> after(Duration delay) {
        if (delay.isZero() || delay.isNegative()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        clock.schedule(delay, () -> done.complete(null));
        return done;
    }
}
