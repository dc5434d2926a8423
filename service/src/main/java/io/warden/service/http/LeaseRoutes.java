package io.warden.service.http;

import io.warden.service.auth.Caller;
import io.warden.service.auth.Role;

import io.javalin.http.Context;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.Holder;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.SessionGrant;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simple lease API of docs/api.md ({@code /lock/acquire|release|renew}), built only from {@link Warden}
 * calls: a lease is a session that holds one EXCLUSIVE lock {@code leaseNamespace/resource}, and its
 * {@code lease_id} is that session's id.
 *
 * <ul>
 *   <li>acquire: a try-lock of a lock that has a holder is answered 409 from a read alone; otherwise open a
 *       session with the lease's TTL, acquire with CANCEL on timeout; if not granted, close the session again and
 *       answer 409 naming the holder's client id.</li>
 *   <li>release: close the session if it holds {@code resource}; an unknown lease or another resource is
 *       {@code released:false} and changes nothing.</li>
 *   <li>renew: a keepalive that also sets the TTL; 404 SESSION_NOT_FOUND once the lease is gone.</li>
 * </ul>
 */
final class LeaseRoutes {
    private static final Logger log = LoggerFactory.getLogger(LeaseRoutes.class);

    private final Warden warden;
    private final Requests requests;
    private final Exchange exchange;

    private final Access access;

    LeaseRoutes(Warden warden, Requests requests, Exchange exchange, Access access) {
        this.warden = warden;
        this.requests = requests;
        this.exchange = exchange;
        this.access = access;
    }

    void acquire(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.LeaseAcquire r = requests.leaseAcquire(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        access.need(caller, r.name().namespace(), Role.LOCK, "take a lease on " + r.name());
        exchange.reply(ctx, () -> heldNow(r).thenCompose(held -> held != null
                ? CompletableFuture.<Replies.LeaseGranted>failedFuture(held)
                : warden.openSession(caller.name(), ctx.ip(), r.clientId(), r.ttlMs(), 0).thenCompose(grant -> acquireOrClose(grant, r))),
                reply -> reply);
    }

    /**
     * For a try-lock ({@code wait_ms} 0): the 409 when the lock has a holder or a request queued now, found with a
     * linearizable read that writes nothing ({@link Warden#tryRefusal}), so that the usual answer to a held resource
     * opens no session (otherwise every such 409 would open and close one: ZooKeeper writes for a rejected request).
     * Null when the lock may be granted or the call may wait: then a session is opened as usual, and a holder that
     * comes between the read and the acquire still gets the 409 of {@link #acquireOrClose} (a race that costs a
     * session's open and close, nothing else).
     */
    private CompletableFuture<ProblemException> heldNow(Requests.LeaseAcquire r) {
        if (r.waitMs() > 0) {
            return CompletableFuture.completedFuture(null);
        }
        return warden.tryRefusal(r.name(), Mode.EXCLUSIVE)
                .thenApply(refusal -> refusal.map(result -> conflict(r, result)).orElse(null));
    }

    void release(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.LeaseRelease r = requests.leaseRelease(exchange.body(ctx));
        String name = r.name().toString();
        Caller caller = Access.caller(ctx);
        exchange.reply(ctx, () -> access.session(caller, r.leaseId(), r.name().namespace(), "release lease " + name)
                .thenCompose(v -> warden.session(r.leaseId()))
                .thenCompose(view -> view.holds().stream().anyMatch(h -> h.name().equals(name))
                        ? warden.closeSession(r.leaseId()).thenApply(closed -> true)
                        : CompletableFuture.completedFuture(false))
                .exceptionally(failure -> {
                    if (isSessionNotFound(failure)) {
                        return false; // an unknown or expired lease: nothing to release
                    }
                    throw failure instanceof CompletionException c ? c : new CompletionException(failure);
                }), Replies.Released::new);
    }

    void renew(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Requests.LeaseRenew r = requests.leaseRenew(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        exchange.reply(ctx, () -> access.session(caller, r.leaseId(), null, "renew lease")
                .thenCompose(v -> warden.keepalive(r.leaseId(), r.ttlMs())), Replies.LeaseTtl::new);
    }

    /** Acquires the lease's lock in the fresh session; when that does not grant, closes the session again. */
    private CompletableFuture<Replies.LeaseGranted> acquireOrClose(SessionGrant grant, Requests.LeaseAcquire r) {
        CompletableFuture<AcquireResult> acquired;
        try {
            acquired = warden.acquire(new AcquireRequest(grant.sessionId(), r.name(), Mode.EXCLUSIVE, r.waitMs(),
                    "lease-" + UUID.randomUUID(), OnTimeout.CANCEL, false));
        } catch (RuntimeException e) {
            acquired = CompletableFuture.failedFuture(e);
        }
        return acquired.handle((result, failure) -> {
            if (failure == null && result.status() == AcquireResult.Status.GRANTED) {
                return CompletableFuture.completedFuture(new Replies.LeaseGranted(grant.sessionId(), result.token(),
                        grant.ttlMs(), Replies.rev(result.revision())));
            }
            Throwable reason = failure != null ? Problems.unwrap(failure) : conflict(r, result);
            return closeKeepingReason(grant.sessionId(), reason).<Replies.LeaseGranted>thenApply(v -> {
                throw reason instanceof CompletionException c ? c : new CompletionException(reason);
            });
        }).thenCompose(f -> f);
    }

    /** Closes a session that was opened for a lease it did not get; a failure to close never hides {@code reason}. */
    private CompletableFuture<Void> closeKeepingReason(String sessionId, Throwable reason) {
        CompletableFuture<?> closed;
        try {
            closed = warden.closeSession(sessionId);
        } catch (RuntimeException e) {
            closed = CompletableFuture.failedFuture(e);
        }
        return closed.handle((ok, failure) -> {
            if (failure != null) {
                log.debug("closing lease session {} after a failed acquire failed too", sessionId, failure);
                reason.addSuppressed(Problems.unwrap(failure));
            }
            return null;
        });
    }

    private static ProblemException conflict(Requests.LeaseAcquire r, AcquireResult result) {
        return conflict(r, result.holders());
    }

    private static ProblemException conflict(Requests.LeaseAcquire r, java.util.List<Holder> holders) {
        Holder holder = holders.stream().filter(h -> h.mode() == Mode.EXCLUSIVE).findFirst()
                .orElse(holders.isEmpty() ? null : holders.get(0));
        String clientId = holder == null ? null : holder.clientId();
        return new ProblemException(409, WardenException.ErrorCode.CONFLICT.name(),
                "resource '" + r.resource() + "' is held" + (clientId == null ? "" : " by client '" + clientId + "'"),
                Map.of("holder", new Replies.LeaseHolder(clientId)));
    }

    private static boolean isSessionNotFound(Throwable failure) {
        return Problems.unwrap(failure) instanceof WardenException e
                && e.code() == WardenException.ErrorCode.SESSION_NOT_FOUND;
    }
}
