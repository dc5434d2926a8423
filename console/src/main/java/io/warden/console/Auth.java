package io.warden.console;

import io.javalin.http.Context;
import io.javalin.http.Cookie;
import io.javalin.http.SameSite;
import io.warden.console.view.Viewer;
import java.time.Clock;
import java.util.Optional;

/**
 * Who is looking: a read-only viewer, or an admin logged in with the cell's admin token. An admin carries a signed
 * cookie ({@value #COOKIE}: HttpOnly, SameSite=Strict, Path=/console, Secure over https) and must send the CSRF
 * token derived from it with every admin POST.
 *
 * <p>Failed logins are limited per address and in all ({@link LoginThrottle}); still, put the console behind the
 * network controls of the rest of the admin plane.
 *
 * <p>Concurrency: immutable; the viewer of a request is cached on that request's context. Safe from any thread.
 */
final class Auth {
    static final String COOKIE = "warden_console";
    private static final String VIEWER = "warden.console.viewer";

    private final ConsoleSettings settings;
    private final Clock clock;
    private final LoginSigner signer; // null when admin is off

    Auth(ConsoleSettings settings, Clock clock) {
        this.settings = settings;
        this.clock = clock;
        this.signer = settings.adminEnabled() ? new LoginSigner(settings.adminToken()) : null;
    }

    boolean adminEnabled() {
        return signer != null;
    }

    /** The viewer of this request: an admin when it carries a valid, unexpired login cookie. */
    Viewer viewer(Context ctx) {
        Viewer cached = ctx.attribute(VIEWER);
        if (cached != null) {
            return cached;
        }
        Viewer viewer = Viewer.anonymous(adminEnabled());
        String cookie = ctx.cookie(COOKIE);
        if (signer != null && cookie != null) {
            Optional<LoginSigner.Login> login = signer.verify(cookie, clock.instant());
            if (login.isPresent()) {
                viewer = new Viewer(login.get().actor(), true, signer.csrf(cookie));
            }
        }
        ctx.attribute(VIEWER, viewer);
        return viewer;
    }

    /**
     * The admin making this POST, after checking the login and the {@code csrf} form field.
     *
     * @throws ConsoleError 403 when admin is off, the request carries no valid login, or the CSRF token is wrong
     */
    Viewer requireAdminPost(Context ctx) {
        if (signer == null) {
            throw ConsoleError.forbidden("admin actions are turned off on this gateway (no admin token is configured)");
        }
        Viewer viewer = viewer(ctx);
        if (!viewer.admin()) {
            throw new ConsoleError(403, "Forbidden", "only a logged-in admin may do this; read-only viewers cannot",
                    "login");
        }
        if (!signer.csrfMatches(ctx.cookie(COOKIE), ctx.formParam("csrf"))) {
            throw ConsoleError.forbidden("the form's CSRF token is missing or does not match your login; "
                    + "reload the page and try again");
        }
        return viewer;
    }

    boolean tokenMatches(String candidate) {
        return signer != null && signer.tokenMatches(candidate);
    }

    /** Logs {@code actor} in for {@link ConsoleSettings#loginTtl()}. */
    void logIn(Context ctx, String actor) {
        String value = signer.issue(actor, clock.instant().plus(settings.loginTtl()));
        ctx.cookie(cookie(ctx, value, (int) Math.min(Integer.MAX_VALUE, settings.loginTtl().toSeconds())));
    }

    void logOut(Context ctx) {
        ctx.cookie(cookie(ctx, "", 0));
    }

    /** A flash message's signature, or null when admin is off (then no action can have been done). */
    String signFlash(String message) {
        return signer == null ? null : signer.signFlash(message);
    }

    boolean flashMatches(String message, String signature) {
        return signer != null && signer.flashMatches(message, signature);
    }

    private static Cookie cookie(Context ctx, String value, int maxAge) {
        boolean https = "https".equalsIgnoreCase(ctx.scheme())
                || "https".equalsIgnoreCase(ctx.header("X-Forwarded-Proto"));
        return new Cookie(COOKIE, value, "/console", maxAge, https, true, null, SameSite.STRICT);
    }
}
