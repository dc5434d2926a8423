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
 * address, never the token.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class LoginPage {
    static final int MAX_ACTOR = 64;
    private static final Logger log = LoggerFactory.getLogger(LoginPage.class);

    private final Pages pages;
    private final Auth auth;

    LoginPage(Pages pages) {
        this.pages = pages;
        this.auth = pages.auth();
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
        String actor = ctx.formParam("actor") == null ? "" : ctx.formParam("actor").strip();
        if (actor.isEmpty() || actor.length() > MAX_ACTOR || actor.chars().anyMatch(Character::isISOControl)) {
            pages.html(ctx, 400, "login", page, new LoginView(next, actor,
                    "actor: give your name (1 to " + MAX_ACTOR + " characters); it goes to the audit log", true));
            return;
        }
        if (!auth.tokenMatches(ctx.formParam("token"))) {
            log.warn("console login refused: wrong admin token for actor '{}' from {}", actor, ctx.ip());
            pages.html(ctx, 401, "login", page, new LoginView(next, actor, "wrong admin token", true));
            return;
        }
        auth.logIn(ctx, actor);
        log.info("console login: '{}' from {}", actor, ctx.ip());
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

    /** Only a path inside the console: never another host ({@code //evil}, {@code /\evil}) or a header break. */
    static String safeNext(String next) {
        if (next == null || next.isEmpty()) {
            return Urls.overview();
        }
        boolean inside = next.equals(Urls.ROOT) || next.startsWith(Urls.ROOT + "/") || next.startsWith(Urls.ROOT + "?");
        boolean clean = !next.contains("//") && !next.contains("\\") && next.chars().noneMatch(Character::isISOControl);
        return inside && clean ? next : Urls.overview();
    }
}
