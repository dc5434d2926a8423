package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.model.AdminResult;
import io.warden.console.model.AuditEntry;
import io.warden.console.model.QueuedRequest;
import io.warden.console.view.ConfirmView;
import io.warden.console.view.InvalidInput;
import io.warden.console.view.LockNames;
import io.warden.console.view.Page;
import io.warden.console.view.SessionIndex;
import io.warden.console.view.Urls;
import io.warden.console.view.Viewer;
import java.util.List;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two admin actions, each a GET confirmation page (what will happen, a required reason, a Confirm button) and a
 * POST that does it:
 * <ul>
 *   <li>{@code /console/actions/force-release?name=&token=} releases one hold on behalf of its session;</li>
 *   <li>{@code /console/actions/ask-release?name=&token=} asks the holder to let go within a grace, and force-releases it
 *   after (a revoke);</li>
 *   <li>{@code /console/actions/expire-session?session=} expires a session now.</li>
 * </ul>
 * A POST needs an admin login and the CSRF token of that login (else 403, see {@link Auth#requireAdminPost}) and a
 * reason of 1 to {@value ConfirmView#MAX_REASON} characters (else 400 naming {@code reason}). It hands the backend an
 * {@link AuditEntry} (who, when, what, why, from where; the backend fills in gateway and outcome) and answers 303 to
 * the lock or session page with a signed flash message.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class AdminActions {
    static final String FORCE_RELEASE = "FORCE_RELEASE";
    static final String EXPIRE_SESSION = "EXPIRE_SESSION";
    static final String ASK_RELEASE = "ASK_RELEASE";
    /** A revoke's reason is shown to the holder: the API's limit, shorter than the console's other reasons. */
    static final int MAX_ASK_REASON = 256;
    private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    private static final Logger log = LoggerFactory.getLogger(AdminActions.class);

    private final ConsoleBackend backend;
    private final Pages pages;
    private final Auth auth;

    AdminActions(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
        this.auth = pages.auth();
    }

    void confirmRelease(Context ctx) {
        confirm(ctx, "force-release", "Force-release ", true);
    }

    /**
     * The page that asks an admin to confirm {@code action} on the hold named by the {@code name} and {@code token}
     * parameters, with the lock's waiters when {@code showWaiters} (who a force-release lets in).
     */
    private void confirm(Context ctx, String action, String title, boolean showWaiters) {
        if (!adminOrLogin(ctx)) {
            return;
        }
        String name = LockNames.require("name", Pages.param(ctx, "name"));
        long token = token(Pages.param(ctx, "token"));
        Page page = pages.page(ctx, title + name, "", name, false);
        pages.await(ctx, () -> backend.lock(name), detail -> {
            QueuedRequest hold = detail.flatMap(d -> d.lock().holders().stream()
                    .filter(h -> h.token() == token).findFirst()).orElse(null);
            List<QueuedRequest> waiters = showWaiters ? detail.map(d -> d.lock().waiters()).orElse(List.of()) : List.of();
            pages.html(ctx, 200, "confirm", page, new ConfirmView(action, name, token, hold, waiters,
                    null, null, "", null, pages.now()));
        }, failure -> pages.html(ctx, 503, "confirm", page.withBanner("Cannot read " + name + ": "
                + Pages.describe(failure)), null));
    }

    void release(Context ctx) {
        Viewer admin = auth.requireAdminPost(ctx);
        String name = LockNames.require("name", form(ctx, "name"));
        long token = token(form(ctx, "token"));
        String reason = reason(ctx.formParam("reason"));
        String target = name + "#" + token;
        AuditEntry audit = new AuditEntry(pages.now(), admin.actor(), FORCE_RELEASE, target, reason, ctx.ip(), null, null);
        log.info("console: {} force-releases lock {} token {} from {}: {}", admin.actor(), name, token, ctx.ip(), reason);
        pages.await(ctx, () -> backend.forceRelease(name, token, audit),
                result -> Pages.seeOther(ctx, Urls.lock(name) + flash(result)),
                failure -> failed(ctx, "force-release of " + target, failure));
    }

    void confirmAsk(Context ctx) {
        confirm(ctx, "ask-release", "Ask to release ", false);
    }

    void ask(Context ctx) {
        Viewer admin = auth.requireAdminPost(ctx);
        String name = LockNames.require("name", form(ctx, "name"));
        long token = token(form(ctx, "token"));
        long graceMs = graceSeconds(form(ctx, "grace")) * 1000L;
        String reason = reason(ctx.formParam("reason"));
        if (reason.length() > MAX_ASK_REASON) {
            throw new InvalidInput("reason", "is at most " + MAX_ASK_REASON + " characters when asking a holder to let go");
        }
        String target = name + "#" + token;
        AuditEntry audit = new AuditEntry(pages.now(), admin.actor(), ASK_RELEASE, target, reason, ctx.ip(), null, null);
        log.info("console: {} asks the holder of lock {} token {} to let go within {} ms, from {}: {}", admin.actor(), name,
                token, graceMs, ctx.ip(), reason);
        pages.await(ctx, () -> backend.askToRelease(name, token, graceMs, audit),
                result -> Pages.seeOther(ctx, Urls.lock(name) + flash(result)),
                failure -> failed(ctx, "asking the holder of " + target + " to let go", failure));
    }

    static long graceSeconds(String raw) {
        try {
            long s = Long.parseLong(raw.trim());
            if (s >= 0 && s <= ConfirmView.MAX_GRACE_SECONDS) {
                return s;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new InvalidInput("grace", "must be a whole number of seconds from 0 to " + ConfirmView.MAX_GRACE_SECONDS);
    }

    void confirmExpire(Context ctx) {
        if (!adminOrLogin(ctx)) {
            return;
        }
        String id = sessionId(Pages.param(ctx, "session"));
        Page page = pages.page(ctx, "Expire session " + id, "sessions", id, false);
        pages.await(ctx, backend::snapshot, cell -> pages.html(ctx, 200, "confirm", page,
                        new ConfirmView("expire-session", null, 0, null, null, id,
                                SessionIndex.of(cell).get(id).orElse(null), "", null, pages.now())),
                failure -> pages.html(ctx, 503, "confirm", page.withBanner("Cannot read session " + id + ": "
                        + Pages.describe(failure)), null));
    }

    void expire(Context ctx) {
        Viewer admin = auth.requireAdminPost(ctx);
        String id = sessionId(form(ctx, "session"));
        String reason = reason(ctx.formParam("reason"));
        AuditEntry audit = new AuditEntry(pages.now(), admin.actor(), EXPIRE_SESSION, id, reason, ctx.ip(), null, null);
        log.info("console: {} expires session {} from {}: {}", admin.actor(), id, ctx.ip(), reason);
        pages.await(ctx, () -> backend.expireSession(id, audit),
                result -> Pages.seeOther(ctx, Urls.session(id) + flash(result)),
                failure -> failed(ctx, "expiring session " + id, failure));
    }

    /**
     * Whether an admin asks; otherwise answers: 403 when admin is off, else a redirect to the login page that
     * comes back here.
     */
    private boolean adminOrLogin(Context ctx) {
        if (!auth.adminEnabled()) {
            throw ConsoleError.forbidden("admin actions are turned off on this gateway (no admin token is configured)");
        }
        if (auth.viewer(ctx).admin()) {
            return true;
        }
        String here = ctx.path() + (ctx.queryString() == null ? "" : "?" + ctx.queryString());
        Pages.seeOther(ctx, Urls.login(here));
        return false;
    }

    private void failed(Context ctx, String what, Throwable failure) {
        log.warn("console: {} failed: {}", what, Pages.describe(failure));
        pages.fail(ctx, new ConsoleError(503, "Action failed", what + " failed: " + Pages.describe(failure)
                + ". It may or may not have happened: check the page and the audit log before trying again.", null));
    }

    private String flash(AdminResult result) {
        String message = (result.done() ? "done: " : "no-op: ") + result.message();
        return Urls.query("done", message, "sig", auth.signFlash(message));
    }

    private static String form(Context ctx, String field) {
        String v = ctx.formParam(field);
        return v == null ? "" : v.trim();
    }

    static long token(String raw) {
        try {
            long token = Long.parseLong(raw.trim());
            if (token > 0) {
                return token;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new InvalidInput("token", "must be a positive integer: the fencing token of the hold");
    }

    static String sessionId(String raw) {
        if (raw == null || !SESSION_ID.matcher(raw).matches()) {
            throw new InvalidInput("session", "must be a session id (1 to 128 of [A-Za-z0-9._:-])");
        }
        return raw;
    }

    static String reason(String raw) {
        String reason = raw == null ? "" : raw.strip();
        if (reason.isEmpty() || reason.length() > ConfirmView.MAX_REASON) {
            throw new InvalidInput("reason", "is required: 1 to " + ConfirmView.MAX_REASON
                    + " characters saying why (it goes to the audit log)");
        }
        return reason;
    }
}
