package io.warden.service.cell;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.warden.service.api.WardenException;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Refuses a cell that lost committed state (a rolled-back ensemble) before it can hand out a token twice.
 *
 * <p><b>What a rollback is.</b> A ZooKeeper quorum made only of servers that missed recent writes — a server back from
 * maintenance and one whose disk was replaced — has none of those writes, and its leader counts zxids over the same
 * range again. Tokens are zxids, so it would give new grants the tokens of grants it forgot. ZooKeeper's client refuses
 * a server behind the zxid it has seen only within one ZooKeeper session; a new session (after an expiry, or a restart)
 * starts from nothing. So the gateway checks itself.
 *
 * <p><b>The evidence.</b> Every reply and notification moves the highest zxid this gateway has seen ({@link HighWater});
 * it is folded into a token mark (zxid + the floor for it) while the gateway serves, and written to
 * {@code <data-dir>/high-water/<cell id>.json} every {@link #PERSIST_EVERY} and at shutdown ({@link HighWaterFile}).
 *
 * <p><b>The check</b>, at start, after every reconnection and new ZooKeeper session, and whenever the token floor
 * changes while the cell is refused: read the token floor again ({@link TokenFloor#reload}), then write {@code /probe}: the write's zxid is
 * the cell's newest. The cell can be served when {@code zxid + floor} (below every token it will hand out from now on) is
 * at least the token mark as it was when the probe's reply came (what comes after that reply is newer than the probe:
 * other gateways go on writing while a check made during service finishes); otherwise it was rolled back:
 * {@link State#ROLLED_BACK}. While a check is under way
 * ({@link State#CHECKING}) calls wait for it (at most {@link #CHECK_WAIT}).
 *
 * <p><b>The way out</b> is the operator's: raise the token floor above the mark ({@code token-floor raise}); the raise's
 * notification starts a check, which then passes. Nothing else lifts the refusal, except a check that finds the cell's
 * own zxids past the mark (writes of other clients), which equally puts every new token above every token this gateway
 * saw: after a reconnection, or when {@code token-floor raise} found nothing to raise for that reason (it touches the
 * floor's node, and the gateway checks again once it has read the floor).
 *
 * <p>Concurrency: the state and the callers waiting on it are guarded by {@code this}; {@code state} is also volatile
 * for the fast path. Checks run on Curator's threads and ZooKeeper's event thread; the housekeeping (persisting the mark,
 * re-checking) on one thread of its own ({@code warden-high-water}), on real time: it writes a file, and a slow disk
 * must not delay the gateway's clock.
 */
public final class CellGuard implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CellGuard.class);
    /** How often the high-water mark is written while it moves: what a crash of the gateway can lose of it. */
    public static final Duration PERSIST_EVERY = Duration.ofSeconds(1);
    /** How long a call waits for a check under way before it is answered 503. */
    static final Duration CHECK_WAIT = Duration.ofSeconds(2);
    private static final Duration TICK = Duration.ofMillis(500);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    public enum State { CHECKING, SERVING, ROLLED_BACK }

    private final Zk zk;
    private final Clock clock;
    private final Path dataDir;
    private final String gatewayId;
    private final HighWater highWater = new HighWater();
    private final TokenFloor floor;
    private final ScheduledExecutorService housekeeping;
    private final AtomicLong detections = new AtomicLong();
    private final ConnectionStateListener reconnects = (c, s) -> {
        if (s == ConnectionState.RECONNECTED) {
            check();
        } else if (s == ConnectionState.LOST) {
            unsettle();
        }
    };
    private volatile State state = State.CHECKING;
    private volatile Consumer<WardenException> onRolledBack = e -> { };
    private volatile boolean stopped;
    // Guarded by this:
    private String detail;
    /** Why the checks keep failing, when that says more than "ZooKeeper trouble" (a missing token floor), or null. */
    private String checkFailure;
    private boolean checking;
    private boolean checkAgain;
    private long lastCheckNanos;
    private long lastPersistNanos;
    private long written = -1;
    private String cellId;
    private HighWaterFile file;
    private boolean warnedWrite;
    private final List<CompletableFuture<Void>> waiting = new ArrayList<>();
    private final List<CompletableFuture<Void>> untilServing = new ArrayList<>();
    private final CompletableFuture<State> firstDecision = new CompletableFuture<>();

    public CellGuard(Zk zk, String chroot, Path dataDir, Clock clock, String gatewayId, MeterRegistry registry) {
        this.zk = zk;
        this.clock = clock;
        this.dataDir = dataDir;
        this.gatewayId = gatewayId;
        this.floor = new TokenFloor(zk, chroot, highWater::raw);
        this.housekeeping = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warden-high-water");
            t.setDaemon(true);
            return t;
        });
        floor.onRaise(() -> {
            if (state == State.ROLLED_BACK) {
                check();
            }
        });
        floor.onConnection(this::connectionEvent);
        zk.onZxid(highWater::observe);
        Gauge.builder("warden.zookeeper.rolled.back", this, g -> g.state == State.ROLLED_BACK ? 1 : 0)
                .description("1 while this gateway refuses its cell because it lost committed state (a rolled-back "
                        + "ensemble); see docs/operations.md").register(registry);
        FunctionCounter.builder("warden.zookeeper.rollbacks.detected", detections, AtomicLong::get)
                .description("times this gateway found its cell behind what it had seen").register(registry);
        Gauge.builder("warden.token.floor", floor, TokenFloor::current)
                .description("the cell's token floor: every new token is a zxid plus it").register(registry);
        Gauge.builder("warden.high.water.token", highWater, HighWater::token)
                .description("the highest token this gateway has seen of its cell (its high-water mark)")
                .register(registry);
    }

    /** The cell's tokens: czxid plus the floor in force for it. */
    public TokenFloor tokens() {
        return floor;
    }

    /** Told once per detection, with the refusal every call now gets. */
    public void onRolledBack(Consumer<WardenException> listener) {
        onRolledBack = listener;
    }

    /** Every zxid the gateway sees in other ways than {@link Zk}'s replies (the watch feed's notifications). */
    public void observe(long zxid) {
        highWater.observe(zxid);
    }

    /**
     * Reads the cell's identity and this gateway's mark of it, then checks the cell (waiting up to {@code timeout}).
     * The gateway starts either way: a rolled-back cell is refused, not a reason not to start.
     *
     * @throws IllegalStateException when the check could not be made (ZooKeeper out of reach) or the mark is unreadable
     */
    public void start(Duration timeout) throws Exception {
        String id = cellId();
        HighWaterFile f = new HighWaterFile(dataDir, id);
        f.read().ifPresent(highWater::remember);
        synchronized (this) {
            cellId = id;
            file = f;
        }
        zk.client().getConnectionStateListenable().addListener(reconnects);
        housekeeping.scheduleWithFixedDelay(this::tick, TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS);
        check();
        try {
            firstDecision.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("could not compare the cell's zxid with this gateway's high-water mark "
                    + f.path() + " within " + timeout.toMillis() + " ms");
        }
        if (highWater.token() > 0) {
            log.info("cell {}: high-water mark {} (token), {}", id, highWater.token(), f.path());
        }
    }

    /** The cell's id, made (a random one) by the first gateway. */
    private String cellId() throws Exception {
        try {
            zk.client().create().withMode(CreateMode.PERSISTENT)
                    .forPath(CellPaths.CELL, Json.write(Map.of("cell_id", UUID.randomUUID().toString())));
        } catch (KeeperException.NodeExistsException made) {
            // by another gateway or an earlier run
        }
        CellRecord record = Json.readOrNull(zk.client().getData().forPath(CellPaths.CELL), CellRecord.class);
        if (record == null || record.cellId() == null || !record.cellId().matches("[A-Za-z0-9-]{1,64}")) {
            throw new IllegalStateException("the cell's identity node " + CellPaths.CELL + " does not hold a cell id");
        }
        return record.cellId();
    }

    record CellRecord(String cellId) {
    }

    public State state() {
        return state;
    }

    /** Whether the gateway serves its cell now. */
    public boolean serving() {
        return state == State.SERVING;
    }

    /** Why the gateway refuses its cell, or null while it does not (refuses for this reason, that is). */
    public synchronized String refusal() {
        return state == State.ROLLED_BACK ? detail : null;
    }

    /**
     * For {@code /health/ready}: the refusal while the cell is refused; while checks keep failing for a reason an
     * operator must act on (the cell has no token floor node), that reason; else null.
     */
    public synchronized String notReadyDetail() {
        return state == State.ROLLED_BACK ? detail : state == State.CHECKING ? checkFailure : null;
    }

    /**
     * Completes when the gateway serves its cell: at once while it does; after the check under way; failed with
     * UNAVAILABLE while the cell is refused, while ZooKeeper is out of reach, or when the check takes more than
     * {@link #CHECK_WAIT}.
     */
    public CompletableFuture<Void> whenServing() {
        State s = state;
        if (s == State.SERVING) {
            return DONE;
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (this) {
            if (state == State.SERVING) {
                return DONE;
            }
            if (state == State.ROLLED_BACK) {
                return CompletableFuture.failedFuture(WardenException.unavailable(detail, null));
            }
            try {
                zk.failFast();
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
            waiting.add(f);
        }
        Clock.Cancellable timeout = clock.schedule(CHECK_WAIT, () -> {
            if (f.completeExceptionally(WardenException.unavailable("this gateway is checking that its ZooKeeper cell "
                    + "has not lost state since it last saw it, after a reconnection; try again", null))) {
                synchronized (this) {
                    waiting.remove(f);
                }
            }
        });
        f.whenComplete((v, e) -> timeout.cancel());
        return f;
    }

    /** Completes when the gateway serves its cell, however long that takes (the watch mirror's rebuilds wait on it). */
    public CompletableFuture<Void> untilServing() {
        synchronized (this) {
            if (state == State.SERVING) {
                return DONE;
            }
            CompletableFuture<Void> f = new CompletableFuture<>();
            untilServing.add(f);
            return f;
        }
    }

    // ------------------------------------------------------------------ the check

    /** ZooKeeper's event thread, in order: a disconnection or an expired session. */
    private void connectionEvent(Watcher.Event.KeeperState s) {
        synchronized (this) {
            if (state == State.SERVING) {
                highWater.fold(floor.history()); // every reply of the old connection is in; none of the next yet
            }
        }
        unsettle();
    }

    /** Until the next check, calls wait (or fail fast while ZooKeeper is out of reach). */
    private synchronized void unsettle() {
        if (state == State.SERVING) {
            state = State.CHECKING;
        }
    }

    /** Starts a check, or asks the one under way to run again when it ends. */
    void check() {
        synchronized (this) {
            if (stopped) {
                return;
            }
            if (checking) {
                checkAgain = true;
                return;
            }
            checking = true;
            lastCheckNanos = System.nanoTime();
        }
        CompletableFuture<Probe> looked = floor.reload().thenCompose(v -> probe())
                .thenCompose(p -> keepIdentity().thenApply(v -> p));
        looked.whenComplete((probe, err) -> {
            boolean again;
            Runnable then = () -> { };
            synchronized (this) {
                checking = false;
                again = checkAgain;
                checkAgain = false;
                if (err == null && !stopped) {
                    then = decide(probe);
                }
            }
            then.run();
            if (err != null) {
                noteFailure(Zk.unwrap(err));
                log.debug("could not check the cell's zxid ({}); checking again shortly", Zk.unwrap(err).toString());
                if (!firstDecision.isDone() && !zk.connected()) {
                    return; // start() reports it; the next reconnection checks again
                }
            }
            if (again) {
                check();
            }
        });
    }

    /**
     * A check failed. The token floor's node missing is not a passing trouble: the ensemble lost every write (all its
     * servers started empty, a rollback to before the cell's first gateway) or someone deleted it. The gateway does not
     * make it again (an empty one would lower the floor of a cell that had one); the operator's raise does, and says so.
     */
    private void noteFailure(Throwable cause) {
        String failure = null;
        if (cause instanceof KeeperException ke && ke.code() == KeeperException.Code.NONODE && ke.getPath() != null
                && ke.getPath().endsWith(CellPaths.TOKEN_FLOOR)) {
            long mark = highWater.token();
            failure = "this gateway cannot check its ZooKeeper cell: the cell has no token floor node ("
                    + CellPaths.TOKEN_FLOOR + "), so the ensemble lost its data (every server started empty?) or the "
                    + "node was deleted. Nothing is served until an operator raises the token floor above every token "
                    + "given out: java -jar warden-service.jar token-floor raise --above " + mark + " --zk <ensemble> (the "
                    + "largest --above any gateway reports); see docs/operations.md, \"Recovering from a rolled-back "
                    + "ensemble\"";
        }
        boolean first;
        String id;
        synchronized (this) {
            first = failure != null && !failure.equals(checkFailure);
            checkFailure = failure;
            id = cellId;
        }
        if (first) {
            log.error("cell {}: {}", id, failure);
        }
    }

    /**
     * The probe's zxid, and what this gateway had seen when its reply came: the highest zxid, its token mark, the floor.
     * Only that counts against the probe. Replies and notifications that come after it (other gateways' writes made
     * after the probe, before the check decides) are newer than the probe, not a sign that the cell went back.
     */
    private record Probe(long zxid, long seen, long mark, long floor) {
    }

    /** What this gateway has seen, as the probe's reply comes (on ZooKeeper's event thread, in order with replies). */
    private Probe seenAt(Stat stat) {
        return new Probe(stat.getMzxid(), highWater.raw(), highWater.token(), floor.current());
    }

    /** Writes {@code /probe}: its zxid is the newest of the cell, committed by a quorum. */
    private CompletableFuture<Probe> probe() {
        return zk.setData(CellPaths.PROBE, new byte[0], -1).handle((stat, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(seenAt(stat));
            }
            if (Zk.code(err) == KeeperException.Code.NONODE) {
                // Lost with the rest (a rollback to before the cell's first gateway), or removed by hand.
                return zk.create(CellPaths.PROBE, new byte[0], CreateMode.PERSISTENT, false).handle((n, e) -> null)
                        .thenCompose(v -> zk.setData(CellPaths.PROBE, new byte[0], -1)).thenApply(this::seenAt);
            }
            return CompletableFuture.<Probe>failedFuture(err);
        }).thenCompose(f -> f);
    }

    /**
     * Makes {@code /cell} again with the id this gateway knows when the cell lost it (a rollback to before the cell's
     * first gateway): the cell keeps its identity, and with it the high-water marks kept under that id.
     */
    private CompletableFuture<Void> keepIdentity() {
        String id;
        synchronized (this) {
            id = cellId;
        }
        if (id == null) {
            return DONE;
        }
        return zk.exists(CellPaths.CELL).thenCompose(stat -> stat != null ? DONE
                : zk.create(CellPaths.CELL, Json.write(Map.of("cell_id", id)), CreateMode.PERSISTENT, false)
                        .handle((n, e) -> (Void) null));
    }

    /**
     * Under this monitor: the cell was at {@code probe.zxid} when the probe was written. Returns what to do once the
     * monitor is released.
     */
    private Runnable decide(Probe probe) {
        checkFailure = null;
        long zxid = probe.zxid();
        if (zxid < probe.seen()) {
            highWater.restart(zxid); // the zxids seen before the probe are of a history the cell no longer has
        }
        highWater.observe(zxid);
        long floorNow = probe.floor();
        long mark = probe.mark();
        long next = zxid + floorNow; // every node made after the probe has a larger czxid, so a token above this
        Runnable then = next >= mark ? serve(zxid, floorNow, mark) : refuse(zxid, floorNow, mark);
        firstDecision.complete(state);
        return then;
    }

    private Runnable serve(long zxid, long floorNow, long mark) {
        State was = state;
        state = State.SERVING;
        detail = null;
        List<CompletableFuture<Void>> ready = new ArrayList<>(waiting);
        ready.addAll(untilServing);
        waiting.clear();
        untilServing.clear();
        return () -> {
            if (was == State.ROLLED_BACK) {
                log.warn("cell {} serves again: at zxid {} with token floor {}, every new token is above {}, the highest "
                        + "this gateway had seen", cellId, zxid, floorNow, mark);
                housekeeping.execute(this::persistNow);
            }
            ready.forEach(f -> f.complete(null));
        };
    }

    private Runnable refuse(long zxid, long floorNow, long mark) {
        State was = state;
        state = State.ROLLED_BACK;
        detail = "the ZooKeeper cell was rolled back: it lost committed state (a quorum of servers that had missed "
                + "recent writes, such as a server back from maintenance and one started with an empty data directory). "
                + "This gateway has seen tokens up to " + mark + ", but the cell is at zxid " + zxid + " with token floor "
                + floorNow + ", so it would hand out tokens from " + (zxid + floorNow + 1) + " again. Grants, "
                + "keepalives and watches are refused until an operator raises the token floor above every token given "
                + "out: java -jar warden-service.jar token-floor raise --above " + mark + " --zk <ensemble> (the largest "
                + "--above any gateway reports); see docs/operations.md, \"Recovering from a rolled-back ensemble\"";
        WardenException refusal = WardenException.unavailable(detail, null);
        List<CompletableFuture<Void>> refused = new ArrayList<>(waiting);
        waiting.clear();
        String logged = detail;
        return () -> {
            refused.forEach(f -> f.completeExceptionally(refusal));
            if (was != State.ROLLED_BACK) {
                detections.incrementAndGet();
                log.error("cell {} refused: {}", cellId, logged);
                onRolledBack.accept(refusal);
            }
        };
    }

    // ------------------------------------------------------------------ housekeeping (its own thread)

    private void tick() {
        try {
            boolean recheck;
            boolean persist;
            synchronized (this) {
                if (stopped) {
                    return;
                }
                long since = System.nanoTime() - lastCheckNanos;
                // A check that failed (ZooKeeper trouble) is tried again. A refused cell is looked at again only when
                // its floor changes or the connection is new: a look writes /probe, and a refusing gateway must not
                // move the cell's zxids towards its own mark.
                recheck = !checking && zk.connected() && state == State.CHECKING && since > TICK.toNanos();
                if (state == State.SERVING) {
                    highWater.fold(floor.history());
                }
                persist = System.nanoTime() - lastPersistNanos >= PERSIST_EVERY.toNanos();
            }
            if (recheck) {
                check();
            }
            if (persist) {
                persistNow();
            }
        } catch (RuntimeException e) {
            log.warn("high-water housekeeping failed: {}", e.toString());
        }
    }

    /** Writes the mark when it moved since the last write. */
    private void persistNow() {
        HighWaterFile f;
        long token;
        synchronized (this) {
            f = file;
            token = highWater.token();
            if (f == null || token == written) {
                return;
            }
        }
        try {
            f.write(token, highWater.raw(), floor.current(), gatewayId);
            synchronized (this) {
                written = token;
                lastPersistNanos = System.nanoTime();
            }
        } catch (RuntimeException e) {
            synchronized (this) {
                if (!warnedWrite) {
                    warnedWrite = true;
                    log.error("cannot write the high-water mark {} ({}): a restart of this gateway would not know how far "
                            + "the cell got; fix --data-dir", f.path(), e.toString());
                }
            }
        }
    }

    /** Stops checking and writes the mark one last time. */
    @Override
    public void close() {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
            if (state == State.SERVING) {
                highWater.fold(floor.history());
            }
        }
        zk.client().getConnectionStateListenable().removeListener(reconnects);
        housekeeping.shutdown(); // a write under way finishes (interrupting it would close its file channel)
        try {
            housekeeping.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        persistNow();
    }
}
