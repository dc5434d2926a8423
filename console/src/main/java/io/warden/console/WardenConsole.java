package io.warden.console;

import io.javalin.config.JavalinConfig;
import io.javalin.config.JavalinState;
import io.javalin.http.Handler;
import io.javalin.http.HandlerType;
import io.javalin.plugin.Plugin;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.eclipse.jetty.server.Server;

/**
 * Warden's admin console: server-rendered pages (precompiled jte templates, htmx polling for live regions) under
 * {@code /console}, reading the cell through a {@link ConsoleBackend}. The gateway creates one and calls
 * {@link #mount} inside {@code Javalin.create(cfg -> ...)}:
 *
 * <pre>{@code
 * WardenConsole console = new WardenConsole(backend, settings, Clock.systemUTC());
 * Javalin.create(cfg -> { ...; console.mount(cfg); });
 * }</pre>
 *
 * <p>Routes (all under {@code /console}): {@code /} overview; {@code /ns/{ns}} a namespace's locks;
 * {@code /locks/<name>} one lock; {@code /sessions}, {@code /sessions/{id}}; {@code /waits} the wait-for graph;
 * {@code /cells} the gateway's cells; {@code /audit}; {@code /go?q=} search; {@code /suggest?q=} search suggestions;
 * {@code /login} (GET, POST), {@code /logout} (POST); {@code /actions/force-release} and {@code /actions/expire-session} (GET confirms, POST
 * does); {@code /static/{file}}; anything else under {@code /console} that no route (the console's or one the gateway
 * adds, before or after {@code mount}) takes is a console 404 page. Every page also
 * answers {@code ?fragment=1} with just its live region. {@link #mount} also enables webjars (htmx is served from
 * {@code /webjars/htmx.org/2.0.10/dist/htmx.min.js}).
 *
 * <p>Failures are rendered by the console itself as HTML (error pages, banners, a 503 text for a failed live
 * fragment), never passed to the gateway's exception mapper. Backend calls hold no thread while they wait
 * ({@code ctx.future}); pages are rendered on the Jetty thread pool.
 *
 * <p>Concurrency: immutable after construction, apart from a reference to the Jetty server that {@link #mount}
 * sets when Javalin builds it; route handlers are safe to run concurrently. Mount it on one Javalin only.
 */
public final class WardenConsole {
    private final ConsoleBackend backend;
    private final Pages pages;
    private final Clock wallClock;
    private final LongSupplier ticker;
    private final AtomicReference<Server> server = new AtomicReference<>();

    /** A console whose intervals (the login throttle's window) are measured with {@link System#nanoTime}. */
    public WardenConsole(ConsoleBackend backend, ConsoleSettings settings, Clock wallClock) {
        this(backend, settings, wallClock, System::nanoTime);
    }

    /**
     * @param wallClock what the pages show and login cookies expire by
     * @param ticker    a monotonic clock in nanoseconds for intervals that must not follow wall-clock steps
     */
    public WardenConsole(ConsoleBackend backend, ConsoleSettings settings, Clock wallClock, LongSupplier ticker) {
        this.backend = Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(settings, "settings");
        this.wallClock = Objects.requireNonNull(wallClock, "wallClock");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        Auth auth = new Auth(settings, wallClock);
        this.pages = new Pages(new Templates(), auth, settings, wallClock, () -> this::execute);
    }

    /** Registers every console route, webjars, and a hook that finds the Jetty thread pool to render on. */
    public void mount(JavalinConfig cfg) {
        cfg.staticFiles.enableWebjars();
        cfg.jetty.modifyServer(server::set);

        OverviewPage overview = new OverviewPage(backend, pages);
        NamespacePage namespace = new NamespacePage(backend, pages);
        LockPage lock = new LockPage(backend, pages);
        SessionsPage sessions = new SessionsPage(backend, pages);
        WaitsPage waits = new WaitsPage(backend, pages);
        CellsPage cells = new CellsPage(backend, pages);
        AuditPage audit = new AuditPage(backend, pages);
        SearchRoutes search = new SearchRoutes(backend, pages);
        AdminActions actions = new AdminActions(backend, pages);
        LoginPage login = new LoginPage(pages, ticker);
        StaticAssets assets = new StaticAssets();

        get(cfg, "/console", overview::handle);
        get(cfg, "/console/ns/{ns}", namespace::handle);
        get(cfg, LockPage.PATH, lock::handle);
        get(cfg, "/console/sessions", sessions::list);
        get(cfg, "/console/sessions/{id}", sessions::detail);
        get(cfg, "/console/waits", waits::handle);
        get(cfg, "/console/cells", cells::handle);
        get(cfg, "/console/audit", audit::handle);
        get(cfg, "/console/go", search::go);
        get(cfg, "/console/suggest", search::suggest);
        get(cfg, "/console/login", login::form);
        post(cfg, "/console/login", login::login);
        post(cfg, "/console/logout", login::logout);
        get(cfg, "/console/actions/force-release", actions::confirmRelease);
        post(cfg, "/console/actions/force-release", actions::release);
        get(cfg, "/console/actions/ask-release", actions::confirmAsk);
        post(cfg, "/console/actions/ask-release", actions::ask);
        get(cfg, "/console/actions/expire-session", actions::confirmExpire);
        post(cfg, "/console/actions/expire-session", actions::expire);
        get(cfg, "/console/static/{file}", assets::serve);
        cfg.registerPlugin(new NotFoundPages(pages));
    }

    /**
     * The console's 404 page for {@code GET} and {@code POST /console/<anything else>}. Javalin tries routes in the
     * order they were added and the first match wins, so this catch-all must come after every other route under
     * {@code /console}, also those the gateway adds after {@link #mount} (its peer route): a plugin's
     * {@link #onStart} runs after the whole {@code Javalin.create} configuration.
     */
    private static final class NotFoundPages extends Plugin<Void> {
        private final Pages pages;

        NotFoundPages(Pages pages) {
            this.pages = pages;
        }

        @Override
        public void onStart(JavalinState state) {
            Handler notFound = pages.guard(ctx -> {
                throw ConsoleError.notFound("the console has no page at " + ctx.path());
            });
            state.routes.addHttpHandler(HandlerType.GET, "/console/<rest>", notFound);
            state.routes.addHttpHandler(HandlerType.POST, "/console/<rest>", notFound);
        }
    }

    private void get(JavalinConfig cfg, String path, Handler handler) {
        cfg.routes.addHttpHandler(HandlerType.GET, path, pages.guard(handler));
    }

    private void post(JavalinConfig cfg, String path, Handler handler) {
        cfg.routes.addHttpHandler(HandlerType.POST, path, pages.guard(handler));
    }

    /**
     * Runs a completion (rendering and writing a page) on Jetty's pool, never on the backend thread that completed
     * the future; inline while the server is not there or is stopping.
     */
    private void execute(Runnable task) {
        Server s = server.get();
        if (s == null) {
            task.run();
            return;
        }
        try {
            s.getThreadPool().execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }
}
