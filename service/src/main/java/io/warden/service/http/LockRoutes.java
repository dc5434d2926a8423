package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.LockName;
import io.warden.service.api.LockPage;
import io.warden.service.api.Warden;
import io.warden.service.auth.Caller;
import io.warden.service.auth.Role;

/**
 * The {@code /v1} calls of docs/api.md: sessions, acquire/release, and the linearizable reads. Each handler
 * validates everything first ({@link Requests}), checks what the caller may do ({@link Access}: a role in the name's
 * namespace, and for a session call that the session is the caller's or the caller an admin of its namespaces), then
 * makes exactly one engine call and hands its future to {@link Exchange#reply}; a request that fails validation or
 * authorization never reaches the engine. Replies show other principals' holders and waiters without their session
 * ids (docs/api.md, authorization).
 */
final class LockRoutes {
    static final String LOCKS_PREFIX = "/v1/locks/";

    private final Warden warden;
    private final Requests requests;
    private final Exchange exchange;
    private final Access access;

    LockRoutes(Warden warden, Requests requests, Exchange exchange, Access access) {
        this.warden = warden;
        this.requests = requests;
        this.exchange = exchange;
        this.access = access;
    }

    void openSession(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.OpenSession r = requests.openSession(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        access.needSomewhere(caller, Role.LOCK, "open a session");
        exchange.reply(ctx, 201, () -> warden.openSession(caller.name(), ctx.ip(), r.clientId(), r.ttlMs(), r.lockDelayMs()),
                Replies.SessionCreated::of);
    }

    void session(Context ctx) {
        String sessionId = Fields.sessionId("session_id", ctx.pathParam("session_id"));
        requests.noQuery(exchange.query(ctx));
        Caller caller = Access.caller(ctx);
        exchange.reply(ctx, () -> access.session(caller, sessionId, null, "read session")
                .thenCompose(v -> warden.session(sessionId)), Replies.Session::of);
    }

    void keepalive(Context ctx) {
        String sessionId = Fields.sessionId("session_id", ctx.pathParam("session_id"));
        requests.noQuery(exchange.query(ctx));
        Requests.Keepalive r = requests.keepalive(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        exchange.reply(ctx, () -> access.session(caller, sessionId, null, "keep alive session")
                .thenCompose(v -> warden.keepalive(sessionId, r.ttlMs())), Replies.Keepalive::new);
    }

    void closeSession(Context ctx) {
        String sessionId = Fields.sessionId("session_id", ctx.pathParam("session_id"));
        requests.noQuery(exchange.query(ctx));
        Caller caller = Access.caller(ctx);
        exchange.reply(ctx, () -> access.session(caller, sessionId, null, "close session")
                .thenCompose(v -> warden.closeSession(sessionId)), Replies.Closed::of);
    }

    void acquire(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        byte[] body = exchange.body(ctx);
        if (requests.isMultiAcquire(body)) {
            multiAcquire(ctx, requests.multiAcquire(body));
            return;
        }
        AcquireRequest r = requests.acquire(body);
        Caller caller = Access.caller(ctx);
        String ns = r.name().namespace();
        access.need(caller, ns, Role.LOCK, "acquire " + r.name());
        exchange.reply(ctx, () -> access.session(caller, r.sessionId(), ns, "acquire " + r.name())
                        .thenCompose(v -> warden.acquire(r)),
                result -> Replies.Acquired.of(result, r.requestId(), h -> Access.shown(caller, h, ns)));
    }

    /**
     * A multi-lock acquire: the caller needs the lock role in every name's namespace (a 403 names the first it lacks),
     * and the session must be its own (or it an admin of every namespace the session and the names touch).
     */
    private void multiAcquire(Context ctx, io.warden.service.api.MultiAcquireRequest r) {
        Caller caller = Access.caller(ctx);
        java.util.Set<String> namespaces = new java.util.LinkedHashSet<>();
        r.names().forEach(n -> namespaces.add(n.namespace()));
        for (String ns : namespaces) {
            access.need(caller, ns, Role.LOCK, "acquire " + r.names());
        }
        exchange.reply(ctx, () -> {
            java.util.concurrent.CompletableFuture<Void> allowed = java.util.concurrent.CompletableFuture.completedFuture(null);
            for (String ns : namespaces) {
                allowed = allowed.thenCompose(v -> access.session(caller, r.sessionId(), ns, "acquire " + r.names()));
            }
            return allowed.thenCompose(v -> warden.acquireAll(r));
        }, result -> Replies.MultiAcquired.of(result, r.requestId(), (h, ns) -> Access.shown(caller, h, ns)));
    }

    void release(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.Release r = requests.release(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        if (r.name() == null) {
            exchange.reply(ctx, () -> access.session(caller, r.sessionId(), null, "release request " + r.requestId())
                    .thenCompose(v -> warden.releaseRequest(r.sessionId(), r.requestId())), Replies.Released::new);
            return;
        }
        String action = (r.token() != null ? "release " : "cancel a request on ") + r.name();
        if (r.token() != null) {
            exchange.reply(ctx, () -> access.session(caller, r.sessionId(), r.name().namespace(), action)
                    .thenCompose(v -> warden.release(r.sessionId(), r.name(), r.token())), Replies.Released::new);
        } else {
            exchange.reply(ctx, () -> access.session(caller, r.sessionId(), r.name().namespace(), action)
                    .thenCompose(v -> warden.cancel(r.sessionId(), r.name(), r.requestId())), Replies.Released::new);
        }
    }

    /** An admin of the name's namespace asks a holder to let go; validated whole before anything is read. */
    void revoke(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.Revoke r = requests.revoke(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        access.need(caller, r.name().namespace(), Role.ADMIN, "revoke a hold on " + r.name());
        exchange.reply(ctx, () -> warden.revoke(r.name(), r.token(), r.graceMs(), r.reason(), caller.label()),
                Replies.Revoked::of);
    }

    void lock(Context ctx) {
        LockName name = Fields.lockName("name", exchange.pathRest(ctx, LOCKS_PREFIX, "name"));
        requests.noQuery(exchange.query(ctx));
        Caller caller = Access.caller(ctx);
        access.need(caller, name.namespace(), Role.READ, "read lock " + name);
        exchange.reply(ctx, () -> warden.lock(name), view -> Replies.Lock.of(view, caller, name.namespace()));
    }

    void locks(Context ctx) {
        Requests.ListLocks r = requests.listLocks(exchange.query(ctx));
        Caller caller = Access.caller(ctx);
        if (r.namespace() != null) {
            access.need(caller, r.namespace(), Role.READ, "list locks");
        } else if (!caller.mayEverywhere(Role.READ)) {
            access.needSomewhere(caller, Role.READ, "list locks");
        }
        exchange.reply(ctx, () -> warden.locks(r.namespace(), r.prefix(), r.limit(), r.after()),
                page -> Replies.Locks.of(readable(caller, page)));
    }

    /** The page without the locks of namespaces the caller may not read (a page may then hold fewer than asked). */
    private static LockPage readable(Caller caller, LockPage page) {
        if (caller.mayEverywhere(Role.READ)) {
            return page;
        }
        return new LockPage(page.locks().stream()
                .filter(s -> caller.may(LockName.parse("name", s.name()).namespace(), Role.READ)).toList(),
                page.nextAfter(), page.revision());
    }

    void check(Context ctx) {
        Requests.Check r = requests.check(exchange.query(ctx));
        Caller caller = Access.caller(ctx);
        access.need(caller, r.name().namespace(), Role.READ, "check a token of " + r.name());
        exchange.reply(ctx, () -> warden.check(r.name(), r.token()), Replies.Check::of);
    }

    void namespaces(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Caller caller = Access.caller(ctx);
        access.needSomewhere(caller, Role.READ, "list namespaces");
        exchange.reply(ctx, warden::namespaces, stats -> Replies.Namespaces.of(stats.stream()
                .filter(s -> caller.may(s.namespace(), Role.READ)).toList()));
    }
}
