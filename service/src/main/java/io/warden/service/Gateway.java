package io.warden.service;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.warden.console.ConsoleSettings;
import io.warden.console.WardenConsole;
import io.warden.service.api.Warden;
import io.warden.service.auth.Authenticator;
import io.warden.service.cell.CellGuard;
import io.warden.service.config.BuildInfo;
import io.warden.service.config.WardenConfig;
import io.warden.service.console.ConsoleBridge;
import io.warden.service.http.HttpApi;
import io.warden.service.lock.Revocations;
import io.warden.service.lock.LockEngine;
import io.warden.service.lock.LockLister;
import io.warden.service.metrics.PrometheusNames;
import io.warden.service.metrics.ProcessMetrics;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.QueueListing;
import io.warden.service.session.Owner;
import io.warden.service.session.SessionManager;
import io.warden.service.time.Clock;
import io.warden.service.time.SystemClock;
import io.warden.service.watch.WatchHub;
import io.warden.service.zk.Batching;
import io.warden.service.zk.CellLayout;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.PacketLimit;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One running gateway: a Curator client on the cell's chroot, the lock engine, sessions, gateway registration and
 * leader election for adoption, and the HTTP API.
 *
 * <p>Lifecycle: {@link #start} returns a serving gateway; {@link #drain} (SIGTERM) or {@link #close} stops it. Both
 * are idempotent and safe from any thread.
 */
public final class Gateway implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private final WardenConfig config;
    private final String gatewayId;
    private final Clock clock;
    private final SystemClock ownedClock;
    private final CuratorFramework client;
    private final io.warden.service.zk.ZkSecurity zkSecurity;
    private final Zk zk;
    /** Refuses the cell when it lost committed state; the token floor. */
    private final CellGuard cell;
    private final LockEngine engine;
    private final SessionManager sessions;
    private final PersistentNode registration;
    private final LeaderLatch leader;
    private final HttpApi http;
    private final Authenticator authenticator;
    private final Warden warden;
    private final LockLister lister;
    /** Written by adoption passes (Curator's and ZooKeeper's threads), read by the next; see {@link #adopt(boolean)}. */
    private volatile CleanPass cleanPass;
    /** Adoption passes decided (run or skipped), whatever their outcome: operators' and tests' view of the leader's work. */
    private final java.util.concurrent.atomic.AtomicLong adoptionPasses = new java.util.concurrent.atomic.AtomicLong();
    private final WardenMetrics metrics;
    private final ProcessMetrics processMetrics;
    private final WatchHub watches;
    private final ConsoleBridge console;
    private final Revocations revocations;
    /** The hub's whole-cell events for the revocations and the keepalive sockets; set in begin(). */
    private volatile io.warden.service.watch.WatchSource.Subscription revocationEvents;
    /** The hub's whole-cell events for held calls whose request another gateway removed (a deadlock's victim). */
    private volatile io.warden.service.watch.WatchSource.Subscription removedCalls;
    /** How long a deadlock must stay the same before its victim is removed (docs/decisions/0013). */
    public static final Duration DEADLOCK_DELAY = Duration.ofMillis(200);
    private final AtomicBoolean stopped = new AtomicBoolean();
    private volatile boolean draining;
    private volatile Clock.Cancellable adoptionTimer;
    private volatile Clock.Cancellable cellCountsTimer;
    private static final Duration CELL_COUNTS_INTERVAL = Duration.ofSeconds(30);
    /** How long a gateway with a configured id may take, at start, to take back its earlier run's sessions. */
    private static final Duration ADOPT_OWN_TIMEOUT = Duration.ofMinutes(2);
    /** The periodic adoption pass reads every record at least this often even when no gateway came or went. */
    static final Duration FULL_PASS_EVERY = Duration.ofMinutes(10);

    private Gateway(WardenConfig config, Clock clock, SystemClock ownedClock, Rules rules) {
        this.config = config;
        this.clock = clock;
        this.ownedClock = ownedClock;
        this.gatewayId = config.gatewayId() != null ? config.gatewayId() : "gw-" + randomHex(6);
        PrometheusMeterRegistry registry = PrometheusNames.applyTo(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        this.metrics = new WardenMetrics(registry, BuildInfo.version());
        this.processMetrics = new ProcessMetrics(registry);
        this.zkSecurity = io.warden.service.zk.ZkSecurity.of(config);
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
        metrics.limits(new java.util.TreeMap<>(Map.of("max-sessions-per-gateway", config.maxSessionsPerGateway(),
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
        this.zk = new Zk(client, metrics, Batching.DEFAULT.within(packet));
        this.cell = new CellGuard(zk, config.chroot(), config.dataDir(), clock, gatewayId, registry);
        QueueListing queues = new QueueListing(zk, packet, metrics);
        this.engine = new LockEngine(zk, clock, metrics, queues, config.maxRequestsPerSession(), config.maxWaitersPerLock(),
                config.maxEntriesPerLock(), config.maxRequestsPerPrincipal(), cell.tokens(), rules.grants());
        this.sessions = new SessionManager(zk, clock, metrics, engine, queues, Owner.newIncarnation(gatewayId),
                config.sessionTtlMin(), config.sessionTtlMax(), config.sessionTtlDefault(), config.maxSessionsPerGateway(),
                config.maxSessionsPerPrincipal(), SessionManager.vouchBound(config.zkSessionTimeout()), rules.expiry());
        sessions.guardedBy(cell.tokens(), cell::serving);
        this.lister = new LockLister(zk, engine, clock);
        WardenService service = new WardenService(engine, sessions, lister, this::ready, cell::whenServing, cell::notReadyDetail);
        this.warden = service;
        this.registration = new PersistentNode(client, CreateMode.EPHEMERAL, false, CellPaths.gateway(gatewayId),
                Json.write(Map.of("gateway_id", gatewayId, "http_port", config.httpPort())));
        this.leader = new LeaderLatch(client, CellPaths.LEADER, gatewayId);
        this.watches = new WatchHub(zk, config.chroot(), clock, gatewayId, WatchHub.DEFAULT_HISTORY,
                new WatchHub.Limits(config.maxWatches(), config.maxSessionsPerGateway()),
                new WatchHub.Mirror(queues, mirrorBytes(config), Math.min(config.maxEntriesPerLock(), packet.listable() / 2)),
                rules.resume());
        queues.useSizes(watches.queueSizes());
        WatchHub hub = this.watches;
        io.micrometer.core.instrument.Gauge.builder("warden.watch.mirror.bytes", hub, WatchHub::mirrorBytes)
                .description("the watch mirror's heap, estimated (0 while it is dropped for passing watch-mirror-bytes)")
                .register(registry);
        io.micrometer.core.instrument.Gauge.builder("warden.watch.mirror.limit.bytes", hub, WatchHub::mirrorMaxBytes)
                .description("the watch mirror's bound (watch-mirror-bytes)").register(registry);
        watches.guardedBy(cell.tokens(), cell::untilServing, cell::observe);
        // The API's watch streams (held weakly: a stream that ended is forgotten with it), ended when the cell is refused.
        java.util.Set<io.warden.service.watch.WatchSink> apiSinks = java.util.Collections.synchronizedSet(
                java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>()));
        cell.onRolledBack(refusal -> {
            // Held calls are answered with the refusal, keepalives refused from now on (and nothing expires here), the
            // API's watch streams ended (new ones are refused, and the mirror is not rebuilt until the cell is served).
            engine.cellRolledBack(refusal);
            sessions.cellRefused();
            hub.endWatches(refusal.getMessage(), apiSinks::contains);
            cleanPass = null; // once the cell is served again, the leader's next adoption pass looks at everything
        });
        String watchPools = "watches served, by pool (names: of names and prefixes, bounded by max-watches; sessions: of "
                + "single sessions, bounded by max-sessions-per-gateway)";
        io.micrometer.core.instrument.Gauge.builder("warden.watches", hub, h -> h.watchCount() - h.sessionWatchCount())
                .tag("pool", "names").description(watchPools).register(registry);
        io.micrometer.core.instrument.Gauge.builder("warden.watches", hub, WatchHub::sessionWatchCount)
                .tag("pool", "sessions").description(watchPools).register(registry);
        this.console = new ConsoleBridge(zk, warden, lister, sessions, clock, java.time.Clock.systemUTC(), gatewayId,
                config.zkConnect(), zkSecurity.probeSockets(), leader::hasLeadership);
        // Revokes: audited in the console's log, forced through the service's release (guarded like a client's).
        this.revocations = new Revocations(zk, clock, engine.reader(), gatewayId, Revocations.DEFAULT_POLL,
                Revocations.DEFAULT_MAX_PENDING, console::auditRevocation, warden::release, cell::serving);
        service.useRevocations(revocations);
        this.authenticator = config.authFile() == null ? Authenticator.open() : Authenticator.fromFile(config.authFile());
        Authenticator principals = this.authenticator;
        io.warden.console.ConsolePrincipals consolePrincipals = !principals.enabled() ? null
                : token -> principals.byToken(token).map(c -> new io.warden.console.ConsolePrincipals.Principal(
                        c.name(), c.mayEverywhere(io.warden.service.auth.Role.ADMIN)));
        WardenConsole pages = new WardenConsole(console, new ConsoleSettings(config.consoleAdminToken(),
                ConsoleSettings.DEFAULT_POLL, ConsoleSettings.DEFAULT_LOGIN_TTL, consolePrincipals), java.time.Clock.systemUTC(),
                clock::read);
        if (!authenticator.enabled()) {
            log.warn("No --auth-file: open mode. Anyone who can reach this gateway may use, keep alive, release or close "
                    + "any session; see docs/operations.md, \"Securing a cell\"");
        }
        Authenticator auth = this.authenticator;
        // One description for both results: Prometheus keeps one HELP per name.
        String reloads = "auth-file reloads by result (ok: took effect; refused: a bad file, the last good one kept)";
        io.micrometer.core.instrument.FunctionCounter.builder("warden.auth.reloads", auth, Authenticator::reloads)
                .tag("result", "ok").description(reloads).register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("warden.auth.reloads", auth, Authenticator::refusedReloads)
                .tag("result", "refused").description(reloads).register(registry);
        // The API's watches are refused while the cell is (the console's own event log keeps its subscription).
        io.warden.service.watch.WatchSource apiWatches = (filter, since, sink) -> {
            String refused = cell.refusal();
            if (refused != null) {
                throw io.warden.service.api.WardenException.unavailable(refused, null);
            }
            apiSinks.add(sink);
            return hub.subscribe(filter, since, sink);
        };
        this.http = new HttpApi(warden, apiWatches, config, registry, cfg -> {
            pages.mount(cfg);
            console.mountPeerRoute(cfg);
        }, authenticator);
        // Deadlocks: found in the mirror, broken by the engine's conditional multi (docs/decisions/0013).
        hub.breakDeadlocks(engine::breakDeadlock, engine::holdsCall, DEADLOCK_DELAY);
        io.warden.service.watch.MemberRequestIds requestIds = new io.warden.service.watch.MemberRequestIds(zk);
        this.http.useDeadlocks(() -> requestIds.named(hub.deadlocks()));
        this.console.useWaitFor(() -> requestIds.named(hub.deadlocks())); // the console draws the same graph
        io.micrometer.core.instrument.Gauge.builder("warden.deadlocks", hub, h -> h.deadlocks().deadlocks().size())
                .description("deadlocks (cycles of the wait-for graph) this gateway's watch mirror shows now").register(registry);
    }

    /** The watch mirror's bound: watch-mirror-bytes, or half the heap when it is 0. */
    static long mirrorBytes(WardenConfig config) {
        return config.watchMirrorBytes() > 0 ? config.watchMirrorBytes() : Runtime.getRuntime().maxMemory() / 2;
    }

    /** Reads the auth file again now (SIGHUP); a bad file is refused and the last good one kept. */
    public boolean reloadAuthFile() {
        return authenticator.reload();
    }

    /** Connects to {@code config.zkConnect()} (must be set), registers the gateway and serves HTTP on {@code config.httpPort()} (0 = any free port). */
    public static Gateway start(WardenConfig config) {
        SystemClock clock = new SystemClock("warden-timer");
        return start(config, clock, clock, Rules.CONTRACT);
    }

    /** Same, with an injected clock (tests). */
    public static Gateway start(WardenConfig config, Clock clock) {
        return start(config, clock, null, Rules.CONTRACT);
    }

    /**
     * Same, with the rules its engine, sessions and watches follow: {@link Rules#CONTRACT} everywhere but in the proof
     * suite, which builds gateways that break one on purpose to show its checkers failing.
     */
    public static Gateway start(WardenConfig config, Rules rules) {
        SystemClock clock = new SystemClock("warden-timer");
        return start(config, clock, clock, rules);
    }

    private static Gateway start(WardenConfig config, Clock clock, SystemClock owned, Rules rules) {
        if (config.zkConnect() == null || config.zkConnect().isBlank()) {
            throw new IllegalArgumentException("no ZooKeeper connect string (--zk)");
        }
        Gateway g = new Gateway(config, clock, owned, rules);
        try {
            g.begin();
            return g;
        } catch (RuntimeException e) {
            g.close();
            throw e;
        }
    }

    private void begin() {
        client.start();
        try {
            long waitMs = Math.max(config.zkSessionTimeout().toMillis(), 5000);
            if (!client.blockUntilConnected((int) waitMs, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("cannot reach ZooKeeper at " + config.zkConnect() + " within " + waitMs + " ms");
            }
            long startDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            untilConnected("the cell's top nodes", startDeadline, () -> CellLayout.makeTop(client));
            untilConnected("the shards of /sessions and /lockdelay", startDeadline, () -> makeShards(waitMs));
            protectCell();
            // Before anything serves: compare the cell with what this gateway saw of it (its data directory). A cell
            // that went back is refused (503 for every call), not a reason not to start.
            cell.start(Duration.ofMillis(waitMs));
            sessions.start();
            registration.start();
            if (!registration.waitForInitialCreate(waitMs, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("could not register gateway " + gatewayId + " in ZooKeeper within " + waitMs + " ms");
            }
            if (config.gatewayId() != null && cell.serving()) {
                // Only a configured id can have an earlier run; this reads every session record of the cell, so it
                // may take a while in a large cell (100,000 records: seconds), and the gateway serves only after it.
                int own = sessions.adoptOwn().get(Math.max(waitMs, ADOPT_OWN_TIMEOUT.toMillis()), TimeUnit.MILLISECONDS).adopted();
                if (own > 0) {
                    log.info("gateway {} took back {} sessions/lock-delays of its earlier run with a fresh TTL", gatewayId, own);
                }
            }
            leader.addListener(new LeaderLatchListener() {
                @Override
                public void isLeader() {
                    log.info("gateway {} is the leader: it adopts the sessions of vanished gateways", gatewayId);
                    cleanPass = null; // a new leader looks at everything once
                    adopt(false);
                }

                @Override
                public void notLeader() {
                    log.info("gateway {} is no longer the leader", gatewayId);
                }
            });
            watches.start();
            console.start(watches);
            revocationEvents = watches.subscribeOwn(io.warden.service.watch.WatchFilter.everything(),
                    new RevocationEvents(revocations, http));
            removedCalls = watches.subscribeOwn(io.warden.service.watch.WatchFilter.everything(), new RemovedRequests(engine));
            revocations.start();
            if (cell.serving() && !watches.awaitReady(Duration.ofMillis(waitMs))) {
                log.warn("gateway {}: the watch mirror of /locks is not ready after {} ms; watches wait for it", gatewayId, waitMs);
            }
            leader.start();
            watchGateways();
            scheduleAdoption();
            refreshCellCounts();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting", e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("could not start gateway: " + e, e);
        }
        http.start(config.httpHost(), config.httpPort());
        advertise();
        log.info("gateway {} serving on port {} (ZooKeeper {}, chroot {}; {})", gatewayId, http.port(), config.zkConnect(),
                config.chroot(), zkSecurity.describe());
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
                log.warn("gateway {}: making {} lost the connection to ZooKeeper (attempt {}); trying again once "
                        + "connected, for up to {} ms more", gatewayId, what, attempt, leftMs);
                if (!client.blockUntilConnected((int) leftMs, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("cannot reach ZooKeeper at " + config.zkConnect() + " to make "
                            + what + ": " + e, e);
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
        java.util.List<org.apache.zookeeper.data.ACL> want = zkSecurity.acl();
        if (new java.util.HashSet<>(client.getACL().forPath("/")).equals(new java.util.HashSet<>(want))) {
            return;
        }
        java.util.List<String> paths = new ArrayList<>();
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
                        + " to " + io.warden.service.zk.ZkSecurity.describeAcl(want) + ": ZooKeeper says this gateway's "
                        + "identity may not change it (NoAuth); the node was made by another identity (see zk-acl)");
            }
        }
        log.warn("gave {} ZooKeeper nodes of {} the ACL {} (zk-acl); nodes made before below them keep their old ACL until "
                        + "they go: docs/operations.md, \"Securing a cell\", says how to fix them at once",
                paths.size(), config.chroot(), io.warden.service.zk.ZkSecurity.describeAcl(want));
    }

    /** Puts this gateway's URL in its /gateways node, now that the port is bound: consoles of other gateways ask it. */
    private void advertise() {
        String host = config.advertiseHost();
        if (host == null) {
            host = config.httpHost();
            if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
                try {
                    host = java.net.InetAddress.getLocalHost().getHostName();
                } catch (java.net.UnknownHostException e) {
                    host = "127.0.0.1";
                }
            }
        }
        String url = "http://" + (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + http.port();
        try {
            registration.setData(Json.write(Map.of("gateway_id", gatewayId, "http_port", http.port(), "url", url)));
        } catch (Exception e) {
            log.warn("gateway {} could not publish its URL {} in /gateways: {}", gatewayId, url, e.toString());
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
     * are the sum of the 256 shards' child counts (256 small {@code exists} reads, however many sessions). Before, every
     * gateway walked all of /locks and listed every session id each time: at 200,000 locks, 200,000 reads every 30 s.
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
                log.debug("could not refresh the cell counts: {}", e.toString());
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
     * One adoption pass if this gateway leads. A pass reads every session record this gateway does not track (100,000
     * reads in a cell of 100,000 sessions), so the periodic one is skipped when it could find nothing new: the set of
     * gateways is unchanged since the last pass that had no failure (the {@code cversion} of {@code /gateways} counts
     * every registration and deregistration, a quick restart under the same id included) and that pass is younger
     * than {@link #FULL_PASS_EVERY}. Orphans are made only by a gateway's registration vanishing, so that is exact;
     * the rare full pass is for what nobody thought of.
     */
    private void adopt(boolean periodic) {
        if (stopped.get() || draining || !leader.hasLeadership() || !zk.connected() || !cell.serving()) {
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
            return sessions.adoptOrphans(java.util.Set.copyOf(gateways.children())).thenApply(tally -> {
                if (tally.failed() == 0) {
                    cleanPass = new CleanPass(membership, startNanos);
                } else {
                    cleanPass = null;
                    log.warn("adoption pass: {} sessions/lock-delays could not be read or taken over; the next pass"
                            + " (within {} ms) tries again", tally.failed(), config.zkSessionTimeout().toMillis());
                }
                if (tally.adopted() > 0) {
                    log.info("gateway {} adopted {} sessions/lock-delays of vanished gateways", gatewayId, tally.adopted());
                }
                return tally;
            });
        }).exceptionally(e -> {
            cleanPass = null;
            log.debug("adoption pass failed: {}", e.toString());
            return null;
        }).whenComplete((v, e) -> adoptionPasses.incrementAndGet());
    }

    /** How many adoption passes this gateway has finished as the leader (run in full, skipped as needless, or failed). */
    public long adoptionPasses() {
        return adoptionPasses.get();
    }

    /** The last adoption pass with no failure: the {@code cversion} of /gateways it started from, and when. */
    private record CleanPass(long membership, long atNanos) {
    }

    /** Runs one adoption pass now if this gateway leads (tests and operators). */
    public void adoptNow() {
        adopt(false);
    }

    private boolean ready() {
        return !draining && !stopped.get() && zk.connected() && cell.serving();
    }

    /** This gateway's guard of its cell: the token floor, and whether the cell is refused (tests). */
    public CellGuard cellGuard() {
        return cell;
    }

    /**
     * Whether calls that need ZooKeeper are refused at once with 503: its client is not connected, or ZooKeeper has
     * left this gateway's requests unanswered past the stall bound.
     */
    public boolean zkRefusing() {
        return !zk.connected() || zk.stalled();
    }

    /** The HTTP API this gateway serves (tests read its route table). */
    public HttpApi httpApi() {
        return http;
    }

    public int httpPort() {
        return http.port();
    }

    public String gatewayId() {
        return gatewayId;
    }

    /** This gateway's session manager (tests in its package reach the tracker through it). */
    public SessionManager sessionManager() {
        return sessions;
    }

    public Warden warden() {
        return warden;
    }

    /** Acquire calls held open on this gateway. */
    public int pendingAcquires() {
        return engine.pendingCount();
    }

    /** The revocations this gateway runs or would take over (tests). */
    public Revocations revocations() {
        return revocations;
    }

    /** The watches this gateway serves ({@code GET /v1/watch}). */
    public WatchHub watches() {
        return watches;
    }

    /** What the console reads and does through (tests). */
    public ConsoleBridge consoleBackend() {
        return console;
    }

    public WardenMetrics metrics() {
        return metrics;
    }

    /** This gateway's ZooKeeper front: every read and write of its engine, sessions and watches goes through it. */
    public Zk zk() {
        return zk;
    }

    /** This gateway's ZooKeeper client (fault-injection tests expire its ZooKeeper session through it). */
    public CuratorFramework curator() {
        return client;
    }

    public boolean isLeader() {
        return leader.hasLeadership();
    }

    /** Sessions whose TTL this gateway tracks. */
    public int trackedSessions() {
        return sessions.trackedCount();
    }

    public boolean tracksSession(String sessionId) {
        return sessions.tracks(sessionId);
    }

    /**
     * SIGTERM: stop taking new requests, answer held calls (503: repeat with the same request_id elsewhere), give up
     * leadership and deregister so another gateway adopts this one's sessions with a fresh TTL, then stop. Idempotent.
     */
    public void drain() {
        if (stopped.get()) {
            return;
        }
        draining = true;
        log.info("gateway {} draining: refusing new requests, answering {} held calls", gatewayId, engine.pendingCount());
        http.beginDrain();
        engine.drain(); // answers every held call now; Jetty's graceful stop then writes the replies
        close();
        log.info("gateway {} drained and stopped; its sessions will be adopted by another gateway", gatewayId);
    }

    /** Stops at once (no drain). Idempotent. */
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
        io.warden.service.watch.WatchSource.Subscription events = revocationEvents;
        if (events != null) {
            events.cancel();
        }
        io.warden.service.watch.WatchSource.Subscription removed = removedCalls;
        if (removed != null) {
            removed.cancel();
        }
        console.close();
        watches.close();
        quietly(cell::close); // writes the high-water mark a last time
        quietly(http::stop);
        quietly(authenticator::close);
        quietly(leader::close);
        quietly(registration::close);
        quietly(client::close);
        zkSecurity.close();
        processMetrics.close();
        if (ownedClock != null) {
            ownedClock.close();
        }
    }

    private interface Step {
        void run() throws IOException;
    }

    private static void quietly(Step step) {
        try {
            step.run();
        } catch (Exception | Error e) {
            log.debug("while stopping: {}", e.toString());
        }
    }

    private static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
