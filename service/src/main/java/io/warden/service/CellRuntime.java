package io.warden.service;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.warden.service.cell.CellGuard;
import io.warden.service.cell.CellRouting;
import io.warden.service.config.WardenConfig;
import io.warden.service.lock.LockEngine;
import io.warden.service.lock.LockLister;
import io.warden.service.lock.Revocations;
import io.warden.service.metrics.CellMeters;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.QueueListing;
import io.warden.service.session.Owner;
import io.warden.service.session.SessionManager;
import io.warden.service.time.Clock;
import io.warden.service.watch.MemberRequestIds;
import io.warden.service.watch.WatchFilter;
import io.warden.service.watch.WatchHub;
import io.warden.service.watch.WatchSink;
import io.warden.service.watch.WatchSource;
import io.warden.service.zk.Batching;
import io.warden.service.zk.CellLayout;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.PacketLimit;
import io.warden.service.zk.Zk;
import io.warden.service.zk.ZkSecurity;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One cell as a gateway serves it: a Curator client on the cell's ensemble and chroot, the cell's guard (rollbacks and
 * the token floor), lock engine, sessions, watch mirror and revocations, this gateway's registration in the cell's
 * {@code /gateways} and its place in the cell's leader election (the leader adopts the sessions of vanished gateways).
 * A gateway has one per cell it serves ({@link Gateway} builds them; {@link CellRouter} sends each call to one); a
 * one-cell gateway has exactly one, on {@code --zk} and {@code --chroot}.
 *
 * <p>Everything here is the cell's own: a cell whose ensemble lost its quorum refuses its own calls (503) while the
 * gateway's other cells go on. Meters are registered with a {@code cell} tag ({@link #metrics()}).
 *
 * <p>Lifecycle: {@link #begin} once, then {@link #drain} or {@link #close}; both are idempotent and safe from any thread.
 */
final class CellRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CellRuntime.class);

    /** The cell that serves every namespace the routes do not name: the ensemble of {@code --zk} (or the embedded one). */
    static final String DEFAULT = "default";

    private final String name;
    /** The gateway's configuration with this cell's ensemble, chroot and data directory. */
    private final WardenConfig config;
    private final String gatewayId;
    private final Clock clock;
    private final WardenMetrics metrics;
    private final ZkSecurity zkSecurity;
    private final CuratorFramework client;
    private final Zk zk;
    /** Refuses the cell when it lost committed state; the token floor. */
    private final CellGuard guard;
    /** Which namespaces the cell serves, and the check every write of a queue entry carries ({@link CellRouting}). */
    private final CellRouting routing;
    private final LockEngine engine;
    private final SessionManager sessions;
    private final LockLister lister;
    private final WardenService service;
    private final PersistentNode registration;
    private final LeaderLatch leader;
    private final WatchHub watches;
    private final Revocations revocations;
    private final MemberRequestIds requestIds;
    /** The API's watch streams of this cell (held weakly: a stream that ended is forgotten with it). */
    private final Set<WatchSink> apiSinks = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    /** The hub's whole-cell subscriptions of the gateway (revocation events, removed requests); set in begin(). */
    private final List<WatchSource.Subscription> ownSubscriptions = Collections.synchronizedList(new ArrayList<>());
    /** Written by adoption passes (Curator's and ZooKeeper's threads), read by the next; see {@link #adopt(boolean)}. */
    private volatile CleanPass cleanPass;
    /** Adoption passes decided (run or skipped), whatever their outcome: operators' and tests' view of the leader's work. */
    private final AtomicLong adoptionPasses = new AtomicLong();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final AtomicBoolean clientStarted = new AtomicBoolean();
    /** Set once {@link #begin} completed. */
    private volatile boolean begun;
    private volatile boolean draining;
    private volatile Clock.Cancellable adoptionTimer;
    private volatile Clock.Cancellable cellCountsTimer;
    private static final Duration CELL_COUNTS_INTERVAL = Duration.ofSeconds(30);
    /** How long a gateway with a configured id may take, at start, to take back its earlier run's sessions. */
    private static final Duration ADOPT_OWN_TIMEOUT = Duration.ofMinutes(2);
    /** The periodic adoption pass reads every record at least this often even when no gateway came or went. */
    static final Duration FULL_PASS_EVERY = Duration.ofMinutes(10);

    /**
     * Builds the cell's parts; nothing connects before {@link #begin}. {@code registry} is the gateway's: this cell's
     * meters go to it through a view that tags them {@code cell=name}. {@code audit} records revocations (the console's
     * audit log).
     */
    CellRuntime(String name, WardenConfig config, Clock clock, String gatewayId, MeterRegistry registry, Rules rules,
                Revocations.Audit audit) {
        this.name = name;
        this.config = config;
        this.clock = clock;
        this.gatewayId = gatewayId;
        this.metrics = new WardenMetrics(CellMeters.tagged(registry, name));
        MeterRegistry meters = metrics.registry();
        this.zkSecurity = ZkSecurity.of(config);
        this.client = CuratorFrameworkFactory.builder()
                .connectString(config.zkConnect())
                .zkClientConfig(zkSecurity.clientConfig())
                .aclProvider(zkSecurity.aclProvider())
                .namespace(config.chroot().substring(1))
                .sessionTimeoutMs((int) config.zkSessionTimeout().toMillis())
                .connectionTimeoutMs((int) config.zkConnectionTimeout().toMillis())
                .retryPolicy(new BoundedExponentialBackoffRetry(100, 1000, 3))
                .defaultData(new byte[0]) // a node created without data is empty (Curator's default is the local IP)
                .build();
        // Every listing of a lock's queue goes through one QueueListing, sized from the client's packet limit; the
        // watch mirror tells it (and the engine's admission) which locks are large, so small ones need no stat first.
        PacketLimit packet = new PacketLimit(config.zkMaxPacketBytes());
        metrics.zkMaxPacketBytes(packet.bytes());
        metrics.limits(new TreeMap<>(Map.of("max-sessions-per-gateway", config.maxSessionsPerGateway(),
                "max-requests-per-session", config.maxRequestsPerSession(), "max-waiters-per-lock", config.maxWaitersPerLock(),
                "max-entries-per-lock", config.maxEntriesPerLock(), "max-watches", config.maxWatches(),
                "max-connections-per-ip", config.maxConnectionsPerIp(), "http-threads", config.httpThreads())));
        if (packet.bytes() < PacketLimit.ZOOKEEPER_DEFAULT) {
            log.warn("zk-max-packet-bytes {} is below ZooKeeper's own default ({}): locks of more than {} entries are not "
                    + "read, and any other reply over it (a lock-delay record of a session with many holds, a large "
                    + "listing) costs this gateway its ZooKeeper connection; meant for tests", packet.bytes(),
                    PacketLimit.ZOOKEEPER_DEFAULT, packet.listable());
        }
        // Batches of reads (and writes) stay a quarter of the packet limit at most: a reply over it costs the connection.
        this.zk = new Zk(client, metrics, Batching.DEFAULT.within(packet), name);
        this.guard = new CellGuard(zk, config.chroot(), config.dataDir(), clock, gatewayId, meters);
        QueueListing queues = new QueueListing(zk, packet, metrics);
        this.routing = new CellRouting(zk, clock, name, DEFAULT.equals(name));
        this.engine = new LockEngine(zk, clock, metrics, queues, config.maxRequestsPerSession(), config.maxWaitersPerLock(),
                config.maxEntriesPerLock(), config.maxRequestsPerPrincipal(), guard.tokens(), routing, rules.grants());
        this.sessions = new SessionManager(zk, clock, metrics, engine, queues, Owner.newIncarnation(gatewayId),
                config.sessionTtlMin(), config.sessionTtlMax(), config.sessionTtlDefault(), config.maxSessionsPerGateway(),
                config.maxSessionsPerPrincipal(), SessionManager.vouchBound(config.zkSessionTimeout()), rules.expiry());
        sessions.guardedBy(guard.tokens(), guard::serving);
        this.lister = new LockLister(zk, engine, clock);
        this.service = new WardenService(engine, sessions, lister, this::ready, guard::whenServing, guard::notReadyDetail);
        this.registration = new PersistentNode(client, CreateMode.EPHEMERAL, false, CellPaths.gateway(gatewayId),
                Json.write(Map.of("gateway_id", gatewayId, "http_port", config.httpPort())));
        this.leader = new LeaderLatch(client, CellPaths.LEADER, gatewayId);
        this.watches = new WatchHub(zk, config.chroot(), clock, gatewayId, WatchHub.DEFAULT_HISTORY,
                new WatchHub.Limits(config.maxWatches(), config.maxSessionsPerGateway()),
                new WatchHub.Mirror(queues, mirrorBytes(config), Math.min(config.maxEntriesPerLock(), packet.listable() / 2)),
                rules.resume());
        queues.useSizes(watches.queueSizes());
        WatchHub hub = this.watches;
        Gauge.builder("warden.watch.mirror.bytes", hub, WatchHub::mirrorBytes)
                .description("the watch mirror's heap, estimated (0 while it is dropped for passing watch-mirror-bytes)")
                .register(meters);
        Gauge.builder("warden.watch.mirror.limit.bytes", hub, WatchHub::mirrorMaxBytes)
                .description("the watch mirror's bound (watch-mirror-bytes)").register(meters);
        watches.guardedBy(guard.tokens(), guard::untilServing, guard::observe);
        guard.onRolledBack(refusal -> {
            // Held calls are answered with the refusal, keepalives refused from now on (and nothing expires here), the
            // API's watch streams ended (new ones are refused, and the mirror is not rebuilt until the cell is served).
            engine.cellRolledBack(refusal);
            sessions.cellRefused();
            hub.endWatches(refusal.getMessage(), apiSinks::contains);
            cleanPass = null; // once the cell is served again, the leader's next adoption pass looks at everything
        });
        String watchPools = "watches served, by pool (names: of names and prefixes, bounded by max-watches; sessions: of "
                + "single sessions, bounded by max-sessions-per-gateway)";
        Gauge.builder("warden.watches", hub, h -> h.watchCount() - h.sessionWatchCount())
                .tag("pool", "names").description(watchPools).register(meters);
        Gauge.builder("warden.watches", hub, WatchHub::sessionWatchCount)
                .tag("pool", "sessions").description(watchPools).register(meters);
        // Revokes: audited, forced through the cell's release (guarded like a client's).
        this.revocations = new Revocations(zk, clock, engine.reader(), gatewayId, Revocations.DEFAULT_POLL,
                Revocations.DEFAULT_MAX_PENDING, audit, service::release, guard::serving);
        service.useRevocations(revocations);
        // Deadlocks: found in the mirror, broken by the engine's conditional multi (docs/decisions/0013).
        hub.breakDeadlocks(engine::breakDeadlock, engine::holdsCall, Gateway.DEADLOCK_DELAY);
        this.requestIds = new MemberRequestIds(zk);
        Gauge.builder("warden.deadlocks", hub, h -> h.deadlocks().deadlocks().size())
                .description("deadlocks (cycles of the wait-for graph) this gateway's watch mirror shows now").register(meters);
    }

    private String describe(io.warden.service.zk.CellRoutes r) {
        String served = DEFAULT.equals(name) ? "every namespace but " + r.away() : "namespaces " + r.serves();
        return served + (r.moving().isEmpty() ? "" : ", moving " + r.moving());
    }

    /** The watch mirror's bound: watch-mirror-bytes, or half the heap when it is 0. */
    static long mirrorBytes(WardenConfig config) {
        return config.watchMirrorBytes() > 0 ? config.watchMirrorBytes() : Runtime.getRuntime().maxMemory() / 2;
    }

    /**
     * Connects, makes what the cell lacks (top nodes, shards, the ACL), checks the cell against this gateway's mark of
     * it, registers, takes back its earlier run's sessions (a configured gateway id), starts the watch mirror,
     * revocations and the leader election. {@code ownSinks} are the gateway's whole-cell subscribers of the mirror.
     * {@code seed}: on a gateway that serves several cells, the routes this cell starts with when it has none yet (the
     * {@code routes} setting); routes it has already are kept, whatever the setting says (moves change them). Null on a
     * one-cell gateway: the routes are only read.
     *
     * @throws IllegalStateException when the cell cannot be reached or prepared within the start's wait
     */
    void begin(List<WatchSink> ownSinks, io.warden.service.zk.CellRoutes seed) {
        if (clientStarted.compareAndSet(false, true)) {
            client.start();
        }
        try {
            long waitMs = Math.max(config.zkSessionTimeout().toMillis(), 5000);
            if (!client.blockUntilConnected((int) waitMs, TimeUnit.MILLISECONDS)) {
                throw new Unreachable("cannot reach ZooKeeper of cell " + name + " at " + config.zkConnect()
                        + " within " + waitMs + " ms");
            }
            long startDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            untilConnected("the cell's top nodes", startDeadline, () -> CellLayout.makeTop(client));
            untilConnected("the shards of /sessions and /lockdelay", startDeadline, () -> makeShards(waitMs));
            protectCell();
            CellRouting.Snapshot routes = (seed == null ? routing.load() : routing.seed(seed))
                    .get(waitMs, TimeUnit.MILLISECONDS);
            if (seed != null && !routes.routes().equals(seed)) {
                log.warn("cell {} serves {} by the routes in its ZooKeeper, not {} as the routes setting says: the routes "
                        + "a cell has are kept, and change only by moves (PUT /v1/namespaces/NAMESPACE/cell)", name,
                        describe(routes.routes()), describe(seed));
            }
            // Before anything serves: compare the cell with what this gateway saw of it (its data directory). A cell
            // that went back is refused (503 for every call), not a reason not to start.
            guard.start(Duration.ofMillis(waitMs));
            sessions.start();
            registration.start();
            if (!registration.waitForInitialCreate(waitMs, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("could not register gateway " + gatewayId + " in cell " + name
                        + " within " + waitMs + " ms");
            }
            if (config.gatewayId() != null && guard.serving()) {
                // Only a configured id can have an earlier run; this reads every session record of the cell, so it
                // may take a while in a large cell (100,000 records: seconds), and the gateway serves only after it.
                int own = sessions.adoptOwn().get(Math.max(waitMs, ADOPT_OWN_TIMEOUT.toMillis()), TimeUnit.MILLISECONDS).adopted();
                if (own > 0) {
                    log.info("gateway {} took back {} sessions/lock-delays of its earlier run in cell {} with a fresh TTL",
                            gatewayId, own, name);
                }
            }
            leader.addListener(new LeaderLatchListener() {
                @Override
                public void isLeader() {
                    log.info("gateway {} is the leader of cell {}: it adopts the sessions of vanished gateways", gatewayId, name);
                    cleanPass = null; // a new leader looks at everything once
                    adopt(false);
                }

                @Override
                public void notLeader() {
                    log.info("gateway {} is no longer the leader of cell {}", gatewayId, name);
                }
            });
            watches.start();
            for (WatchSink sink : ownSinks) {
                ownSubscriptions.add(watches.subscribeOwn(WatchFilter.everything(), sink));
            }
            ownSubscriptions.add(watches.subscribeOwn(WatchFilter.everything(), new RemovedRequests(engine)));
            revocations.start();
            if (guard.serving() && !watches.awaitReady(Duration.ofMillis(waitMs))) {
                log.warn("gateway {}: the watch mirror of cell {} is not ready after {} ms; watches wait for it",
                        gatewayId, name, waitMs);
            }
            leader.start();
            watchGateways();
            scheduleAdoption();
            refreshCellCounts();
            begun = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting", e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("could not start cell " + name + ": " + e, e);
        }
    }

    /**
     * The cell's ensemble could not be reached at all within the start's wait: nothing of the cell was started but its
     * client, so {@link #begin} may be called again (a gateway starts its other cells without it and tries again).
     */
    static final class Unreachable extends IllegalStateException {
        Unreachable(String message) {
            super(message);
        }
    }

    /** Whether {@link #begin} has completed: the cell is started (it may still be disconnected now and then). */
    boolean begun() {
        return begun;
    }

    /** A start-up step that can be repeated (it makes what is missing): see {@link #untilConnected}. */
    @FunctionalInterface
    private interface StartStep {
        void run() throws Exception;
    }

    /**
     * Runs a repeatable start-up step until it succeeds, the connection to ZooKeeper permitting: a step that fails
     * because the connection was lost (Curator's retries give up after a few seconds, which a loaded or restarting
     * ensemble can outlast) waits to be connected again and runs again, until {@code deadlineNanos} (the start's
     * wait). Any other failure ends the start at once.
     */
    private void untilConnected(String what, long deadlineNanos, StartStep step) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                step.run();
                return;
            } catch (Exception e) {
                long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
                if (!connectionLost(e) || leftMs <= 0) {
                    throw e;
                }
                log.warn("gateway {}: making {} of cell {} lost the connection to ZooKeeper (attempt {}); trying again "
                        + "once connected, for up to {} ms more", gatewayId, what, name, attempt, leftMs);
                if (!client.blockUntilConnected((int) leftMs, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("cannot reach ZooKeeper of cell " + name + " at " + config.zkConnect()
                            + " to make " + what + ": " + e, e);
                }
            }
        }
    }

    /** Whether {@code e} (or what it wraps) says the connection to ZooKeeper went, not that a request was refused. */
    private static boolean connectionLost(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            KeeperException.Code code = t instanceof KeeperException k ? k.code()
                    : t instanceof Zk.MultiFailure f ? f.code() : null;
            if (code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.SESSIONEXPIRED
                    || code == KeeperException.Code.OPERATIONTIMEOUT) {
                return true;
            }
        }
        return false;
    }

    /** The shards of /sessions and /lockdelay ({@link CellLayout#makeShards}), each transaction awaited {@code waitMs}. */
    private void makeShards(long waitMs) throws Exception {
        CellLayout.makeShards(client, creates -> {
            try {
                zk.multi(creates).get(waitMs, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (e.getCause() instanceof Zk.MultiFailure f && f.code() == KeeperException.Code.NODEEXISTS) {
                    throw new KeeperException.NodeExistsException();
                }
                throw new IllegalStateException("could not make " + creates.size() + " missing shards: " + e.getCause(),
                        e.getCause());
            } catch (java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("could not make " + creates.size() + " missing shards: ZooKeeper did not "
                        + "answer within " + waitMs + " ms", e);
            }
        });
    }

    /**
     * Gives the chroot, its top nodes, the shards and the namespaces the configured ACL ({@code zk-acl}) when the chroot
     * does not have it yet: the first start with ACLs, or after a change. Every node made later gets it when it is made
     * (Curator's ACL provider). Nodes made before and deeper down (lock nodes, queue nodes, session records) keep the
     * ACL they had until they go; docs/operations.md ("Securing a cell") gives the zkCli command that fixes them at
     * once. The chroot is done last, so that a pass cut short is done again at the next start.
     */
    private void protectCell() throws Exception {
        List<ACL> want = zkSecurity.acl();
        if (new HashSet<>(client.getACL().forPath("/")).equals(new HashSet<>(want))) {
            return;
        }
        List<String> paths = new ArrayList<>();
        paths.addAll(CellLayout.TOP);
        paths.add(CellPaths.LEADER);
        paths.add(CellPaths.CELL);
        for (String parent : new String[]{CellPaths.SESSIONS, CellPaths.LOCK_DELAY}) {
            for (String shard : CellPaths.shards()) {
                paths.add(parent + "/" + shard);
            }
        }
        try {
            for (String namespace : client.getChildren().forPath(CellPaths.LOCKS)) {
                paths.add(CellPaths.LOCKS + "/" + namespace);
            }
        } catch (KeeperException e) {
            // Namespaces are not bounded in number: a listing too large for one reply must not stop the start. They
            // are then left like the nodes below them, for the operator's setAcl -R.
            log.warn("could not list the namespaces of {} to give them the ACL ({}); run the setAcl -R of "
                    + "docs/operations.md, \"Securing a cell\"", config.chroot(), e.code());
        }
        paths.add("/");
        for (String path : paths) {
            try {
                client.setACL().withACL(want).forPath(path);
            } catch (KeeperException.NoNodeException gone) {
                // not made yet (the leader node), or gone meanwhile: made with the ACL when it is made
            } catch (KeeperException.NoAuthException e) {
                throw new IllegalStateException("cannot set the ACL of " + config.chroot() + (path.equals("/") ? "" : path)
                        + " to " + ZkSecurity.describeAcl(want) + ": ZooKeeper says this gateway's "
                        + "identity may not change it (NoAuth); the node was made by another identity (see zk-acl)");
            }
        }
        log.warn("gave {} ZooKeeper nodes of {} the ACL {} (zk-acl); nodes made before below them keep their old ACL until "
                        + "they go: docs/operations.md, \"Securing a cell\", says how to fix them at once",
                paths.size(), config.chroot(), ZkSecurity.describeAcl(want));
    }

    /** Puts this gateway's URL in its /gateways node of the cell, now that the port is bound: consoles of other gateways ask it. */
    void advertise(String url, int port) {
        try {
            registration.setData(Json.write(Map.of("gateway_id", gatewayId, "http_port", port, "url", url)));
        } catch (Exception e) {
            log.warn("gateway {} could not publish its URL {} in /gateways of cell {}: {}", gatewayId, url, name, e.toString());
        }
    }

    /** Re-arms a children watch on /gateways: when a gateway vanishes the leader adopts its sessions at once. */
    private void watchGateways() {
        if (stopped.get()) {
            return;
        }
        Watcher w = event -> {
            if (event.getType() == Watcher.Event.EventType.NodeChildrenChanged) {
                adopt(false);
            }
            if (event.getType() != Watcher.Event.EventType.None) {
                watchGateways();
            }
        };
        try {
            client.getChildren().usingWatcher(w).inBackground((c, e) -> {
                if (e.getResultCode() != 0 && !stopped.get()) {
                    clock.schedule(Duration.ofSeconds(1), this::watchGateways);
                }
            }).forPath(CellPaths.GATEWAYS);
        } catch (Exception e) {
            clock.schedule(Duration.ofSeconds(1), this::watchGateways);
        }
    }

    /**
     * A safety net beside the watch: every ZooKeeper session timeout the leader looks whether the set of gateways
     * changed since its last clean pass (a watch event missed while disconnected). See {@link #adopt(boolean)}.
     */
    private void scheduleAdoption() {
        if (stopped.get()) {
            return;
        }
        adoptionTimer = clock.schedule(config.zkSessionTimeout(), () -> {
            adopt(true);
            scheduleAdoption();
        });
    }

    /**
     * Every 30 s: the cell-wide counts for /metrics. Locks, holds and waiters come from the watch mirror, which has every
     * queue node already (no ZooKeeper request; skipped while it rebuilds, the gauges keep their last values); sessions
     * are the sum of the 256 shards' child counts (256 small {@code exists} reads, however many sessions).
     */
    private void refreshCellCounts() {
        if (stopped.get()) {
            return;
        }
        if (zk.connected()) {
            watches.counts().thenCombine(sessionCount(), (counts, sessionCount) -> {
                counts.ifPresent(c -> metrics.cell(c.locks(), c.holds(), c.waiters(), sessionCount));
                return null;
            }).exceptionally(e -> {
                log.debug("could not refresh the counts of cell {}: {}", name, e.toString());
                return null;
            });
        }
        cellCountsTimer = clock.schedule(CELL_COUNTS_INTERVAL, this::refreshCellCounts);
    }

    /** Open sessions in the cell: each shard's {@code numChildren} (a shard's children are session records only). */
    private CompletableFuture<Long> sessionCount() {
        List<CompletableFuture<Stat>> stats = new ArrayList<>();
        for (String shard : CellPaths.shards()) {
            stats.add(zk.exists(CellPaths.SESSIONS + "/" + shard));
        }
        return CompletableFuture.allOf(stats.toArray(CompletableFuture[]::new)).thenApply(v -> stats.stream()
                .map(CompletableFuture::join).mapToLong(stat -> stat == null ? 0 : stat.getNumChildren()).sum());
    }

    /**
     * One adoption pass if this gateway leads the cell. A pass reads every session record this gateway does not track
     * (100,000 reads in a cell of 100,000 sessions), so the periodic one is skipped when it could find nothing new: the
     * set of gateways is unchanged since the last pass that had no failure (the {@code cversion} of {@code /gateways}
     * counts every registration and deregistration, a quick restart under the same id included) and that pass is
     * younger than {@link #FULL_PASS_EVERY}. Orphans are made only by a gateway's registration vanishing, so that is
     * exact; the rare full pass is for what nobody thought of.
     */
    private void adopt(boolean periodic) {
        if (stopped.get() || draining || !leader.hasLeadership() || !zk.connected() || !guard.serving()) {
            return; // a refused cell is not written to; the next pass after it is served again looks at everything
        }
        zk.childrenAndStat(CellPaths.GATEWAYS).thenCompose(gateways -> {
            long membership = gateways.stat().getCversion();
            CleanPass last = cleanPass;
            if (periodic && last != null && last.membership == membership
                    && clock.read() - last.atNanos < FULL_PASS_EVERY.toNanos()) {
                return CompletableFuture.completedFuture(null);
            }
            long startNanos = clock.read();
            return sessions.adoptOrphans(Set.copyOf(gateways.children())).thenApply(tally -> {
                if (tally.failed() == 0) {
                    cleanPass = new CleanPass(membership, startNanos);
                } else {
                    cleanPass = null;
                    log.warn("adoption pass of cell {}: {} sessions/lock-delays could not be read or taken over; the "
                            + "next pass (within {} ms) tries again", name, tally.failed(), config.zkSessionTimeout().toMillis());
                }
                if (tally.adopted() > 0) {
                    log.info("gateway {} adopted {} sessions/lock-delays of vanished gateways in cell {}", gatewayId,
                            tally.adopted(), name);
                }
                return tally;
            });
        }).exceptionally(e -> {
            cleanPass = null;
            log.debug("adoption pass of cell {} failed: {}", name, e.toString());
            return null;
        }).whenComplete((v, e) -> adoptionPasses.incrementAndGet());
    }

    /** The last adoption pass with no failure: the {@code cversion} of /gateways it started from, and when. */
    private record CleanPass(long membership, long atNanos) {
    }

    /** Runs one adoption pass now if this gateway leads the cell (tests and operators). */
    void adoptNow() {
        adopt(false);
    }

    /** How many adoption passes this gateway has finished as the cell's leader (run in full, skipped as needless, or failed). */
    long adoptionPasses() {
        return adoptionPasses.get();
    }

    /** Whether this cell serves now: connected to its ensemble and not refused (rolled back). */
    boolean ready() {
        return !draining && !stopped.get() && zk.connected() && guard.serving();
    }

    /**
     * The cell's API watches: refused while the cell is (a rollback), remembered so that a rollback ends them. Not for
     * the gateway's own subscribers, which outlive a refusal.
     */
    WatchSource.Subscription subscribe(WatchFilter filter, Long since, WatchSink sink) {
        String refused = guard.refusal();
        if (refused != null) {
            throw io.warden.service.api.WardenException.unavailable(refused, null);
        }
        apiSinks.add(sink);
        return watches.subscribe(filter, since, sink);
    }

    /** The cell's deadlocks now, each member named by its request id (a read per member). */
    CompletableFuture<WatchHub.DeadlockReport> deadlocks() {
        return requestIds.named(watches.deadlocks());
    }

    String name() {
        return name;
    }

    /** The gateway's configuration with this cell's ensemble, chroot and data directory. */
    WardenConfig config() {
        return config;
    }

    WardenService service() {
        return service;
    }

    LockEngine engine() {
        return engine;
    }

    SessionManager sessions() {
        return sessions;
    }

    LockLister lister() {
        return lister;
    }

    WatchHub watches() {
        return watches;
    }

    Revocations revocations() {
        return revocations;
    }

    CellGuard guard() {
        return guard;
    }

    CellRouting routing() {
        return routing;
    }

    Zk zk() {
        return zk;
    }

    CuratorFramework client() {
        return client;
    }

    ZkSecurity zkSecurity() {
        return zkSecurity;
    }

    WardenMetrics metrics() {
        return metrics;
    }

    boolean isLeader() {
        return leader.hasLeadership();
    }

    /** Stops taking calls and answers every held call now (503: repeat with the same request_id elsewhere). */
    void drain() {
        draining = true;
        engine.drain();
    }

    /** Stops at once. Idempotent. */
    @Override
    public void close() {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        for (Clock.Cancellable t : new Clock.Cancellable[]{adoptionTimer, cellCountsTimer}) {
            if (t != null) {
                t.cancel();
            }
        }
        sessions.stop();
        revocations.close();
        synchronized (ownSubscriptions) {
            ownSubscriptions.forEach(WatchSource.Subscription::cancel);
        }
        watches.close();
        Quietly.run(guard::close); // writes the high-water mark a last time
        Quietly.run(leader::close);
        Quietly.run(registration::close);
        Quietly.run(client::close);
        zkSecurity.close();
    }
}
