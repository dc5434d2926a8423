package io.warden.console;

import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.javalin.http.HttpStatus;
import io.warden.console.view.ErrorView;
import io.warden.console.view.InvalidInput;
import io.warden.console.view.Page;
import io.warden.console.view.Urls;
import io.warden.console.view.Viewer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every console route shares: the page chrome (viewer, search box, flash, live URL), rendering of full pages
 * and of their live fragments, error pages, security headers, and waiting for the backend without a thread.
 *
 * <p>Errors never escape to the gateway's JSON exception mapper: {@link #guard} catches everything a handler throws
 * and {@link #await} everything that happens after, and both render HTML (a full error page, or for a live fragment
 * a short text with an error status, which htmx does not swap in, so the page keeps its last content and says it is
 * stale).
 *
 * <p>Concurrency: immutable after construction (the executor supplier reads the Jetty server once it exists);
 * safe from any thread. Backend futures complete on backend threads; rendering and writing happen on
 * {@code executor}, never on a ZooKeeper thread.
 */
final class Pages {
    /** A backend call that takes longer is shown as failed (the gateway's async timeout is far longer). */
    static final Duration BACKEND_TIMEOUT = Duration.ofSeconds(10);
    static final String FRAGMENT = "fragment";
    private static final Logger log = LoggerFactory.getLogger(Pages.class);
    private static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";

    private final Templates templates;
    private final Auth auth;
    private final ConsoleSettings settings;
    private final Clock clock;
    private final Supplier<Executor> executor;

    Pages(Templates templates, Auth auth, ConsoleSettings settings, Clock clock, Supplier<Executor> executor) {
        this.templates = templates;
        this.auth = auth;
        this.settings = settings;
        this.clock = clock;
        this.executor = executor;
    }

    Instant now() {
        return clock.instant();
    }

    Auth auth() {
        return auth;
    }

    /** Whether this request asks only for the live region ({@code ?fragment=1}). */
    static boolean fragment(Context ctx) {
        return "1".equals(ctx.queryParam(FRAGMENT));
    }

    /** A query parameter, trimmed; empty when absent. */
    static String param(Context ctx, String name) {
        String v = ctx.queryParam(name);
        return v == null ? "" : v.trim();
    }

    /**
     * The chrome of a page. {@code live} says whether it has a live region; its URL is this request's path and query
     * with {@code fragment=1} (and without the flash).
     */
    Page page(Context ctx, String title, String nav, String search, boolean live) {
        Viewer viewer = auth.viewer(ctx);
        String flash = ctx.queryParam("done");
        if (flash != null && !auth.flashMatches(flash, ctx.queryParam("sig"))) {
            flash = null; // unsigned: a crafted link must not make the console claim something was done
        }
        return new Page(title, nav, viewer, search, settings.pollInterval().toMillis(), live ? liveUrl(ctx) : null,
                flash, null, "");
    }

    private static String liveUrl(Context ctx) {
        StringBuilder url = new StringBuilder(ctx.path());
        char sep = '?';
        for (Map.Entry<String, List<String>> e : ctx.queryParamMap().entrySet()) {
            String key = e.getKey();
            if (key.equals(FRAGMENT) || key.equals("done") || key.equals("sig")) {
                continue;
            }
            for (String value : e.getValue()) {
                url.append(sep).append(Urls.component(key)).append('=').append(Urls.component(value));
                sep = '&';
            }
        }
        return url.append(sep).append(FRAGMENT).append("=1").toString();
    }

    /** Renders the page {@code template} (or, for a fragment request, its {@code _live} part) with status 200. */
    void show(Context ctx, String template, Page page, Object view) {
        show(ctx, 200, template, page, view);
    }

    void show(Context ctx, int status, String template, Page page, Object view) {
        html(ctx, status, fragment(ctx) ? template + "_live" : template, page, view);
    }

    /** Renders a template that is a whole page and has no live part (login, confirmations). */
    void html(Context ctx, int status, String template, Page page, Object view) {
        String body = templates.render(template, page, view);
        ctx.status(status).contentType("text/html; charset=utf-8").result(body);
    }

    /**
     * The backend could not answer: a fragment request gets 503 and one line of text (the page stays as it was and
     * turns stale); a full page is rendered without data, with the failure as a banner and its live region still
     * polling, so it fills in once the backend answers again.
     */
    void unavailable(Context ctx, String template, Page page, Throwable failure) {
        String why = describe(failure);
        log.debug("console {} unavailable: {}", ctx.path(), why);
        if (fragment(ctx)) {
            text(ctx, 503, "cannot read the cell: " + why);
        } else {
            html(ctx, 503, template, page.withBanner("Cannot read the cell: " + why), null);
        }
    }

    /** Renders an error page (or, for a fragment, a line of text) for {@code e}. Never throws. */
    void fail(Context ctx, ConsoleError e) {
        try {
            if (fragment(ctx)) {
                text(ctx, e.status(), e.getMessage());
                return;
            }
            String hint = "login".equals(e.hint()) ? Urls.login(ctx.path()) : e.hint();
            Page page = page(ctx, e.title(), "", "", false);
            html(ctx, e.status(), "error", page, new ErrorView(e.status(), e.title(), e.getMessage(), hint));
        } catch (RuntimeException | LinkageError renderFailure) {
            log.warn("console error page for {} failed to render", ctx.path(), renderFailure);
            text(ctx, e.status(), e.title() + ": " + e.getMessage());
        }
    }

    private static void text(Context ctx, int status, String text) {
        ctx.status(status).contentType("text/plain; charset=utf-8").result(text);
    }

    /**
     * Wraps a route: security headers on every answer, and every failure rendered as an HTML page here, never passed
     * to the gateway's (JSON) exception mapper.
     */
    Handler guard(Handler handler) {
        return ctx -> {
            ctx.header("Content-Security-Policy", CSP);
            ctx.header("X-Content-Type-Options", "nosniff");
            ctx.header("Referrer-Policy", "same-origin");
            ctx.header("X-Frame-Options", "DENY");
            ctx.header("Cache-Control", "no-store");
            try {
                if (auth.loginRequired() && !auth.viewer(ctx).admin() && !open(ctx.path())) {
                    requireLogin(ctx);
                    return;
                }
                handler.handle(ctx);
            } catch (Throwable t) {
                handleFailure(ctx, t);
            }
        };
    }

    /** Pages anyone may fetch even when every other needs a login: the login page and the stylesheet and scripts. */
    private static boolean open(String path) {
        return path.equals("/console/login") || path.startsWith("/console/static/");
    }

    /**
     * With an auth file every page needs a login (docs/api.md, authorization: the console's pages show every session):
     * a page is a 303 to the login page, coming back here after; a live fragment or a POST is a 401 text.
     */
    private static void requireLogin(Context ctx) {
        if (ctx.method() == io.javalin.http.HandlerType.GET && ctx.queryParam(FRAGMENT) == null) {
            String here = ctx.path() + (ctx.queryString() == null ? "" : "?" + ctx.queryString());
            seeOther(ctx, Urls.login(here));
        } else {
            text(ctx, 401, "log in first: this console needs the bearer token of an admin of every namespace");
        }
    }

    private void handleFailure(Context ctx, Throwable t) {
        Throwable cause = unwrap(t);
        if (cause instanceof ConsoleError e) {
            fail(ctx, e);
        } else if (cause instanceof InvalidInput e) {
            fail(ctx, ConsoleError.badRequest(e));
        } else {
            log.warn("console {} {} failed", ctx.method(), ctx.path(), cause);
            fail(ctx, new ConsoleError(500, "Console error",
                    "the console failed to build this page (" + describe(cause) + "); the gateway log has details",
                    null));
        }
    }

    /**
     * Calls the backend and, once its future completes, {@code onValue} on the response executor; failures (an
     * exception thrown by the call, a failed future, a timeout after {@link #BACKEND_TIMEOUT}) go to
     * {@code onFailure}. No thread waits in between ({@code ctx.future}). Whatever either callback throws is rendered
     * as by {@link #guard}.
     */
    <T> void await(Context ctx, Supplier<CompletableFuture<T>> call, Consumer<T> onValue,
                   Consumer<Throwable> onFailure) {
        CompletableFuture<T> future = bounded(attempt(call));
        ctx.future(() -> future.handleAsync((value, failure) -> {
            try {
                if (failure != null) {
                    onFailure.accept(unwrap(failure));
                } else {
                    onValue.accept(value);
                }
            } catch (Throwable t) {
                handleFailure(ctx, t);
            }
            return null;
        }, executor.get()));
    }

    /** The backend's future, or a failed one when the call itself threw. */
    static <T> CompletableFuture<T> attempt(Supplier<CompletableFuture<T>> call) {
        try {
            CompletableFuture<T> f = call.get();
            return f != null ? f : CompletableFuture.failedFuture(new IllegalStateException("the backend returned no future"));
        } catch (RuntimeException | Error e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A copy of {@code future} that fails after {@link #BACKEND_TIMEOUT}. A copy, because the backend may hand the
     * same (cached) future to many requests, and the timeout must not fail theirs.
     */
    static <T> CompletableFuture<T> bounded(CompletableFuture<T> future) {
        return future.copy().orTimeout(BACKEND_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** Redirects with 303 See Other (a POST's answer is then fetched with GET). */
    static void seeOther(Context ctx, String location) {
        ctx.redirect(location, HttpStatus.SEE_OTHER);
    }

    static Throwable unwrap(Throwable t) {
        Throwable cause = t;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** One line about a failure for a banner: its message, or its type when it has none. */
    static String describe(Throwable failure) {
        Throwable cause = unwrap(failure);
        if (cause instanceof TimeoutException) {
            return "no answer within " + BACKEND_TIMEOUT.toSeconds() + " s";
        }
        String message = cause.getMessage();
        String text = message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
        return text.length() > 300 ? text.substring(0, 300) + "…" : text;
    }
}
