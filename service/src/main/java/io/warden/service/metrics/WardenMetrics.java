package io.warden.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The gateway's engine metrics (Micrometer; exported as Prometheus text at {@code /metrics}):
 * <ul>
 *   <li>{@code warden_acquire_seconds{outcome}} — acquire latency by outcome (granted, queued, timed_out, error)</li>
 *   <li>{@code warden_handoff_seconds} — from a release on this gateway to the next grant it promotes here</li>
 *   <li>{@code warden_queue_depth} — queue length seen by each acquire (a histogram); {@code warden_waiters_pending} —
 *       held calls</li>
 *   <li>{@code warden_grants_total}, {@code warden_releases_total{result}}, {@code warden_sessions_tracked},
 *       {@code warden_sessions_expired_total}, {@code warden_keepalives_total{result}},
 *       {@code warden_orphan_entries_removed_total}</li>
 *   <li>{@code warden_cell_locks}, {@code warden_cell_holds}, {@code warden_cell_waiters}, {@code warden_cell_sessions} —
 *       cell-wide, refreshed every 30 s: locks, holds and waiters from the watch mirror, sessions from the shards' child counts ({@code -1} before the first refresh)</li>
 *   <li>{@code warden_zk_connected}, {@code warden_zk_connection_state_total{state}},
 *       {@code warden_zk_operation_seconds{op,result}} (each caller's operation, from when it was made to its answer,
 *       whether it went to ZooKeeper alone or in a batch)</li>
 *   <li>group commit ({@code kind}: write or read): {@code warden_zk_batch_calls{kind}} — callers' operations per request
 *       sent (1: alone; its count is the requests sent), {@code warden_zk_batch_fallbacks_total{kind}} — batches that
 *       failed as a whole and were sent again call by call, {@code warden_zk_batch_queued{kind}} — calls waiting for the
 *       next batch</li>
 *   <li>{@code warden_lock_too_large_entries{lock}} — per lock too large for this gateway to read, its entries as last
 *       counted (at most {@link #MAX_TOO_LARGE_GAUGES} locks; gone once the lock is read again);
 *       {@code warden_zk_max_packet_bytes} — the largest ZooKeeper reply the gateway's client accepts</li>
 *   <li>{@code warden_build_info{version}} — 1, labelled with the artifact's version;
 *       {@code warden_config_limit{setting}} — the configured bounds alert rules compare with</li>
 * </ul>
 * Counters and outcomes that alert rules watch are registered at start, at 0: a series that appears only with its
 * first event has no earlier sample, so {@code rate} and {@code increase} miss that event. Latencies are histograms
 * ({@code _bucket} series), so {@code histogram_quantile} can combine them across gateways. Every meter of one name has
 * the same description: Prometheus keeps one HELP per name.
 * Thread-safety: safe for concurrent use (Micrometer meters are; {@code tooLarge} is a concurrent map of at most
 * {@link #MAX_TOO_LARGE_GAUGES} entries).
 */
public final class WardenMetrics {
    private final MeterRegistry registry;
    private final AtomicInteger connected = new AtomicInteger();
    private final AtomicInteger pendingWaiters = new AtomicInteger();
    /** Cell-wide counts, refreshed periodically by the gateway; -1 until the first refresh. */
    private final AtomicLong cellLocks = new AtomicLong(-1);
    private final AtomicLong cellHolds = new AtomicLong(-1);
    private final AtomicLong cellWaiters = new AtomicLong(-1);
    private final AtomicLong cellSessions = new AtomicLong(-1);
    /** Meters by name and tags, built once: registering on every call costs an id and a map lookup each time. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, DistributionSummary> summaries = new ConcurrentHashMap<>();
    /** Locks with a too-large gauge, most {@link #MAX_TOO_LARGE_GAUGES}: a lock name is a tag, so their number is bounded. */
    public static final int MAX_TOO_LARGE_GAUGES = 100;
    private final Map<String, TooLarge> tooLarge = new ConcurrentHashMap<>();

    private record TooLarge(AtomicInteger entries, Gauge gauge) {
    }

    /** Acquire outcomes: the values of the {@code outcome} tag of {@code warden_acquire_seconds}. */
    static final java.util.List<String> ACQUIRE_OUTCOMES = java.util.List.of("granted", "queued", "timed_out", "error");
    /**
     * Bucket bounds of the HTTP and ZooKeeper latency histograms: few and fixed, as their series are many (one set per
     * route, method and status; per operation and result).
     */
    public static final Duration[] LATENCY_BUCKETS = java.util.stream.Stream.of(1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000,
            2_500, 5_000, 10_000, 30_000, 60_000).map(Duration::ofMillis).toArray(Duration[]::new);
    private static final double[] QUEUE_DEPTH_BUCKETS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 5_000, 10_000};

    /** With {@code version} as {@code warden_build_info}'s label: a gateway's metrics in one registry. */
    public WardenMetrics(MeterRegistry registry, String version) {
        this(registry);
        buildInfo(registry, version);
    }

    /** {@code warden_build_info}, 1 with the artifact's version as its label: once per gateway. */
    public static void buildInfo(MeterRegistry registry, String version) {
        Gauge.builder("warden.build.info", () -> 1).tag("version", version)
                .description("1, labelled with the version of the gateway's artifact").register(registry);
    }

    /**
     * The engine's, sessions' and ZooKeeper client's meters of one cell, without {@code warden_build_info} (the
     * gateway registers that once, {@link #buildInfo}).
     */
    public WardenMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (String outcome : ACQUIRE_OUTCOMES) {
            acquireTimer(outcome);
        }
        handoffTimer();
        queueDepths();
        grants();
        releases(true);
        releases(false);
        expiries();
        orphans();
        for (ConnectionState state : ConnectionState.values()) {
            connectionStates(state);
        }
        for (String kind : java.util.List.of("write", "read")) {
            fallbacks(kind);
        }
        for (String result : java.util.List.of("ok", "takeover", "unavailable", "error")) {
            keepalives(result);
        }
        Gauge.builder("warden.zk.connected", connected, AtomicInteger::get)
                .description("1 while this gateway is connected to ZooKeeper").register(registry);
        Gauge.builder("warden.waiters.pending", pendingWaiters, AtomicInteger::get)
                .description("acquire calls held open on this gateway").register(registry);
        String refreshed = ", refreshed every 30 s (-1 before the first refresh)";
        Gauge.builder("warden.cell.locks", cellLocks, AtomicLong::get)
                .description("live locks (with a holder or waiter) in the cell" + refreshed).register(registry);
        Gauge.builder("warden.cell.holds", cellHolds, AtomicLong::get)
                .description("holds in the cell" + refreshed).register(registry);
        Gauge.builder("warden.cell.waiters", cellWaiters, AtomicLong::get)
                .description("waiting requests in the cell" + refreshed).register(registry);
        Gauge.builder("warden.cell.sessions", cellSessions, AtomicLong::get)
                .description("open sessions in the cell" + refreshed).register(registry);
    }

    /**
     * The configured bounds alerts compare figures with, as {@code warden_config_limit{setting}} (e.g.
     * {@code setting="max-sessions-per-gateway"} against {@code warden_sessions_tracked}).
     */
    public void limits(Map<String, ? extends Number> bySetting) {
        bySetting.forEach((setting, value) -> Gauge.builder("warden.config.limit", () -> value).tag("setting", setting)
                .description("a configured bound of this gateway, by setting name (max-sessions-per-gateway, "
                        + "max-waiters-per-lock, ...)").register(registry));
    }

    /** The largest ZooKeeper reply the gateway's client accepts ({@code zk-max-packet-bytes}). */
    public void zkMaxPacketBytes(int bytes) {
        Gauge.builder("warden.zk.max.packet.bytes", () -> bytes)
                .description("the largest ZooKeeper reply this gateway's client accepts (zk-max-packet-bytes)").register(registry);
    }

    /** A lock found too large to read, with its entries as counted now. */
    public void lockTooLarge(String lock, int entries) {
        TooLarge t = tooLarge.get(lock);
        if (t == null && tooLarge.size() < MAX_TOO_LARGE_GAUGES) {
            t = tooLarge.computeIfAbsent(lock, k -> {
                AtomicInteger value = new AtomicInteger();
                Gauge g = Gauge.builder("warden.lock.too.large.entries", value, AtomicInteger::get).tag("lock", k)
                        .description("entries of a lock too large for this gateway to read (not read until it shrinks)")
                        .register(registry);
                return new TooLarge(value, g);
            });
        }
        if (t != null) {
            t.entries().set(entries);
        }
    }

    /** A lock reported by {@link #lockTooLarge} was read again. */
    public void lockListable(String lock) {
        TooLarge t = tooLarge.remove(lock);
        if (t != null) {
            registry.remove(t.gauge());
        }
    }

    /** Sets the cell-wide counts (read from ZooKeeper by the gateway every so often). */
    public void cell(long locks, long holds, long waiters, long sessions) {
        cellLocks.set(locks);
        cellHolds.set(holds);
        cellWaiters.set(waiters);
        cellSessions.set(sessions);
    }

    /** Metrics that go nowhere, for tools and tests that do not read them. */
    public static WardenMetrics noop() {
        return new WardenMetrics(new SimpleMeterRegistry());
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void trackedSessions(Supplier<Number> count) {
        Gauge.builder("warden.sessions.tracked", count).description("sessions whose TTL this gateway tracks").register(registry);
    }

    public void acquire(String outcome, long nanos) {
        acquireTimer(outcome).record(nanos, TimeUnit.NANOSECONDS);
    }

    private Timer acquireTimer(String outcome) {
        return timers.computeIfAbsent("acquire:" + outcome, k -> Timer.builder("warden.acquire")
                .description("acquire calls on this gateway, from the call to its answer, by outcome "
                        + "(granted, queued, timed_out, error)")
                .tag("outcome", outcome).publishPercentileHistogram().register(registry));
    }

    public void handoff(long nanos) {
        handoffTimer().record(nanos, TimeUnit.NANOSECONDS);
    }

    private Timer handoffTimer() {
        return timers.computeIfAbsent("handoff", k -> Timer.builder("warden.handoff")
                .description("from a release on this gateway to the next grant it promotes")
                .publishPercentileHistogram().register(registry));
    }

    public void queueDepth(int depth) {
        queueDepths().record(depth);
    }

    private DistributionSummary queueDepths() {
        return summaries.computeIfAbsent("queue", k -> DistributionSummary.builder("warden.queue.depth")
                .description("entries of the lock (holders and waiters, its own included) at the first look of each "
                        + "acquire on this gateway")
                .serviceLevelObjectives(QUEUE_DEPTH_BUCKETS).register(registry));
    }

    public void grant() {
        grants().increment();
    }

    private Counter grants() {
        return counter("warden.grants", "grants made by this gateway", null, null);
    }

    public void release(boolean released) {
        releases(released).increment();
    }

    private Counter releases(boolean released) {
        return counter("warden.releases", "releases by result (released; noop: not held, e.g. a stale token)", "result",
                released ? "released" : "noop");
    }

    public void sessionExpired() {
        expiries().increment();
    }

    private Counter expiries() {
        return counter("warden.sessions.expired", "sessions this gateway expired because no keepalive came within "
                + "their TTL", null, null);
    }

    /** A queue node without its request record was removed (it could never have been ended otherwise). */
    public void orphanEntryRemoved() {
        orphans().increment();
    }

    private Counter orphans() {
        return counter("warden.orphan.entries.removed", "queue nodes removed because their request record was gone",
                null, null);
    }

    public void keepalive(String result) {
        keepalives(result).increment();
    }

    private Counter keepalives(String result) {
        return counter("warden.keepalives", "keepalives by result (ok; takeover: of a session another gateway tracked; unavailable; error)",
                "result", result);
    }

    private Counter counter(String name, String description, String tag, String value) {
        return counters.computeIfAbsent(name + ":" + value, k -> {
            Counter.Builder b = Counter.builder(name).description(description);
            if (tag != null) {
                b.tag(tag, value);
            }
            return b.register(registry);
        });
    }

    public void waiterAdded() {
        pendingWaiters.incrementAndGet();
    }

    public void waiterDone() {
        pendingWaiters.decrementAndGet();
    }

    public void connectionState(ConnectionState state) {
        connected.set(state.isConnected() ? 1 : 0);
        connectionStates(state).increment();
    }

    private Counter connectionStates(ConnectionState state) {
        return counter("warden.zk.connection.state", "changes of this gateway's ZooKeeper connection, by the state "
                + "entered (CONNECTED, SUSPENDED, RECONNECTED, LOST, READ_ONLY)", "state", state.name());
    }

    /** One request sent by the group-commit stage of {@code kind} (write, read), carrying {@code calls} callers' operations. */
    public void batch(String kind, int calls) {
        summaries.computeIfAbsent("batch:" + kind, k -> DistributionSummary.builder("warden.zk.batch.calls")
                .description("callers' operations carried by one ZooKeeper request of the group-commit stage (1: alone)")
                .tag("kind", kind).publishPercentileHistogram().minimumExpectedValue(1.0).maximumExpectedValue(1000.0)
                .register(registry)).record(calls);
    }

    /** A batch of {@code kind} failed as a whole and its calls were sent again one by one. */
    public void batchFallback(String kind) {
        fallbacks(kind).increment();
    }

    private Counter fallbacks(String kind) {
        return counter("warden.zk.batch.fallbacks", "group-commit batches that failed and were sent again call by call",
                "kind", kind);
    }

    /** Calls of {@code kind} waiting for the next batch. */
    public void batchQueue(String kind, Supplier<Number> queued) {
        Gauge.builder("warden.zk.batch.queued", queued).tag("kind", kind)
                .description("calls waiting for the next group-commit batch").register(registry);
    }

    public void zkOperation(String op, long nanos, int resultCode) {
        timers.computeIfAbsent("zk:" + op + ":" + resultCode, k -> {
            KeeperException.Code code = KeeperException.Code.get(resultCode);
            String result = resultCode == 0 ? "ok" : code == null ? "error" : code.name().toLowerCase();
            return Timer.builder("warden.zk.operation")
                    .description("ZooKeeper operations of this gateway's callers, from the call to its answer (alone or "
                            + "in a batch), by operation and result")
                    .tag("op", op).tag("result", result).serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
        }).record(nanos, TimeUnit.NANOSECONDS);
    }
}
