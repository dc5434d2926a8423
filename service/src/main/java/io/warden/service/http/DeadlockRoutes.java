package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.api.Deadlock;
import io.warden.service.auth.Role;
import io.warden.service.watch.WatchHub;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * {@code GET /v1/deadlocks}: the current cycles of the wait-for graph, as this gateway's watch mirror has them (no
 * ZooKeeper request). A deadlock spans namespaces, so the caller needs read on every namespace.
 */
final class DeadlockRoutes {
    /** The reply: the cycles, the revision they reflect, and whether the mirror is exact now. */
    record Reply(List<Deadlock> deadlocks, long revision, boolean stale) {
    }

    private final Requests requests;
    private final Exchange exchange;
    private final Access access;
    /** The gateway's report; null when it keeps none. */
    private final Supplier<CompletableFuture<WatchHub.DeadlockReport>> source;

    DeadlockRoutes(Requests requests, Exchange exchange, Access access, Supplier<CompletableFuture<WatchHub.DeadlockReport>> source) {
        this.requests = requests;
        this.exchange = exchange;
        this.access = access;
        this.source = source;
    }

    void deadlocks(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        access.needEverywhere(Access.caller(ctx), Role.READ, "list deadlocks");
        exchange.reply(ctx, () -> {
            CompletableFuture<WatchHub.DeadlockReport> r = source.get();
            if (r == null) {
                return CompletableFuture.failedFuture(io.warden.service.api.WardenException.unavailable(
                        "this gateway keeps no wait-for graph (it has no watch mirror)", null));
            }
            return r;
        }, r -> new Reply(r.deadlocks(), r.revision(), r.stale()));
    }
}
