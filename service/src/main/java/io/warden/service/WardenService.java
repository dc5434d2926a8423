package io.warden.service;

import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.CheckResult;
import io.warden.service.api.CloseResult;
import io.warden.service.api.LockName;
import io.warden.service.api.LockPage;
import io.warden.service.api.LockView;
import io.warden.service.api.NamespaceStats;
import io.warden.service.api.SessionGrant;
import io.warden.service.api.SessionView;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.lock.LockEngine;
import io.warden.service.lock.LockLister;
import io.warden.service.session.SessionManager;
import io.warden.service.zk.Zk;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * {@link Warden} on ZooKeeper: sessions from {@link SessionManager}, locks from {@link LockEngine}.
 *
 * <p>Every call passes the cell's guard twice ({@link io.warden.service.cell.CellGuard#whenServing}): before it
 * starts, and before its answer goes out. A cell that lost committed state is refused (503, naming the cause) for
 * everything — grants, releases, reads, keepalives — so a refusing gateway neither reports on the cell nor changes it;
 * an answer made while the guard found the cell rolled back is not sent. While the guard checks the cell after a
 * reconnection, calls wait for it.
 */
final class WardenService implements Warden {
    private final LockEngine engine;
    private final SessionManager sessions;
    private final LockLister lister;
    private final BooleanSupplier ready;
    private final Supplier<CompletableFuture<Void>> cell;
    private final Supplier<String> notReady;
    /** Set once the gateway has built its revocations (they release through this service). */
    private final java.util.concurrent.atomic.AtomicReference<io.warden.service.lock.Revocations> revocations =
            new java.util.concurrent.atomic.AtomicReference<>();

    WardenService(LockEngine engine, SessionManager sessions, LockLister lister, BooleanSupplier ready,
                  Supplier<CompletableFuture<Void>> cell, Supplier<String> notReady) {
        this.engine = engine;
        this.sessions = sessions;
        this.lister = lister;
        this.ready = ready;
        this.cell = cell;
        this.notReady = notReady;
    }

    /** The revocations {@link #revoke} hands requests to; set once, before the gateway serves. */
    void useRevocations(io.warden.service.lock.Revocations r) {
        revocations.set(r);
    }

    @Override
    public CompletableFuture<SessionGrant> openSession(String clientId, long ttlMs, long lockDelayMs) {
        return guard(() -> sessions.open(clientId, ttlMs, lockDelayMs));
    }

    @Override
    public CompletableFuture<SessionGrant> openSession(String principal, String address, String clientId, long ttlMs,
                                                       long lockDelayMs) {
        return guard(() -> sessions.open(principal, address, clientId, ttlMs, lockDelayMs));
    }

    @Override
    public CompletableFuture<java.util.Optional<String>> sessionPrincipal(String sessionId) {
        return guard(() -> sessions.principalOf(sessionId));
    }

    @Override
    public CompletableFuture<SessionView> session(String sessionId) {
        return guard(() -> sessions.view(sessionId));
    }

    @Override
    public CompletableFuture<Long> keepalive(String sessionId, Long newTtlMs) {
        return guard(() -> sessions.keepalive(sessionId, newTtlMs));
    }

    @Override
    public CompletableFuture<CloseResult> closeSession(String sessionId) {
        return guard(() -> sessions.close(sessionId));
    }

    @Override
    public CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        return guard(() -> {
            SessionManager.validateSessionId(request.sessionId());
            return engine.acquire(request);
        });
    }

    @Override
    public CompletableFuture<io.warden.service.api.MultiAcquireResult> acquireAll(
            io.warden.service.api.MultiAcquireRequest request) {
        return guard(() -> {
            SessionManager.validateSessionId(request.sessionId());
            return engine.acquireAll(request);
        });
    }

    @Override
    public CompletableFuture<Boolean> releaseRequest(String sessionId, String requestId) {
        return guard(() -> {
            SessionManager.validateSessionId(sessionId);
            return engine.releaseRequest(sessionId, requestId);
        });
    }

    @Override
    public CompletableFuture<Boolean> release(String sessionId, LockName name, long token) {
        return guard(() -> {
            SessionManager.validateSessionId(sessionId);
            if (token <= 0) {
                throw WardenException.invalid("token", "must be a positive fencing token, got " + token);
            }
            return engine.release(sessionId, name, token);
        });
    }

    @Override
    public CompletableFuture<io.warden.service.api.RevokeResult> revoke(LockName name, long token, long graceMs, String reason,
                                                                       String by) {
        return guard(() -> {
            if (token <= 0) {
                throw WardenException.invalid("token", "must be a positive fencing token, got " + token);
            }
            if (graceMs < 0 || graceMs > io.warden.service.api.RevokeResult.MAX_GRACE_MS) {
                throw WardenException.invalid("grace_ms", "must be between 0 and "
                        + io.warden.service.api.RevokeResult.MAX_GRACE_MS + ", got " + graceMs);
            }
            return revocations.get().revoke(name, token, graceMs, reason, by);
        });
    }

    @Override
    public CompletableFuture<Boolean> cancel(String sessionId, LockName name, String requestId) {
        return guard(() -> {
            SessionManager.validateSessionId(sessionId);
            return engine.cancel(sessionId, name, requestId);
        });
    }

    @Override
    public CompletableFuture<LockView> lock(LockName name) {
        return guard(() -> engine.reader().lock(name));
    }

    @Override
    public CompletableFuture<java.util.Optional<AcquireResult>> tryRefusal(LockName name, io.warden.service.api.Mode mode) {
        return guard(() -> engine.tryRefusal(name, mode));
    }

    @Override
    public CompletableFuture<LockPage> locks(String namespace, String prefix, int limit, String after) {
        return guard(() -> lister.locks(namespace, prefix, limit, after));
    }

    @Override
    public CompletableFuture<CheckResult> check(LockName name, long token) {
        return guard(() -> engine.reader().check(name, token));
    }

    @Override
    public CompletableFuture<List<NamespaceStats>> namespaces() {
        return guard(lister::namespaces);
    }

    @Override
    public boolean ready() {
        return ready.getAsBoolean();
    }

    @Override
    public String notReadyDetail() {
        return notReady.get();
    }

    /**
     * Runs the call once the cell may be served, and answers only if it still may. Every failure leaves as a
     * WardenException (UNAVAILABLE for ZooKeeper trouble), never as a raw ZooKeeper error.
     */
    private <T> CompletableFuture<T> guard(Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> f;
        try {
            f = cell.get().thenCompose(v -> call.get()).thenCompose(r -> cell.get().thenApply(v -> r));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return f.handle((v, err) -> {
            if (err != null) {
                throw Zk.translate(err);
            }
            return v;
        });
    }
}
