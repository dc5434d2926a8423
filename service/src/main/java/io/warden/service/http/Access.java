package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.api.Holder;
import io.warden.service.api.LockName;
import io.warden.service.api.SessionView;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.auth.Authenticator;
import io.warden.service.auth.Caller;
import io.warden.service.auth.Role;
import java.security.cert.X509Certificate;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may do what (docs/api.md, authorization), for the handlers: names the caller of a request
 * ({@link #authenticate}), checks a role in a namespace ({@link #need}), and checks that a session is the caller's or
 * that the caller is an admin of every namespace the session touches ({@link #session}). Every refusal and every admin
 * action on another principal's session is logged with principal, target and reason ({@link #audit}, rate-limited).
 *
 * <p>Costs: a session tracked by this gateway is checked in memory; another costs one read of its record (the
 * takeover or acquire that follows would read it anyway). An admin of some namespaces (not {@code *}) acting on another
 * principal's session costs one read of that session's requests. In open mode nothing is checked or read.
 *
 * <p>Thread-safety: immutable but for the log limiter, which is thread-safe.
 */
final class Access {
    static final String CALLER = "warden.caller";
    static final String CERTIFICATES = "jakarta.servlet.request.X509Certificate";
    private static final Logger audit = LoggerFactory.getLogger("io.warden.audit");

    private final Authenticator authenticator;
    private final Warden warden;
    private final Function<X509Certificate, String> certificatePrincipal;
    private final RateLimitedLog denials = new RateLimitedLog(audit, 20);

    Access(Authenticator authenticator, Warden warden, Function<X509Certificate, String> certificatePrincipal) {
        this.authenticator = authenticator;
        this.warden = warden;
        this.certificatePrincipal = certificatePrincipal;
    }

    boolean enabled() {
        return authenticator.enabled();
    }

    /** Names the caller of {@code ctx} and remembers it on the request; UNAUTHENTICATED when it has no principal. */
    Caller authenticate(Context ctx) {
        Caller c = authenticate(ctx.header("Authorization"), certificates(ctx));
        ctx.attribute(CALLER, c);
        return c;
    }

    /** Names the caller of a request with this {@code Authorization} header and client certificate chain. */
    Caller authenticate(String authorization, X509Certificate[] chain) {
        String fromCertificate = chain == null || chain.length == 0 ? null : certificatePrincipal.apply(chain[0]);
        try {
            return authenticator.authenticate(authorization, fromCertificate);
        } catch (WardenException e) {
            denials.warn("unauthenticated: {}", e.getMessage());
            throw e;
        }
    }

    static X509Certificate[] certificates(Context ctx) {
        Object certs = ctx.req().getAttribute(CERTIFICATES);
        return certs instanceof X509Certificate[] chain ? chain : null;
    }

    /** The caller {@link #authenticate} named for this request. */
    static Caller caller(Context ctx) {
        Caller c = ctx.attribute(CALLER);
        return c == null ? Caller.OPEN : c;
    }

    /** PERMISSION_DENIED unless the caller has {@code role} in {@code namespace}. */
    void need(Caller caller, String namespace, Role role, String action) {
        if (!caller.may(namespace, role)) {
            throw deny(caller, action + " in namespace " + namespace, "needs role " + role.text() + " in namespace "
                    + namespace + " (has " + (caller.role(namespace) == null ? "none" : caller.role(namespace).text()) + ")");
        }
    }

    /** PERMISSION_DENIED unless the caller has {@code role} in every namespace ({@code *}). */
    void needEverywhere(Caller caller, Role role, String action) {
        if (!caller.mayEverywhere(role)) {
            throw deny(caller, action, "needs role " + role.text() + " in every namespace (\"*\")");
        }
    }

    /** PERMISSION_DENIED unless the caller has {@code role} in at least one namespace. */
    void needSomewhere(Caller caller, Role role, String action) {
        if (caller.grants().stream().noneMatch(g -> g.role().includes(role))) {
            throw deny(caller, action, "needs role " + role.text() + " in at least one namespace");
        }
    }

    /**
     * Completes when the caller may act on the session: it owns it, or it is an admin of every namespace the session
     * holds or waits in (and of {@code alsoIn}, the namespace the action touches, when not null). Fails with
     * PERMISSION_DENIED otherwise, and SESSION_NOT_FOUND when there is no such session.
     */
    CompletableFuture<Void> session(Caller caller, String sessionId, String alsoIn, String action) {
        if (caller.open()) {
            return CompletableFuture.completedFuture(null);
        }
        return warden.sessionPrincipal(sessionId).thenCompose(owner -> {
            if (caller.is(owner.orElse(null))) {
                return CompletableFuture.completedFuture(null);
            }
            String whose = owner.map(o -> "principal " + o).orElse("no principal (opened in open mode)");
            if (caller.mayEverywhere(Role.ADMIN)) {
                audit(caller, action, sessionId, whose);
                return CompletableFuture.completedFuture(null);
            }
            if (caller.grants().stream().noneMatch(g -> g.role() == Role.ADMIN)) {
                throw deny(caller, action + " on session " + sessionId, "the session belongs to " + whose);
            }
            return warden.session(sessionId).thenApply(view -> {
                Set<String> namespaces = namespaces(view, alsoIn);
                for (String ns : namespaces) {
                    if (!caller.may(ns, Role.ADMIN)) {
                        throw deny(caller, action + " on session " + sessionId, "the session belongs to " + whose
                                + " and touches namespace " + ns + ", where the caller is not admin");
                    }
                }
                audit(caller, action, sessionId, whose);
                return null;
            });
        });
    }

    private static Set<String> namespaces(SessionView view, String alsoIn) {
        Set<String> out = new LinkedHashSet<>();
        if (alsoIn != null) {
            out.add(alsoIn);
        }
        view.holds().forEach(h -> out.add(LockName.parse("name", h.name()).namespace()));
        view.waiting().forEach(w -> out.add(LockName.parse("name", w.name()).namespace()));
        return out;
    }

    /** Whether the caller sees this holder's session id: its own, or it is an admin of the lock's namespace. */
    static boolean seesSessionOf(Caller caller, String principal, String namespace) {
        return caller.open() || caller.is(principal) || caller.may(namespace, Role.ADMIN);
    }

    static Holder shown(Caller caller, Holder h, String namespace) {
        return seesSessionOf(caller, h.principal(), namespace) ? h : h.withoutSessionId();
    }

    /** Logs an admin's action on a session it does not own (always, one line: these are rare and must be on record). */
    void audit(Caller caller, String action, String target, String detail) {
        audit.info("admin action: principal={} action=\"{}\" target={} owner=\"{}\"", caller.label(), action, target, detail);
    }

    /** The 403 for {@code action}, logged (rate-limited) with principal, target and reason. */
    WardenException deny(Caller caller, String action, String reason) {
        denials.warn("permission denied: principal={} action=\"{}\" reason=\"{}\"", caller.label(), action, reason);
        return WardenException.permissionDenied("principal " + caller.label() + " may not " + action + ": " + reason);
    }
}
