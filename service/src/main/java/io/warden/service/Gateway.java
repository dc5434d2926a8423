package io.warden.service;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.warden.console.ConsoleSettings;
import io.warden.console.WardenConsole;
import io.warden.service.api.Warden;
import io.warden.service.auth.Authenticator;
import io.warden.service.cell.CellGuard;
import io.warden.service.config.BuildInfo;
import io.warden.service.config.CellAddress;
import io.warden.service.config.WardenConfig;
import io.warden.service.console.ConsoleBridge;
import io.warden.service.http.HttpApi;
import io.warden.service.lock.Revocations;
import io.warden.service.metrics.CellMeters;
import io.warden.service.metrics.PrometheusNames;
import io.warden.service.metrics.ProcessMetrics;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.session.SessionManager;
import io.warden.service.time.Clock;
import io.warden.service.time.SystemClock;
import io.warden.service.watch.WatchHub;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One running gateway: one {@link CellRuntime} per cell it serves (a Curator client, lock engine, sessions, watch
 * mirror, registration and leader election each; one cell unless {@code cells} names more), the {@link CellRouter}
 * that sends each call to its namespace's cell, and the HTTP API and console in front of them.
 *
 * <p>Lifecycle: {@link #start} returns a serving gateway; {@link #drain} (SIGTERM) or {@link #close} stops it. Both
 * are idempotent and safe from any thread.
 */
public final class Gateway implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private final WardenConfig config;
    private final String gatewayId;
    private final SystemClock ownedClock;
    /** Every cell, the default first; cells added while the gateway runs join it ({@link CellAdditions}). */
    private final CellSet cells;
    /** Cells added through the API, and those other gateways added (the default cell's directory). */
    private final CellAdditions additions;
    private final Clock clock;
    private final Rules rules;
    private final Revocations.Audit audit;
    /** The URL other gateways reach this one at; set once HTTP serves. */
    private volatile String url;
    /** The default cell: the ensemble of --zk (or the embedded one), home of every session. */
    private final CellRuntime home;
    private final CellRouter router;
    private final HttpApi http;
    private final Authenticator authenticator;
    private final ProcessMetrics processMetrics;
    /** Every meter of the gateway: its own (HTTP, auth, process) and each cell's (tagged with the cell). */
    private final PrometheusMeterRegistry registry;
    private final ConsoleBridge console;
    /** How long a deadlock must stay the same before its victim is removed (docs/decisions/0013). */
    public static final Duration DEADLOCK_DELAY = Duration.ofMillis(200);
    private final AtomicBoolean stopped = new AtomicBoolean();

    private Gateway(WardenConfig config, Clock clock, SystemClock ownedClock, Rules rules) {
        this.config = config;
        this.ownedClock = ownedClock;
        this.gatewayId = config.gatewayId() != null ? config.gatewayId() : "gw-" + randomHex(6);
        PrometheusMeterRegistry registry = PrometheusNames.applyTo(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        this.registry = registry;
        WardenMetrics.buildInfo(registry, BuildInfo.version());
        this.processMetrics = new ProcessMetrics(registry);
        // Revocations are audited in the console's log; the console is made after the cells (it reads the router).
        AtomicReference<ConsoleBridge> audits = new AtomicReference<>();
        Revocations.Audit audit = (action, target, reason, by, outcome) -> {
            ConsoleBridge c = audits.get();
            if (c != null) {
                c.auditRevocation(action, target, reason, by, outcome);
            }
        };
        this.clock = clock;
        this.rules = rules;
        this.audit = audit;
        List<CellRuntime> runtimes = new ArrayList<>();
        runtimes.add(new CellRuntime(CellRuntime.DEFAULT, config, clock, gatewayId, registry, rules, audit));
        for (CellAddress cell : config.cells()) {
            runtimes.add(newCell(cell));
        }
        this.cells = new CellSet(runtimes);
        this.home = cells.home();
        this.router = new CellRouter(cells, clock, config.routes());
        router.useMoves(new CellMoves(router, clock, audit, rules.moves()));
        this.additions = new CellAdditions(cells, new io.warden.service.cell.CellDirectory(home.zk(), clock),
                new CellAdditions.Starter() {
                    @Override
                    public CellRuntime build(CellAddress address) {
                        return newCell(address);
                    }

                    @Override
                    public void begin(CellRuntime cell) {
                        beginCell(cell);
                        cell.advertise(url, http.port());
                    }

                    @Override
                    public void beginInBackground(CellRuntime cell) {
                        Gateway.this.beginInBackground(cell, false);
                    }
                }, router::view, config.chroot());
        router.useAdditions(additions);
        CellSet served = this.cells;
        CellRouter routed = this.router;
        io.warden.service.console.CellLocks cellLocks = new io.warden.service.console.CellLocks() {
            @Override
            public List<Cell> all() {
                return served.values().stream().map(c -> new Cell(c.name(), c.lister(), c.zk())).toList();
            }

            @Override
            public Cell of(String namespace) {
                CellRuntime c = routed.readCellOf(namespace);
                return new Cell(c.name(), c.lister(), c.zk());
            }
        };
        this.console = new ConsoleBridge(home.zk(), router, cellLocks, home.sessions(), clock,
                java.time.Clock.systemUTC(), gatewayId, config.zkConnect(), home.zkSecurity().probeSockets(), home::isLeader);
        audits.set(console);
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
        CellRouter routes = this.router;
        for (CellRuntime cell : cells.values()) {
            meterServing(cell);
        }
        cells.onAdded(this::meterServing);
        // The API's watches go to their namespace's cell, each refused while its cell is (a rollback).
        this.http = new HttpApi(routes, routes, config, registry, cfg -> {
            pages.mount(cfg);
            console.mountPeerRoute(cfg);
        }, authenticator);
        this.http.useDeadlocks(routes::deadlocks);
        this.console.useWaitFor(router::deadlocks); // every cell's graph, in one
    }

    /** The parts of a cell besides the default one (nothing connects yet). */
    private CellRuntime newCell(CellAddress cell) {
        WardenConfig own = config.toBuilder().zkConnect(cell.zkConnect()).chroot(cell.chrootOr(config.chroot())).build();
        return new CellRuntime(cell.name(), own, clock, gatewayId, registry, rules, audit);
    }

    private void meterServing(CellRuntime cell) {
        io.micrometer.core.instrument.Gauge.builder("warden.cell.serving", cell, c -> c.ready() ? 1 : 0)
                .tag(CellMeters.TAG, cell.name())
                .description("1 while this gateway serves the cell (connected to its ensemble, not refused); its "
                        + "namespaces answer 503 otherwise").register(registry);
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

    /**
     * Starts every cell, the default first (each connects, checks itself and registers; a gateway starts only when
     * every cell it serves answers), then serves HTTP and publishes its URL in each cell.
     */
    private void begin() {
        List<CellRuntime> later = new ArrayList<>();
        for (CellRuntime cell : cells.list()) {
            try {
                beginCell(cell);
            } catch (CellRuntime.Unreachable e) {
                if (cell == home) {
                    throw e; // the default cell is every session's home: no gateway without it
                }
                log.warn("gateway {} starts without cell {}: {}; its namespaces answer 503 until it is reached (tried "
                        + "again every {} s)", gatewayId, cell.name(), e.getMessage(), LATE_CELL_RETRY.toSeconds());
                later.add(cell);
            }
        }
        console.start(home.watches());
        http.start(config.httpHost(), config.httpPort());
        String url = advertisedUrl();
        this.url = url;
        for (CellRuntime cell : cells.values()) {
            if (cell.begun()) {
                cell.advertise(url, http.port());
            }
        }
        for (CellRuntime cell : later) {
            beginInBackground(cell, true);
        }
        additions.follow().exceptionally(e -> {
            log.warn("gateway {} could not read the cell directory of the default cell ({}); cells added through other "
                    + "gateways are served once it is read", gatewayId, e.toString());
            return null;
        });
        log.info("gateway {} serving on port {} (ZooKeeper {}, chroot {}; {}){}", gatewayId, http.port(),
                config.zkConnect(), config.chroot(), home.zkSecurity().describe(), cells.size() == 1 ? ""
                        : "; cells " + cells.values().stream().map(c -> c.name() + " at " + c.config().zkConnect()
                        + c.config().chroot()).toList() + ", routes " + config.routes());
    }

    /**
     * The routes cell {@code name} starts with when it has none: the namespaces the {@code routes} setting gives it (for
     * the default cell: those it gives any other cell, which it does not serve).
     */
    private io.warden.service.zk.CellRoutes seed(String name) {
        List<String> mine = new ArrayList<>();
        List<String> elsewhere = new ArrayList<>();
        config.routes().forEach((namespace, cell) -> (cell.equals(name) ? mine : elsewhere).add(namespace));
        return CellRuntime.DEFAULT.equals(name)
                ? new io.warden.service.zk.CellRoutes(List.of(), elsewhere.stream()
                        .filter(ns -> !CellRuntime.DEFAULT.equals(config.routes().get(ns))).toList(), java.util.Map.of())
                : new io.warden.service.zk.CellRoutes(mine, List.of(), java.util.Map.of());
    }

    /** How often a cell that could not be reached at start is tried again. */
    static final Duration LATE_CELL_RETRY = Duration.ofSeconds(5);

    /**
     * Starts a cell. On a gateway whose settings name several cells, those cells start with the routes setting's routes
     * when they have none yet ({@link #seed}); a cell of the directory, and every cell of a gateway without the cells
     * setting, only reads its routes.
     */
    private void beginCell(CellRuntime cell) {
        boolean ofSettings = CellRuntime.DEFAULT.equals(cell.name())
                || config.cells().stream().anyMatch(c -> c.name().equals(cell.name()));
        cell.begin(List.of(new RevocationEvents(cell.revocations(), http)),
                config.cells().isEmpty() || !ofSettings ? null : seed(cell.name()));
    }

    /**
     * Starts a cell on a thread of its own (each attempt blocks for the start's wait), until it is started or the gateway
     * stops: a cell that could not be reached at the gateway's start ({@code waitFirst}: it was just tried), or one of
     * the cell directory. Until then its namespaces answer 503, as while any cell is out of reach.
     */
    private void beginInBackground(CellRuntime cell, boolean waitFirst) {
        Thread t = new Thread(() -> beginLater(cell, waitFirst), "warden-cell-" + cell.name() + "-start");
        t.setDaemon(true);
        t.start();
    }

    private void beginLater(CellRuntime cell, boolean waitFirst) {
        for (boolean wait = waitFirst; !stopped.get(); wait = true) {
            try {
                if (wait) {
                    Thread.sleep(LATE_CELL_RETRY.toMillis());
                }
                if (stopped.get()) {
                    return;
                }
                beginCell(cell);
                cell.advertise(url, http.port());
                log.info("gateway {} now serves cell {}", gatewayId, cell.name());
                return;
            } catch (CellRuntime.Unreachable e) {
                log.debug("cell {} still out of reach: {}", cell.name(), e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                if (!stopped.get()) {
                    log.error("gateway {} could not start cell {}: {}; its namespaces answer 503 until the gateway is "
                            + "restarted", gatewayId, cell.name(), e.toString());
                }
                return;
            }
        }
    }

    /** The URL other gateways reach this one at: advertise-host, else http-host, else this machine's name. */
    private String advertisedUrl() {
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
        return "http://" + (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + http.port();
    }

    /** Runs one adoption pass now in every cell this gateway leads (tests and operators). */
    public void adoptNow() {
        cells.values().forEach(CellRuntime::adoptNow);
    }

    /** How many adoption passes this gateway has finished as the default cell's leader (run, skipped or failed). */
    public long adoptionPasses() {
        return home.adoptionPasses();
    }

    /** This gateway's guard of its default cell: the token floor, and whether the cell is refused (tests). */
    public CellGuard cellGuard() {
        return home.guard();
    }

    /**
     * Whether calls of the default cell that need ZooKeeper are refused at once with 503: its client is not connected,
     * or ZooKeeper has left this gateway's requests unanswered past the stall bound.
     */
    public boolean zkRefusing() {
        return !home.zk().connected() || home.zk().stalled();
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

    /** The default cell's session manager (tests in its package reach the tracker through it). */
    public SessionManager sessionManager() {
        return home.sessions();
    }

    /** The lock service over every cell, as the HTTP API serves it. */
    public Warden warden() {
        return router;
    }

    /** Acquire calls held open on this gateway, in every cell. */
    public int pendingAcquires() {
        return cells.values().stream().mapToInt(c -> c.engine().pendingCount()).sum();
    }

    /** The session manager of cell {@code name} (tests and operators); null when this gateway does not serve it. */
    public SessionManager sessionManager(String name) {
        CellRuntime cell = cells.get(name);
        return cell == null ? null : cell.sessions();
    }

    /** The revocations this gateway runs or would take over in the default cell (tests). */
    public Revocations revocations() {
        return home.revocations();
    }

    /** The default cell's watches ({@code GET /v1/watch} of its namespaces). */
    public WatchHub watches() {
        return home.watches();
    }

    /** What the console reads and does through (tests). */
    public ConsoleBridge consoleBackend() {
        return console;
    }

    /** The default cell's meters (each cell's carry its name as the tag {@code cell}). */
    public WardenMetrics metrics() {
        return home.metrics();
    }

    /** Every meter of the gateway, as {@code /metrics} exports them: its own and each cell's. */
    public io.micrometer.core.instrument.MeterRegistry registry() {
        return registry;
    }

    /** The default cell's ZooKeeper front: every read and write of its engine, sessions and watches goes through it. */
    public Zk zk() {
        return home.zk();
    }

    /** The default cell's ZooKeeper client (fault-injection tests expire its ZooKeeper session through it). */
    public CuratorFramework curator() {
        return home.client();
    }

    /** The ZooKeeper client of cell {@code name} (tests); null when this gateway does not serve it. */
    public CuratorFramework curator(String name) {
        CellRuntime cell = cells.get(name);
        return cell == null ? null : cell.client();
    }

    /** Whether this gateway leads the default cell (adopts its vanished gateways' sessions). */
    public boolean isLeader() {
        return home.isLeader();
    }

    /** Sessions whose TTL this gateway tracks in the default cell. */
    public int trackedSessions() {
        return home.sessions().trackedCount();
    }

    public boolean tracksSession(String sessionId) {
        return home.sessions().tracks(sessionId);
    }

    /**
     * SIGTERM: stop taking new requests, answer held calls (503: repeat with the same request_id elsewhere), give up
     * leadership and deregister so another gateway adopts this one's sessions with a fresh TTL, then stop. Idempotent.
     */
    public void drain() {
        if (stopped.get()) {
            return;
        }
        log.info("gateway {} draining: refusing new requests, answering {} held calls", gatewayId, pendingAcquires());
        http.beginDrain();
        cells.values().forEach(CellRuntime::drain); // answers every held call now; Jetty's graceful stop then writes the replies
        close();
        log.info("gateway {} drained and stopped; its sessions will be adopted by another gateway", gatewayId);
    }

    /** Stops at once (no drain). Idempotent. */
    @Override
    public void close() {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        console.close();
        additions.close(); // no cell joins from now on
        for (CellRuntime cell : cells.values()) {
            cell.close();
        }
        Quietly.run(http::stop);
        Quietly.run(authenticator::close);
        processMetrics.close();
        if (ownedClock != null) {
            ownedClock.close();
        }
    }

    private static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
