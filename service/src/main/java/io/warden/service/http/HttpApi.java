package io.warden.service.http;

import io.javalin.Javalin;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.javalin.http.HandlerType;
import io.javalin.http.HttpResponseException;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jetty.JettyConnectionMetrics;
import io.micrometer.core.instrument.binder.jetty.JettyServerThreadPoolMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.Warden;
import io.warden.service.config.WardenConfig;
import io.warden.service.api.WardenException;
import io.warden.service.auth.Authenticator;
import io.warden.service.watch.WatchMemory;
import io.warden.service.watch.WatchSource;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's HTTP API (docs/api.md) on Javalin/Jetty: the {@code /v1} calls, the lease API, health and
 * metrics, the WebSocket keepalive ({@link KeepaliveSockets}) and the watch stream ({@link WatchRoutes}). It validates every request before anything reaches the {@link Warden}, holds waiting acquires
 * without a thread ({@code ctx.future}), and answers every failure with a problem document made in one place
 * ({@link Problems}).
 *
 * <p>The edge: {@link BodyReadHandler} reads every body before a handler runs, without a thread and within
 * {@code body-read-timeout-ms}; {@link ConnectionsPerIp} caps open connections per client address
 * ({@code max-connections-per-ip}); {@link KeepaliveSockets} caps the replies queued for a socket; Jetty's own errors
 * are problem documents ({@link JettyProblemHandler}).
 *
 * <p>Lifecycle: {@link #start} once, optionally {@link #beginDrain} (new calls get 503, held calls are still
 * answered by the engine), then {@link #stop}.
 *
 * <p>Concurrency: {@code draining} is a volatile flag read by every request; {@code app} is written by
 * {@link #start} and {@link #stop}, which the owner calls from one thread. Handlers share only immutable
 * helpers, and the watch streams share one thread-safe {@link WatchMemory}.
 */
public final class HttpApi {
    /** Where {@code GET /v1/deadlocks} reads (set once the gateway's watch hub exists; until then 503). */
    private volatile java.util.function.Supplier<java.util.concurrent.CompletableFuture<io.warden.service.watch.WatchHub.DeadlockReport>> deadlockSource;
    /** Held calls wait up to {@link AcquireRequest#MAX_WAIT_MS}; the servlet async timeout must never cut one short. */
    static final long ASYNC_TIMEOUT_MS = AcquireRequest.MAX_WAIT_MS + 30_000;
    /** A connection idle this long is closed; longer than any held call, so Jetty never times out a waiting acquire. */
    static final long IDLE_TIMEOUT_MS = ASYNC_TIMEOUT_MS + 5_000;
    static final String TIMER = "warden.http.requests";
    private static final String ROUTE = "warden.route";
    private static final String UNMATCHED = "unmatched";
    private static final Set<String> DRAIN_EXEMPT = Set.of("/health/live", "/health/ready", "/metrics");
    /** Probes carry whatever Host the prober uses (a pod IP, a service name) and learn nothing but "UP". */
    private static final Set<String> HOST_EXEMPT = Set.of("/health/live", "/health/ready");
    private static final Set<String> METHODS = Set.of("GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS");

    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

    /** A WebSocket is closed after this long without a frame: longer than any client's keepalive interval. */
    static final long WS_IDLE_TIMEOUT_MS = 5 * 60_000;
    /** A request thread idle this long ends, down to the pool's minimum of 8. */
    private static final long POOL_IDLE_TIMEOUT_MS = 60_000;
    /** Heartbeat frames carry nothing; anything bigger is a misbehaving client (Jetty closes with 1009). */
    static final long WS_MAX_MESSAGE_BYTES = 1024;

    private final Warden warden;
    private final java.util.function.Consumer<JavalinConfig> extraRoutes;
    private final WatchSource watches;
    private final WardenConfig config;
    private final PrometheusMeterRegistry registry;
    private final Authenticator authenticator;
    /** Request timers by route, method and status, registered once (the set is small: templates, not paths). */
    private final java.util.Map<String, Timer> timers = new java.util.concurrent.ConcurrentHashMap<>();
    private final Json json = new Json();
    private final Problems problems = new Problems(json);
    private final io.micrometer.core.instrument.Counter refusedConnections;
    private final io.micrometer.core.instrument.Counter bodyTimeouts;
    private final io.micrometer.core.instrument.Counter bodiesTooLarge;
    private volatile boolean draining;
    private volatile Javalin app;

    private volatile EdgeGuard guard;
    private volatile WatchRoutes watchRoutes;
    /** Set by {@link #configure} before any route is served. */
    private volatile Access access;
    private volatile KeepaliveSockets keepaliveSockets;

    /** {@code GET /v1/deadlocks} answers from {@code report} (until set: 503). */
    public void useDeadlocks(java.util.function.Supplier<java.util.concurrent.CompletableFuture<io.warden.service.watch.WatchHub.DeadlockReport>> report) {
        this.deadlockSource = report;
    }

    /** An API without watches: {@code GET /v1/watch} answers 503. */
    public HttpApi(Warden warden, WardenConfig config, PrometheusMeterRegistry registry) {
        this(warden, (filter, since, sink) -> {
            throw WardenException.unavailable("this gateway serves no watches", null);
        }, config, registry);
    }

    public HttpApi(Warden warden, WatchSource watches, WardenConfig config, PrometheusMeterRegistry registry) {
        this(warden, watches, config, registry, cfg -> { });
    }

    /**
     * With {@code extraRoutes}: called inside Javalin's configuration after the API's routes, to mount more (the
     * console at {@code /console}); those routes answer their own errors and are not refused while draining.
     */
    public HttpApi(Warden warden, WatchSource watches, WardenConfig config, PrometheusMeterRegistry registry,
                   java.util.function.Consumer<JavalinConfig> extraRoutes) {
        this(warden, watches, config, registry, extraRoutes, Authenticator.open());
    }

    /**
     * With {@code authenticator}: who the callers of {@code /v1}, {@code /lock} (and with {@code metrics-auth}
     * {@code /metrics}) are, and so what they may do (docs/api.md, authorization); {@link Authenticator#open()} lets
     * everyone in.
     */
    public HttpApi(Warden warden, WatchSource watches, WardenConfig config, PrometheusMeterRegistry registry,
                   java.util.function.Consumer<JavalinConfig> extraRoutes, Authenticator authenticator) {
        this.authenticator = Objects.requireNonNull(authenticator, "authenticator");
        this.extraRoutes = Objects.requireNonNull(extraRoutes, "extraRoutes");
        this.warden = Objects.requireNonNull(warden, "warden");
        this.watches = Objects.requireNonNull(watches, "watches");
        this.config = Objects.requireNonNull(config, "config");
        this.registry = Objects.requireNonNull(registry, "registry");
        this.refusedConnections = io.micrometer.core.instrument.Counter.builder("warden.http.connections.refused")
                .description("connections closed on opening because their address had max-connections-per-ip open")
                .register(registry);
        this.bodyTimeouts = io.micrometer.core.instrument.Counter.builder("warden.http.body.timeouts")
                .description("requests answered 408 because their body did not arrive within body-read-timeout-ms")
                .register(registry);
        this.bodiesTooLarge = io.micrometer.core.instrument.Counter.builder("warden.http.body.too.large")
                .description("requests answered 413 because their body was larger than max-body-bytes")
                .register(registry);
    }

    /** Starts serving on {@code host:port} (port 0 picks a free port; see {@link #port()}). */
    public synchronized void start(String host, int port) {
        if (app != null) {
            throw new IllegalStateException("HttpApi already started on port " + port());
        }
        Javalin created = Javalin.create(cfg -> configure(cfg, host, port));
        created.start();
        app = created;
        log.info("HTTP API listening on {}:{}", host, created.port());
    }

    /** The bound port; valid after {@link #start}. */
    public int port() {
        Javalin current = app;
        if (current == null) {
            throw new IllegalStateException("HttpApi not started");
        }
        return current.port();
    }

    /**
     * From now on every new call except {@code /health/*} and {@code /metrics} is answered 503 UNAVAILABLE
     * with {@code Retry-After}, and {@code /health/ready} reports not ready. Calls already held are untouched.
     */
    public void beginDrain() {
        draining = true;
        closeStreams("gateway draining; reconnect to another gateway");
    }

    /** Ends every watch stream (each after what it has queued) and keepalive socket (1001). */
    private void closeStreams(String reason) {
        WatchRoutes w = watchRoutes;
        if (w != null) {
            w.closeAll(reason);
        }
        KeepaliveSockets k = keepaliveSockets;
        if (k != null) {
            k.closeAll(reason);
        }
    }

    /**
     * The holder {@code sessionId} of {@code token} on {@code name} is asked to let go: its keepalive sockets on this
     * gateway that asked for events get a frame saying so ({@link KeepaliveSockets#revokeRequested}). Any thread.
     */
    public void revokeRequested(String sessionId, String name, long token, long revision) {
        KeepaliveSockets k = keepaliveSockets;
        if (k != null) {
            k.revokeRequested(sessionId, name, token, revision);
        }
    }

    /** Open watch streams and keepalive sockets (tests). */
    int openStreams() {
        WatchRoutes w = watchRoutes;
        KeepaliveSockets k = keepaliveSockets;
        return (w == null ? 0 : w.openCount()) + (k == null ? 0 : k.openCount());
    }

    /**
     * Every route the running server has, as Javalin's router holds them: HTTP handlers by method and path template,
     * and WebSocket endpoints as {@code GET} (their upgrade request), the console's included. Tests compare them with
     * the OpenAPI document.
     */
    java.util.List<ServedRoute> servedRoutes() {
        Javalin current = app;
        if (current == null) {
            throw new IllegalStateException("HttpApi not started");
        }
        java.util.List<ServedRoute> routes = new java.util.ArrayList<>();
        current.unsafe.internalRouter.allHttpHandlers().stream().map(e -> e.endpoint)
                .filter(e -> e.method.isHttpMethod()) // not before/after filters
                .forEach(e -> routes.add(new ServedRoute(e.method.name(), e.path)));
        current.unsafe.internalRouter.allWsHandlers().stream()
                .filter(e -> e.getType() == io.javalin.websocket.WsHandlerType.WEBSOCKET)
                .forEach(e -> routes.add(new ServedRoute("GET", e.getPath())));
        return routes;
    }

    /** One served route: an HTTP method and Javalin's path template ({@code {param}} or {@code <param>}). */
    record ServedRoute(String method, String template) {
    }

    public boolean draining() {
        return draining;
    }

    /**
     * Stops the server; idempotent. After {@link #beginDrain} it first lets replies still in flight (held calls the
     * engine has just answered) be written, for up to {@code config.drainTimeout()}; otherwise it stops at once.
     */
    public synchronized void stop() {
        Javalin current = app;
        if (current != null) {
            closeStreams("gateway stopping");
            long stopTimeout = draining ? config.drainTimeout().toMillis() : 0;
            current.jettyServer().server().setStopTimeout(stopTimeout);
            stopBounded(current, stopTimeout + STOP_GRACE_MS);
            app = null;
        }
    }

    /** How long Jetty's stop may take beyond the drain before the gateway gives up waiting for it. */
    static final long STOP_GRACE_MS = 5_000;

    /**
     * Stops Jetty on a thread of its own and waits at most {@code limitMs}. Jetty 12.1 can deadlock in stop: the
     * selector, closing a connection whose response is still being written to a client that does not read, waits for
     * that write, which only the selector can finish (seen in CI: {@code ManagedSelector.doStop} waiting on a selector
     * parked in {@code HttpConnection$SendCallback.cancel}). Then the stop is interrupted and the gateway goes on
     * closing; the connector's port may stay bound until the process ends.
     */
    private static void stopBounded(Javalin current, long limitMs) {
        Thread stopper = new Thread(current::stop, "warden-http-stop");
        stopper.setDaemon(true);
        stopper.start();
        try {
            stopper.join(limitMs);
            if (stopper.isAlive()) {
                log.warn("the HTTP server did not stop within {} ms (a connection stuck in a write); going on without it",
                        limitMs);
                stopper.interrupt();
                stopper.join(1_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void configure(JavalinConfig cfg, String host, int port) {
        cfg.startup.showJavalinBanner = false;
        cfg.startup.showOldJavalinVersionWarning = false;
        cfg.http.prefer405over404 = true;
        cfg.http.generateEtags = false;
        cfg.http.asyncTimeout = ASYNC_TIMEOUT_MS;
        cfg.http.maxRequestSize = config.maxBodyBytes(); // we read bodies ourselves (Exchange.body); a backstop
        // A request holds a thread only while it is decided; a held acquire, a watch stream and an idle WebSocket hold
        // none, so the pool is capped (http-threads) and the gateway's threads stay flat under 10,000 held calls.
        // Javalin's default pool grows to 250 under a burst of connections and keeps them for a minute.
        QueuedThreadPool pool = new QueuedThreadPool(config.httpThreads(), Math.min(8, config.httpThreads()),
                (int) POOL_IDLE_TIMEOUT_MS);
        pool.setName("warden-http");
        cfg.jetty.threadPool = pool;
        cfg.jetty.addConnector((server, httpConfiguration) -> {
            ServerConnector connector = config.tlsCert() == null
                    ? new ServerConnector(server, new HttpConnectionFactory(httpConfiguration))
                    : tlsConnector(server, httpConfiguration);
            connector.setHost(host);
            connector.setPort(port);
            connector.setIdleTimeout(IDLE_TIMEOUT_MS);
            connector.addBean(new ConnectionsPerIp(config.maxConnectionsPerIp(), refusedConnections));
            // jetty_connections_current/max, jetty_connections_received/sent_bytes, jetty_connections_messages_in/out_total
            // (names as PrometheusNames makes them)
            connector.addBean(new JettyConnectionMetrics(registry, connector));
            return connector;
        });
        cfg.jetty.modifyServer(server -> {
            server.setErrorHandler(new JettyProblemHandler(problems, json));
            // jetty_threads_busy, _idle, _current, _config_max, _jobs (queued work): busy near max is a stalled gateway
            new JettyServerThreadPoolMetrics(server.getThreadPool(), Tags.empty()).bindTo(registry);
            // Javalin nests its servlet context inside the innermost wrapper. GracefulHandler lets in-flight replies
            // finish on stop; BodyReadHandler reads each body without a thread, within body-read-timeout-ms.
            GracefulHandler graceful = new GracefulHandler();
            graceful.setHandler(new BodyReadHandler(config.maxBodyBytes(), config.bodyReadTimeout().toMillis(), problems,
                    json, bodyTimeouts, bodiesTooLarge));
            server.setHandler(graceful);
        });
        // No HTTP sessions: the gateway uses none (the console signs a cookie of its own), but Javalin asks every
        // WebSocket upgrade for one, and Jetty's default kept each in memory, never expiring (its default max idle is -1),
        // with a JSESSIONID cookie: every upgrade, refused ones included, grew the heap for good. A NullSessionCache keeps none past its
        // request, and no cookie is set (HttpEdgeTest.aWebSocketUpgrade_fromAForeignOrigin_isRefused).
        cfg.jetty.modifyServletContextHandler(context -> {
            org.eclipse.jetty.ee10.servlet.SessionHandler sessions = context.getSessionHandler();
            if (sessions != null) {
                org.eclipse.jetty.session.NullSessionCache none = new org.eclipse.jetty.session.NullSessionCache(sessions);
                none.setSessionDataStore(new org.eclipse.jetty.session.NullSessionDataStore());
                sessions.setSessionCache(none);
                sessions.setUsingCookies(false);
            }
        });
        cfg.jetty.modifyWebSocketServletFactory(factory -> {
            factory.setIdleTimeout(Duration.ofMillis(WS_IDLE_TIMEOUT_MS));
            factory.setMaxTextMessageSize(WS_MAX_MESSAGE_BYTES);
            factory.setMaxBinaryMessageSize(WS_MAX_MESSAGE_BYTES);
        });
        cfg.requestLogger.http(this::record);
        cfg.routes.exception(HttpResponseException.class, (e, ctx) -> problems.respond(ctx, e));
        cfg.routes.exception(Exception.class, (e, ctx) -> problems.respond(ctx, e));
        // Javalin's async timeout answers a bare 500; it cannot fire before the engine ends a wait (ASYNC_TIMEOUT_MS
        // exceeds the longest wait_ms), but if it ever does, the client gets a problem document it can retry on.
        cfg.routes.error(500, ctx -> {
            if (ctx.resultInputStream() == null) {
                problems.respond(ctx, new ProblemException(503, "UNAVAILABLE", "the lock engine did not answer in time; retry"));
            }
        });

        EdgeGuard guard = new EdgeGuard(config.allowedHosts(), config.allowedOrigins(), host, config.advertiseHost());
        this.guard = guard;
        // Host and Origin for everything: the routes registered by route() check them themselves (after naming their
        // route for the metrics), the rest (the console, its assets, unknown paths) here.
        cfg.routes.before(ctx -> {
            String path = ctx.path();
            if (!(path.startsWith("/v1/") || path.startsWith("/lock/") || path.startsWith("/health/") || path.equals("/metrics"))) {
                guard.checkBrowser(ctx);
            }
        });
        cfg.routes.wsBeforeUpgrade(ctx -> {
            try {
                guard.checkBrowser(ctx);
            } catch (ProblemException e) {
                problems.respondNow(ctx, e); // Javalin sends a refused upgrade's status and headers, not its body
                throw e;
            }
        });
        Exchange exchange = new Exchange(json, problems, config.maxBodyBytes(), responseExecutor());
        Requests requests = new Requests(json, config);
        Access access = new Access(authenticator, warden, CertificatePrincipal.of(config.tlsClientPrincipal()));
        this.access = access;
        LockRoutes v1 = new LockRoutes(warden, requests, exchange, access);
        DeadlockRoutes deadlockRoutes = new DeadlockRoutes(requests, exchange, access,
                () -> deadlockSource == null ? null : deadlockSource.get());
        LeaseRoutes lease = new LeaseRoutes(warden, requests, exchange, access);
        WatchMemory watchMemory = WatchMemory.of(config.watchBufferBytes());
        io.micrometer.core.instrument.Gauge.builder("warden.watch.buffer.bytes", watchMemory, WatchMemory::used)
                .description("bytes queued by all watch streams for their clients (shared frames once)").register(registry);
        io.micrometer.core.instrument.Gauge.builder("warden.watch.buffer.peak.bytes", watchMemory, WatchMemory::peak)
                .description("the most bytes all watch streams held queued at once").register(registry);
        io.micrometer.core.instrument.Gauge.builder("warden.watch.buffer.limit.bytes", watchMemory, WatchMemory::limit)
                .description("what all watch streams together may hold queued (watch-buffer-bytes)").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("warden.watch.streams.cut.memory", watchMemory, WatchMemory::cuts)
                .description("watch streams cut because the watch buffer was full").register(registry);
        WatchRoutes watch = new WatchRoutes(watches, exchange, json, responseExecutor(), watchMemory, access);
        KeepaliveSockets sockets = new KeepaliveSockets(warden, json, () -> draining, access,
                io.micrometer.core.instrument.Counter.builder("warden.ws.closed.backlog")
                        .description("keepalive WebSockets closed (1008) for leaving more than "
                                + KeepaliveSockets.MAX_BACKLOG + " replies unread").register(registry));
        io.micrometer.core.instrument.Gauge.builder("warden.ws.backlog.max.frames", sockets, KeepaliveSockets::maxBacklog)
                .description("the most replies any open keepalive WebSocket has queued and not yet written").register(registry);
        watchRoutes = watch;
        keepaliveSockets = sockets;

        route(cfg, HandlerType.POST, "/v1/sessions", v1::openSession);
        route(cfg, HandlerType.GET, "/v1/sessions/{session_id}", v1::session);
        route(cfg, HandlerType.POST, "/v1/sessions/{session_id}/keepalive", v1::keepalive);
        // The upgrade request's client certificates, kept where the socket's connect handler can read them (the
        // servlet request itself is gone by then).
        cfg.routes.addHttpHandler(HandlerType.WEBSOCKET_BEFORE_UPGRADE, "/v1/sessions/{session_id}/keepalive",
                ctx -> ctx.attribute(KeepaliveSockets.CERTIFICATES, Access.certificates(ctx)));
        cfg.routes.ws("/v1/sessions/{session_id}/keepalive", sockets::configure);
        route(cfg, HandlerType.DELETE, "/v1/sessions/{session_id}", v1::closeSession);
        route(cfg, HandlerType.POST, "/v1/acquire", v1::acquire);
        route(cfg, HandlerType.POST, "/v1/release", v1::release);
        route(cfg, HandlerType.POST, "/v1/revoke", v1::revoke);
        route(cfg, HandlerType.GET, "/v1/locks", v1::locks);
        route(cfg, HandlerType.GET, LockRoutes.LOCKS_PREFIX + "<name>", v1::lock);
        route(cfg, HandlerType.GET, "/v1/check", v1::check);
        route(cfg, HandlerType.GET, "/v1/namespaces", v1::namespaces);
        route(cfg, HandlerType.GET, "/v1/deadlocks", deadlockRoutes::deadlocks);
        CellRoutes cellRoutes = new CellRoutes(warden, requests, exchange, access);
        route(cfg, HandlerType.GET, "/v1/cells", cellRoutes::cells);
        route(cfg, HandlerType.PUT, "/v1/cells/{cell}", cellRoutes::add);
        route(cfg, HandlerType.PUT, "/v1/namespaces/{namespace}/cell", cellRoutes::move);
        route(cfg, HandlerType.POST, "/v1/cells/{cell}/token-floor", cellRoutes::raiseFloor);
        route(cfg, HandlerType.GET, "/v1/watch", watch::watch);
        route(cfg, HandlerType.POST, "/lock/acquire", lease::acquire);
        route(cfg, HandlerType.POST, "/lock/release", lease::release);
        route(cfg, HandlerType.POST, "/lock/renew", lease::renew);
        route(cfg, HandlerType.GET, "/health/live", ctx -> exchange.json(ctx, 200, new Replies.Health("UP")));
        route(cfg, HandlerType.GET, "/health/ready", ctx -> ready(ctx, exchange));
        route(cfg, HandlerType.GET, "/metrics", ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8")
                .result(registry.scrape()));
        byte[] openApi = OpenApi.document();
        route(cfg, HandlerType.GET, OpenApi.PATH, ctx -> ctx.contentType("application/json").result(openApi));
        extraRoutes.accept(cfg);
    }

    /**
     * HTTPS with {@code tls-cert}/{@code tls-key}; with {@code tls-client-ca} client certificates are asked for (not
     * required: a client may use a bearer token instead) and verified against it, and the verified chain is the
     * request's {@code jakarta.servlet.request.X509Certificate} attribute ({@link Access}). No SNI checks: clients
     * reach gateways by address as often as by name.
     */
    private ServerConnector tlsConnector(Server server, org.eclipse.jetty.server.HttpConfiguration http) {
        org.eclipse.jetty.util.ssl.SslContextFactory.Server ssl = new org.eclipse.jetty.util.ssl.SslContextFactory.Server();
        ssl.setKeyStore(Pem.keyStore(config.tlsCert(), config.tlsKey()));
        ssl.setKeyStorePassword(new String(Pem.PASSWORD));
        if (config.tlsClientCa() != null) {
            ssl.setTrustStore(Pem.trustStore(config.tlsClientCa()));
            ssl.setWantClientAuth(true);
        }
        http.addCustomizer(new org.eclipse.jetty.server.SecureRequestCustomizer(false, false, -1, false));
        return new ServerConnector(server, ssl, new HttpConnectionFactory(http));
    }

    /**
     * Registers {@code handler} behind the drain check, authentication (every {@code /v1} and {@code /lock} call, and
     * {@code /metrics} with metrics-auth; never {@code /health/*}) and the one exception-to-problem mapping.
     */
    private void route(JavalinConfig cfg, HandlerType method, String template, Handler handler) {
        boolean exempt = DRAIN_EXEMPT.contains(template);
        boolean authenticated = template.startsWith("/v1/") || template.startsWith("/lock/")
                || (template.equals("/metrics") && config.metricsAuth());
        boolean anyHost = HOST_EXEMPT.contains(template);
        boolean api = template.startsWith("/v1/") || template.startsWith("/lock/");
        cfg.routes.addHttpHandler(method, template, ctx -> {
            ctx.attribute(ROUTE, template);
            try {
                if (!anyHost) {
                    guard.checkBrowser(ctx);
                }
                if (api) {
                    guard.checkMediaType(ctx);
                }
                if (draining && !exempt) {
                    throw ProblemException.draining();
                }
                if (authenticated) {
                    access.authenticate(ctx);
                }
                handler.handle(ctx);
            } catch (Exception | LinkageError | AssertionError e) {
                problems.respond(ctx, e);
            }
        });
    }

    private void ready(Context ctx, Exchange exchange) {
        boolean ready;
        String detail = null;
        try {
            ready = !draining && warden.ready();
            detail = ready ? warden.degradedDetail() : warden.notReadyDetail();
        } catch (RuntimeException e) {
            log.debug("readiness check failed", e);
            ready = false;
        }
        exchange.json(ctx, ready ? 200 : 503, new Replies.Health(ready ? "READY" : draining ? "DRAINING" : "NOT_READY",
                draining ? null : detail));
    }

    /** Per request: one timer sample tagged by route template (never the raw path), method and status; a debug line. */
    private void record(Context ctx, Float executionMs) {
        String route = Objects.requireNonNullElse(ctx.attribute(ROUTE),
                ctx.path().equals("/console") || ctx.path().startsWith("/console/") ? "/console" : UNMATCHED);
        String method = ctx.method().name();
        String status = Integer.toString(ctx.statusCode());
        long nanos = executionMs == null ? 0 : (long) (executionMs * 1_000_000.0);
        String m = METHODS.contains(method) ? method : "OTHER";
        timers.computeIfAbsent(route + " " + m + " " + status, k -> Timer.builder(TIMER)
                .description("HTTP requests by route template, method and status, from routing to the reply")
                .tags("route", route, "method", m, "status", status)
                .serviceLevelObjectives(io.warden.service.metrics.WardenMetrics.LATENCY_BUCKETS) // histogram_quantile
                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
        log.debug("{} {} -> {} in {} ms", method, ctx.path(), status, executionMs);
    }

    /**
     * Replies to held calls are written on Jetty's own thread pool, never on the engine thread that completed
     * the future. While the server stops, the pool refuses work; the reply is then written inline.
     */
    private Executor responseExecutor() {
        return task -> {
            Javalin current = app;
            Server server = current == null ? null : current.jettyServer().server();
            if (server == null) {
                task.run();
                return;
            }
            try {
                server.getThreadPool().execute(task);
            } catch (RejectedExecutionException e) {
                task.run();
            }
        };
    }
}
