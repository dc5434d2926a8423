package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.view.LoginView;
import io.warden.console.view.Page;
import io.warden.console.view.Urls;
import io.warden.console.view.Viewer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET/POST /console/login} and {@code POST /console/logout}. The login form takes the admin's name (for the
 * audit log) and the cell's admin token; a wrong token is a 401 page and a warn line that names the actor and the
 * address, never the token. Failed logins are limited ({@link LoginThrottle}: 5 per address and 100 in all per
 * minute, then 429).
 *
 * <p>Concurrency: the throttle is thread-safe; everything else is immutable; safe from any thread.
 */
final class LoginPage {
    static final int MAX_ACTOR = 64;
    private static final Logger log = LoggerFactory.getLogger(LoginPage.class);

    private final Pages pages;
    private final Auth auth;
    private final LoginThrottle throttle;
    /** Monotonic nanoseconds, for the throttle's window. */
    private final java.util.function.LongSupplier ticker;

    LoginPage(Pages pages, java.util.function.LongSupplier ticker) {
        this.pages = pages;
        this.auth = pages.auth();
        this.ticker = ticker;
        this.throttle = new LoginThrottle();
    }

    void form(Context ctx) {
        String next = safeNext(ctx.queryParam("next"));
        Page page = pages.page(ctx, "Admin login", "login", "", false);
        pages.html(ctx, auth.adminEnabled() ? 200 : 403, "login", page,
                new LoginView(next, "", auth.adminEnabled() ? null : disabled(), auth.adminEnabled()));
    }

    void login(Context ctx) {
        String next = safeNext(ctx.formParam("next"));
        Page page = pages.page(ctx, "Admin login", "login", "", false);
        if (!auth.adminEnabled()) {
            pages.html(ctx, 403, "login", page, new LoginView(next, "", disabled(), false));
            return;
        }
        if (auth.loginRequired()) {
            loginAsPrincipal(ctx, next, page);
            return;
        }
        String actor = ctx.formParam("actor") == null ? "" : ctx.formParam("actor").strip();
        if (actor.isEmpty() || actor.length() > MAX_ACTOR || actor.chars().anyMatch(Character::isISOControl)) {
            pages.html(ctx, 400, "login", page, new LoginView(next, actor,
                    "actor: give your name (1 to " + MAX_ACTOR + " characters); it goes to the audit log", true));
            return;
        }
        String address = ctx.ip();
        java.util.Optional<java.time.Duration> wait = throttle.retryAfter(address, ticker.getAsLong());
        if (wait.isPresent()) {
            long seconds = Math.max(1, (wait.get().toMillis() + 999) / 1000);
            log.warn("console login refused: too many failed logins (actor '{}' from {}); retry in {} s", actor, address, seconds);
            ctx.header("Retry-After", Long.toString(seconds));
            pages.html(ctx, 429, "login", page, new LoginView(next, actor,
                    "too many failed logins; try again in " + seconds + " s", true));
            return;
        }
        if (!auth.tokenMatches(ctx.formParam("token"))) {
            throttle.failed(address, ticker.getAsLong());
            log.warn("console login refused: wrong admin token for actor '{}' from {}", actor, address);
            pages.html(ctx, 401, "login", page, new LoginView(next, actor, "wrong admin token", true));
            return;
        }
        throttle.succeeded(address);
        auth.logIn(ctx, actor);
        log.info("console login: '{}' from {}", actor, ctx.ip());
        Pages.seeOther(ctx, next);
    }

    /** With an auth file: the token names the principal, which is the actor in the audit log. */
    private void loginAsPrincipal(Context ctx, String next, Page page) {
        String address = ctx.ip();
        java.util.Optional<java.time.Duration> wait = throttle.retryAfter(address, ticker.getAsLong());
        if (wait.isPresent()) {
            long seconds = Math.max(1, (wait.get().toMillis() + 999) / 1000);
            log.warn("console login refused: too many failed logins from {}; retry in {} s", address, seconds);
            ctx.header("Retry-After", Long.toString(seconds));
            pages.html(ctx, 429, "login", page, new LoginView(next, "", "too many failed logins; try again in " + seconds + " s", true));
            return;
        }
        java.util.Optional<String> principal;
        try {
            principal = auth.principal(ctx.formParam("token"));
        } catch (ConsoleError e) {
            throttle.failed(address, ticker.getAsLong());
            log.warn("console login refused from {}: {}", address, e.getMessage());
            pages.html(ctx, 403, "login", page, new LoginView(next, "", e.getMessage(), true));
            return;
        }
        if (principal.isEmpty()) {
            throttle.failed(address, ticker.getAsLong());
            log.warn("console login refused: a token of no principal, from {}", address);
            pages.html(ctx, 401, "login", page, new LoginView(next, "", "that token is not one of this cell's principals'", true));
            return;
        }
        throttle.succeeded(address);
        auth.logIn(ctx, principal.get());
        log.info("console login: principal '{}' from {}", principal.get(), address);
        Pages.seeOther(ctx, next);
    }

    void logout(Context ctx) {
        Viewer viewer = auth.viewer(ctx);
        if (viewer.admin()) {
            auth.requireAdminPost(ctx); // a cross-site POST must not log anyone out either
            log.info("console logout: '{}' from {}", viewer.actor(), ctx.ip());
        }
        auth.logOut(ctx);
        Pages.seeOther(ctx, Urls.overview());
    }

    private static String disabled() {
        return "admin actions are turned off on this gateway: it has no admin token configured";
    }

    /**
     * Only a path inside the console: never another host ({@code //evil}, {@code /\evil}), a header break, or a path
     * that leaves {@code /console} once a browser resolves its dot segments ({@code /console/../v1}, also written
     * {@code %2e%2e}). Anything else means the overview.
     */
    static String safeNext(String next) {
        if (next == null || next.isEmpty()) {
            return Urls.overview();
        }
        boolean inside = next.equals(Urls.ROOT) || next.startsWith(Urls.ROOT + "/") || next.startsWith(Urls.ROOT + "?");
        String lower = next.toLowerCase(java.util.Locale.ROOT);
        boolean clean = !next.contains("//") && !next.contains("\\") && next.chars().noneMatch(Character::isISOControl)
                && !lower.contains("%2f") && !lower.contains("%5c") && next.chars().allMatch(c -> c > ' ' && c < 0x7f);
        if (!inside || !clean) {
            return Urls.overview();
        }
        int end = next.length();
        for (char c : new char[] {'?', '#'}) {
            int at = next.indexOf(c);
            if (at >= 0 && at < end) {
                end = at;
            }
        }
        for (String segment : lower.substring(0, end).split("/", -1)) {
            String plain = segment.replace("%2e", ".");
            int semicolon = plain.indexOf(';');
            if (semicolon >= 0) {
                plain = plain.substring(0, semicolon); // a path parameter: some servers read "..;" as ".."
            }
            if (plain.equals(".") || plain.equals("..")) {
                return Urls.overview();
            }
        }
        return next;
    }
}
