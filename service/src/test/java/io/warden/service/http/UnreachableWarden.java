package io.warden.service.http;

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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Not an engine: a {@link Warden} that fails the test if anything reaches it. The validation tests run the
 * real {@link HttpApi} in front of it to prove that bad input is rejected before it could touch ZooKeeper.
 * Only {@link #ready()} answers, with a fixed value, so the health routes can be exercised.
 */
final class UnreachableWarden implements Warden {
    final AtomicInteger calls = new AtomicInteger();
    private final boolean ready;

    UnreachableWarden(boolean ready) {
        this.ready = ready;
    }

    private <T> T reached(String what) {
        calls.incrementAndGet();
        throw new AssertionError("the engine was reached (" + what + ") by a request that should have been rejected");
    }

    @Override
    public CompletableFuture<SessionGrant> openSession(String clientId, long ttlMs, long lockDelayMs) {
        return reached("openSession " + clientId);
    }

    @Override
    public CompletableFuture<SessionView> session(String sessionId) {
        return reached("session " + sessionId);
    }

    @Override
    public CompletableFuture<Long> keepalive(String sessionId, Long newTtlMs) {
        return reached("keepalive " + sessionId);
    }

    @Override
    public CompletableFuture<CloseResult> closeSession(String sessionId) {
        return reached("closeSession " + sessionId);
    }

    @Override
    public CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        return reached("acquire " + request);
    }

    @Override
    public CompletableFuture<Boolean> release(String sessionId, LockName name, long token) {
        return reached("release " + name);
    }

    @Override
    public CompletableFuture<Boolean> cancel(String sessionId, LockName name, String requestId) {
        return reached("cancel " + name);
    }

    @Override
    public CompletableFuture<LockView> lock(LockName name) {
        return reached("lock " + name);
    }

    @Override
    public CompletableFuture<java.util.Optional<io.warden.service.api.AcquireResult>> tryRefusal(LockName name,
                                                                                                  io.warden.service.api.Mode mode) {
        return reached("try " + name);
    }

    @Override
    public CompletableFuture<LockPage> locks(String namespace, String prefix, int limit, String after) {
        return reached("locks " + namespace);
    }

    @Override
    public CompletableFuture<CheckResult> check(LockName name, long token) {
        return reached("check " + name);
    }

    @Override
    public CompletableFuture<List<NamespaceStats>> namespaces() {
        return reached("namespaces");
    }

    @Override
    public boolean ready() {
        return ready;
    }
}
