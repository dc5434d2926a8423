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
        String key = settings.adminToken();
        if (key == null && settings.principals() != null) {
            // No admin token to sign logins with: a random key, so logins are valid on this gateway only.
            byte[] random = new byte[32];
            new java.security.SecureRandom().nextBytes(random);
            key = java.util.HexFormat.of().formatHex(random);
        }
        this.signer = settings.adminEnabled() ? new LoginSigner(key) : null;
    }

    /** Whether every page needs a login (the gateway has an auth file). */
    boolean loginRequired() {
        return settings.principals() != null;
    }

    /**
     * The principal a login token names, if it may use the console (admin of every namespace); empty for an unknown
     * token; a principal that is not admin everywhere is a 403 {@link ConsoleError}.
     */
    java.util.Optional<String> principal(String token) {
        if (token == null || token.isEmpty() || settings.principals() == null) {
            return java.util.Optional.empty();
        }
        java.util.Optional<ConsolePrincipals.Principal> p = settings.principals().byToken(token);
        if (p.isPresent() && !p.get().adminEverywhere()) {
            throw ConsoleError.forbidden("principal " + p.get().name() + " may not use the console: it needs role admin "
                    + "in every namespace (\"*\"); use the API for namespaced work");
        }
        return p.map(ConsolePrincipals.Principal::name);
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
        Viewer viewer = new Viewer(null, adminEnabled(), null, settings.openMode(), loginRequired());
        String cookie = ctx.cookie(COOKIE);
        if (signer != null && cookie != null) {
            Optional<LoginSigner.Login> login = signer.verify(cookie, clock.instant());
            if (login.isPresent()) {
                viewer = new Viewer(login.get().actor(), true, signer.csrf(cookie), settings.openMode(), loginRequired());
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

    /** Open mode only: whether this is the admin token (with principals the admin token is no login). */
    boolean tokenMatches(String candidate) {
        return signer != null && settings.principals() == null && settings.adminToken() != null
                && signer.tokenMatches(candidate);
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
