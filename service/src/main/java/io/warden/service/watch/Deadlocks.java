package io.warden.service.watch;

import io.warden.service.api.Deadlock;
import io.warden.service.api.DeadlockAction;
import io.warden.service.time.Clock;
import io.warden.service.time.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.Function;

/**
 * The gateway's deadlocks, kept from the watch mirror (docs/decisions/0013-deadlock-detection.md): after each applied
 * transaction the graph is marked stale, and recomputed ({@link DeadlockGraph}) at most once per
 * {@link #RECOMPUTE_INTERVAL}, and never sooner than {@link #PAUSE_PER_COMPUTE_TIME} times the last computation's
 * duration after its end; the cycles found are what {@code GET /v1/deadlocks} shows, each with the revision and the
 * time this gateway first saw it as it is. A cycle with a victim (a member request that said FAIL) that has stayed the
 * same for the delay is handed to the breaker ({@code act}: one conditional {@code multi}) — by the gateway that holds
 * the victim's call at once, by every other gateway only after {@link #ORPHAN_GRACE} more.
 *
 * <p>Share of the hub's thread: a computation that took {@code d} is followed by at least
 * {@code PAUSE_PER_COMPUTE_TIME × d} of the thread doing other work (delivering watch events), so the graph takes at
 * most {@code 1 / (1 + PAUSE_PER_COMPUTE_TIME)} (a fifth) of the thread however large the mirror is; a large graph is
 * found later, not at the cost of watch delivery. At 1,000,000 waiters (about a second per computation) the cycles
 * are at most about five seconds old. The thread's time is real time whatever the gateway's clock: the duration is read
 * on the {@code cost} ticker ({@link Ticker#system()} but in this class's own tests) and the pause waited on the hub's
 * executor, as the interval is (a test's manual clock, moved by another thread during a computation, would otherwise
 * look like a long computation and hold the next one until the test moves it again).
 *
 * <p>Concurrency: everything but {@link #report} is confined to the watch hub's thread; {@link #report} is an immutable
 * value published through a volatile field, read from any thread. Bounded: {@code firstSeen} and {@code attempted} by
 * the cycles of the last computation (entries of cycles gone are dropped at each computation); the report's edges by
 * {@link DeadlockGraph#MAX_EDGES}.
 */
final class Deadlocks {
    private static final Logger log = LoggerFactory.getLogger(Deadlocks.class);
    /** How often, at most, the graph is recomputed while the mirror changes (real time: it decides when, not what). */
    static final Duration RECOMPUTE_INTERVAL = Duration.ofMillis(50);
    /** After a computation that took {@code d}, the next starts no sooner than this times {@code d} after its end. */
    static final int PAUSE_PER_COMPUTE_TIME = 4;
    /** What a gateway that does not hold the victim's call waits on top of the delay before it acts itself. */
    static final Duration ORPHAN_GRACE = Duration.ofSeconds(1);

    /**
     * The cycles as of a computation at {@code computedNanos} ({@link Clock#read()}), and the graph's edges (at most
     * {@link DeadlockGraph#MAX_EDGES}, the cycles' first, of {@code edgeCount}); {@code stale} while the mirror is being
     * rebuilt (they may be gone).
     */
    record Report(List<Cycle> cycles, List<io.warden.service.api.WaitEdge> edges, int edgeCount, long revision,
                  long computedNanos, boolean stale) {
        static final Report NONE = new Report(List.of(), List.of(), 0, 0, 0, true);

        Report asStale() {
            return new Report(cycles, edges, edgeCount, revision, computedNanos, true);
        }
    }

    /** One cycle and when this gateway first saw it ({@link Clock#read()} nanos). */
    record Cycle(List<Deadlock.Member> members, long sinceRevision, long sinceNanos) {
    }

    private final ScheduledExecutorService hub;
    private final Clock clock;
    private final LockMirror mirror;
    private final Function<List<MirroredLock>, DeadlockGraph.Result> graph;
    /** Reads how long a computation took (real time in production). */
    private final Ticker cost;
    private volatile Report report = Report.NONE;
    /** Where a cycle's victim goes: the breaker (a {@code multi}); true when it committed. Null: report only. */
    private volatile Function<DeadlockAction, CompletableFuture<Boolean>> act;
    /** Whether this gateway holds a call of (session, request uuid). */
    private volatile BiPredicate<String, String> heldHere = (s, r) -> false;
    private volatile Duration delay = Duration.ofMillis(200);

    // Confined to the hub's thread:
    private boolean stale;
    private boolean scheduled;
    private boolean exact;
    private long revision;
    private List<DeadlockGraph.Found> found = List.of();
    private final Map<String, long[]> firstSeen = new HashMap<>(); // signature -> {nanos, revision}
    private final Map<String, Long> attempted = new HashMap<>();   // signature -> nanos of the last attempt
    private volatile long computations; // written on the hub thread only
    private Clock.Cancellable dueTimer;
    /** When (on {@link #cost}) the next computation may start: the end of the last plus its pause. */
    private long notBefore;
    private boolean paced;

    Deadlocks(ScheduledExecutorService hub, Clock clock, LockMirror mirror) {
        this(hub, clock, mirror, DeadlockGraph::compute, Ticker.system());
    }

    /**
     * With {@code graph} in place of {@link DeadlockGraph#compute} and {@code cost} reading its duration (tests: a
     * computation that takes a given time).
     */
    Deadlocks(ScheduledExecutorService hub, Clock clock, LockMirror mirror,
              Function<List<MirroredLock>, DeadlockGraph.Result> graph, Ticker cost) {
        this.hub = hub;
        this.cost = cost;
        this.clock = clock;
        this.mirror = mirror;
        this.graph = graph;
    }

    /** Sets the breaker, the held-call test and the delay (before the hub starts). */
    void breaker(Function<DeadlockAction, CompletableFuture<Boolean>> act, BiPredicate<String, String> heldHere, Duration delay) {
        this.act = act;
        this.heldHere = heldHere;
        this.delay = delay;
    }

    Report report() {
        return report;
    }

    /** Computations so far (tests: the graph costs what it says). */
    long computations() {
        return computations;
    }

    /** Hub thread: the mirror is exact as of {@code zxid} and changed (or became exact again). */
    void changed(long zxid) {
        exact = true;
        revision = zxid;
        stale = true;
        if (!scheduled) {
            scheduled = true;
            try {
                hub.schedule(this::recompute, RECOMPUTE_INTERVAL.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                scheduled = false; // the hub is stopping
            }
        }
    }

    /** Hub thread: the mirror is being rebuilt; the cycles shown are marked stale until it is exact again. */
    void rebuilding() {
        exact = false;
        report = report.asStale();
    }

    private void recompute() {
        scheduled = false;
        if (!stale || !exact) {
            return;
        }
        long start = cost.read();
        if (paced && start - notBefore < 0) {
            // The last computation's pause is not over: look again when it is.
            scheduled = true;
            try {
                hub.schedule(this::recompute, notBefore - start, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // stopping
            }
            return;
        }
        stale = false;
        computations++;
        DeadlockGraph.Result result;
        try {
            result = graph.apply(mirror.contendedLocks());
        } catch (RuntimeException e) {
            log.warn("deadlocks: could not compute the wait-for graph at revision {}", revision, e);
            return;
        } finally {
            long end = cost.read();
            notBefore = end + PAUSE_PER_COMPUTE_TIME * Math.max(0, end - start);
            paced = true;
        }
        List<DeadlockGraph.Found> now = result.deadlocks();
        long t = clock.read();
        Map<String, long[]> seen = new HashMap<>();
        List<Cycle> cycles = new ArrayList<>(now.size());
        for (DeadlockGraph.Found f : now) {
            long[] since = firstSeen.getOrDefault(f.signature(), new long[] {t, revision});
            seen.put(f.signature(), since);
            cycles.add(new Cycle(f.members(), since[1], since[0]));
            if (!firstSeen.containsKey(f.signature())) {
                log.info("deadlock of {} sessions found at revision {} (victim: {})",
                        f.members().stream().map(Deadlock.Member::sessionId).distinct().count(), revision,
                        f.victim() == null ? "none: every member said WAIT" : f.victim().request());
            }
        }
        firstSeen.clear();
        firstSeen.putAll(seen);
        attempted.keySet().retainAll(seen.keySet());
        found = now;
        report = new Report(List.copyOf(cycles), result.edges(), result.edgeCount(), revision, t, false);
        actOnDue();
    }

    /** Hands every cycle whose victim is due to the breaker; schedules a look for the next one due. */
    private void actOnDue() {
        Function<DeadlockAction, CompletableFuture<Boolean>> breaker = act;
        if (breaker == null || !exact) {
            return;
        }
        long t = clock.read();
        long nextDue = Long.MAX_VALUE;
        for (DeadlockGraph.Found f : found) {
            if (f.victim() == null) {
                continue;
            }
            long[] since = firstSeen.get(f.signature());
            boolean mine = heldHere.test(f.victim().sessionId(), f.victim().request());
            long wait = delay.toNanos() + (mine ? 0 : ORPHAN_GRACE.toNanos());
            Long last = attempted.get(f.signature());
            long due = last == null ? since[0] + wait : last + delay.toNanos() + ORPHAN_GRACE.toNanos();
            if (t - due < 0) {
                nextDue = Math.min(nextDue, due - t);
                continue;
            }
            attempted.put(f.signature(), t);
            nextDue = Math.min(nextDue, delay.toNanos() + ORPHAN_GRACE.toNanos());
            List<DeadlockAction.NodeRef> victimNodes = new ArrayList<>();
            for (Map.Entry<String, MirroredLock.Node> e : mirror.nodesOfRequest(f.victim().sessionId(), f.victim().request())) {
                victimNodes.add(new DeadlockAction.NodeRef(e.getKey(), e.getValue().entry().node()));
            }
            DeadlockAction action = new DeadlockAction(new Deadlock(f.members(), since[1], 0), f.checks(),
                    f.victim().sessionId(), f.victim().request(), victimNodes);
            breaker.apply(action).whenComplete((ok, err) -> log.debug("deadlock victim {} of session {}: {}",
                    action.victimRequest(), action.victimSession(), err != null ? err.toString()
                            : ok ? "removed" : "the cycle was no longer current"));
        }
        if (nextDue != Long.MAX_VALUE) {
            // Due later: look again then on the gateway's clock (the mirror may not change meanwhile).
            if (dueTimer != null) {
                dueTimer.cancel();
            }
            dueTimer = clock.schedule(Duration.ofNanos(nextDue), () -> {
                try {
                    hub.execute(this::actOnDue);
                } catch (RejectedExecutionException e) {
                    // stopping
                }
            });
        }
    }
}
