package io.warden.service.api;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's lock service, as the HTTP layer (and any other front end) sees it. Every method is
 * asynchronous and never blocks the calling thread; failures complete the future exceptionally with a
 * {@link WardenException} (possibly wrapped in a {@link java.util.concurrent.CompletionException}).
 *
 * <p>Thread-safety: all methods may be called from any thread, concurrently.
 */
public interface Warden {
    /** Opens a session; {@code ttlMs} is clamped to the configured range, {@code lockDelayMs} must be 0..60000. */
    CompletableFuture<SessionGrant> openSession(String clientId, long ttlMs, long lockDelayMs);

    /**
     * Opens a session owned by {@code principal} (null in open mode): only it or an admin of the session's namespaces
     * may use it (docs/api.md, authorization). {@code address} is the caller's network address: in open mode the
     * session counts against that address's quota (max-sessions-per-principal). The default ignores both, for front
     * ends without them.
     */
    default CompletableFuture<SessionGrant> openSession(String principal, String address, String clientId, long ttlMs,
                                                        long lockDelayMs) {
        return openSession(clientId, ttlMs, lockDelayMs);
    }

    /**
     * The principal that owns the session, empty for a session opened in open mode; SESSION_NOT_FOUND when there is no
     * such session. The default knows of no owners.
     */
    default CompletableFuture<java.util.Optional<String>> sessionPrincipal(String sessionId) {
        return session(sessionId).thenApply(v -> java.util.Optional.empty());
    }

    CompletableFuture<SessionView> session(String sessionId);

    /**
     * Resets the session's TTL; returns the TTL now remaining in ms. With {@code newTtlMs} non-null the session's
     * TTL is changed first (clamped). Taking over a session tracked by another gateway touches ZooKeeper; a plain
     * keepalive on the tracking gateway does not.
     */
    CompletableFuture<Long> keepalive(String sessionId, Long newTtlMs);

    CompletableFuture<CloseResult> closeSession(String sessionId);

    CompletableFuture<AcquireResult> acquire(AcquireRequest request);

    /**
     * Acquires every one of {@code request.names()} at once (guarantee 11 of docs/guarantees.md): one queue entry per
     * name, all made in one ZooKeeper transaction; GRANTED with a token per name once it holds every name. The default
     * serves none.
     */
    default CompletableFuture<MultiAcquireResult> acquireAll(MultiAcquireRequest request) {
        return CompletableFuture.failedFuture(WardenException.unavailable("this gateway serves no multi-lock requests", null));
    }

    /**
     * Ends the session's request {@code requestId} as a whole: releases what it holds and cancels what it waits for,
     * every name of a multi-lock request in one transaction. False when it had already ended (or never existed: it is
     * then remembered as ended, so its acquire, if still on its way, fails). The default serves none.
     */
    default CompletableFuture<Boolean> releaseRequest(String sessionId, String requestId) {
        return CompletableFuture.failedFuture(WardenException.unavailable("this gateway serves no release by request_id", null));
    }

    /** Releases the hold with this token; false when the token is stale or not this session's. */
    CompletableFuture<Boolean> release(String sessionId, LockName name, long token);

    /** Removes the request {@code requestId} of this session on {@code name}, queued or granted; false when there is none. */
    CompletableFuture<Boolean> cancel(String sessionId, LockName name, String requestId);

    CompletableFuture<LockView> lock(LockName name);

    /**
     * Asks the holder of {@code token} on {@code name} to let go (a REVOKE_REQUESTED event, recorded in ZooKeeper with
     * the hold) and force-releases the hold if it still holds after {@code graceMs}, as a release by its token (no
     * lock-delay). {@code by} is the principal asking, for the audit log. INVALID_ARGUMENT naming {@code token} when the
     * token does not hold the lock; a repeat of a pending request changes nothing. The default serves no revokes.
     */
    default CompletableFuture<RevokeResult> revoke(LockName name, long token, long graceMs, String reason, String by) {
        return CompletableFuture.failedFuture(WardenException.unavailable("this gateway serves no revokes", null));
    }

    /**
     * The TIMED_OUT answer a try-lock of {@code mode} on {@code name} would get now (a conflicting holder, or a request
     * queued ahead), from a linearizable read and without a write; empty when the try may be granted.
     */
    CompletableFuture<java.util.Optional<AcquireResult>> tryRefusal(LockName name, Mode mode);

    CompletableFuture<LockPage> locks(String namespace, String prefix, int limit, String after);

    CompletableFuture<CheckResult> check(LockName name, long token);

    CompletableFuture<List<NamespaceStats>> namespaces();

    /**
     * The cells this gateway serves, the default one first, each with its state and the namespaces routed to it. The
     * default serves none.
     */
    default CompletableFuture<List<CellView>> cells() {
        return CompletableFuture.failedFuture(WardenException.unavailable("this gateway lists no cells", null));
    }

    /**
     * Adds cell {@code cell}, the ensemble {@code zk} under {@code chroot} (null: the gateways' chroot), to every gateway
     * (docs/api.md, "Adding a cell"): this gateway reaches it first, then writes it to the cell directory that every
     * gateway follows. It serves no namespace until one is moved to it. Asking again for the same cell at the same
     * address answers it as it is; another address is a 409. The default adds nothing.
     */
    default CompletableFuture<CellAdded> addCell(String cell, String zk, String chroot, String by) {
        return CompletableFuture.failedFuture(WardenException.unavailable("this gateway adds no cells", null));
    }

    /**
     * Moves {@code namespace} to cell {@code cell} (docs/api.md, "Moving a namespace"): new acquires wait while the
     * namespace's holds in its old cell end by themselves, or at {@code deadlineMs} are ended; tokens keep growing. A
     * move cut short is completed by asking for it again. {@code by} is the principal asking, for the audit log. The
     * default moves nothing.
     */
    default CompletableFuture<MoveResult> moveNamespace(String namespace, String cell, long deadlineMs, String by) {
        return CompletableFuture.failedFuture(WardenException.unavailable("this gateway moves no namespaces", null));
    }

    /**
     * Raises cell {@code cell}'s token floor so that every token it gives from now on is above {@code above} (as
     * {@code token-floor raise --above}: after an ensemble was restored from an older snapshot, docs/operations.md).
     * Completes with the floor raised to, or -1 when the cell's tokens were above already. The default raises nothing.
     */
    default CompletableFuture<Long> raiseTokenFloor(String cell, long above, String by) {
        return CompletableFuture.failedFuture(WardenException.unavailable("this gateway raises no token floors", null));
    }

    /**
     * While ready: what does not serve although the gateway does (a cell other than the default one that lost its
     * ensemble), for {@code /health/ready}; null when everything serves. The default has nothing to say.
     */
    default String degradedDetail() {
        return null;
    }

    /** True while ZooKeeper is connected, this gateway is registered and its cell may be served. */
    boolean ready();

    /**
     * Why this gateway is not ready, when there is more to say than "not connected" (its cell was rolled back, or has
     * lost its token floor node), for
     * {@code /health/ready}; null otherwise.
     */
    default String notReadyDetail() {
        return null;
    }
}
