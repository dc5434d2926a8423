package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;

/**
 * The {@code /v1} calls of contract §3: sessions, acquire/release, and the linearizable reads. Each handler
 * validates everything first ({@link Requests}), then makes exactly one engine call and hands its future to
 * {@link Exchange#reply}; a request that fails validation never reaches the engine.
 */
final class LockRoutes {
    static final String LOCKS_PREFIX = "/v1/locks/";

    private final Warden warden;
    private final Requests requests;
    private final Exchange exchange;

    LockRoutes(Warden warden, Requests requests, Exchange exchange) {
        this.warden = warden;
        this.requests = requests;
        this.exchange = exchange;
    }

    void openSession(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.OpenSession r = requests.openSession(exchange.body(ctx));
        exchange.reply(ctx, 201, () -> warden.openSession(r.clientId(), r.ttlMs(), r.lockDelayMs()),
                Replies.SessionCreated::of);
    }

    void session(Context ctx) {
        String sessionId = Fields.sessionId("session_id", ctx.pathParam("session_id"));
        requests.noQuery(exchange.query(ctx));
        exchange.reply(ctx, () -> warden.session(sessionId), Replies.Session::of);
    }

    void keepalive(Context ctx) {
        String sessionId = Fields.sessionId("session_id", ctx.pathParam("session_id"));
        requests.noQuery(exchange.query(ctx));
        Requests.Keepalive r = requests.keepalive(exchange.body(ctx));
        exchange.reply(ctx, () -> warden.keepalive(sessionId, r.ttlMs()), Replies.Keepalive::new);
    }

    void closeSession(Context ctx) {
        String sessionId = Fields.sessionId("session_id", ctx.pathParam("session_id"));
        requests.noQuery(exchange.query(ctx));
        exchange.reply(ctx, () -> warden.closeSession(sessionId), Replies.Closed::of);
    }

    void acquire(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        AcquireRequest r = requests.acquire(exchange.body(ctx));
        exchange.reply(ctx, () -> warden.acquire(r), result -> Replies.Acquired.of(result, r.requestId()));
    }

    void release(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.Release r = requests.release(exchange.body(ctx));
        if (r.token() != null) {
            exchange.reply(ctx, () -> warden.release(r.sessionId(), r.name(), r.token()), Replies.Released::new);
        } else {
            exchange.reply(ctx, () -> warden.cancel(r.sessionId(), r.name(), r.requestId()), Replies.Released::new);
        }
    }

    void lock(Context ctx) {
        LockName name = Fields.lockName("name", exchange.pathRest(ctx, LOCKS_PREFIX, "name"));
        requests.noQuery(exchange.query(ctx));
        exchange.reply(ctx, () -> warden.lock(name), Replies.Lock::of);
    }

    void locks(Context ctx) {
        Requests.ListLocks r = requests.listLocks(exchange.query(ctx));
        exchange.reply(ctx, () -> warden.locks(r.namespace(), r.prefix(), r.limit(), r.after()), Replies.Locks::of);
    }

    void check(Context ctx) {
        Requests.Check r = requests.check(exchange.query(ctx));
        exchange.reply(ctx, () -> warden.check(r.name(), r.token()), Replies.Check::of);
    }

    void namespaces(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        exchange.reply(ctx, warden::namespaces, Replies.Namespaces::of);
    }
}
