package io.warden.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * One acquire of a {@link FencedLock} (one name: a lock, or permits of a semaphore), from the first call to its outcome
 * ({@link RetriedAcquire}); the request is ended by cancelling it on its name.
 */
final class AcquireCall extends RetriedAcquire<Wire.Acquired, Hold> {
    /** The longest wait the service holds one call for (docs/api.md, {@code wait_ms} max). */
    static final long SERVICE_MAX_WAIT_MS = 300_000;

    private final String name;
    private final LockMode mode;
    /** A semaphore's permits; 0 for a lock. */
    private final int permits;
    private final boolean failOnDeadlock;

    AcquireCall(LockCalls calls, String name, LockMode mode, int permits, Duration wait, long maxWaitMs) {
        this(calls, name, mode, permits, wait, maxWaitMs, false);
    }

    /** {@code failOnDeadlock}: the request says {@code on_deadlock: FAIL} (it may be removed to break a deadlock). */
    AcquireCall(LockCalls calls, String name, LockMode mode, int permits, Duration wait, long maxWaitMs,
                boolean failOnDeadlock) {
        super(calls, wait, maxWaitMs);
        this.failOnDeadlock = failOnDeadlock;
        this.name = name;
        this.mode = mode;
        this.permits = permits;
    }

    @Override
    AcquireCall start() {
        super.start();
        return this;
    }

    @Override
    String what() {
        return "lock '" + name + "'";
    }

    @Override
    CompletableFuture<HttpGateway.Reply<Wire.Acquired>> send(long retryDeadline) {
        return calls.acquire(name, mode, permits, requestId, deadlineNanos, maxWaitMs, retryDeadline, failOnDeadlock);
    }

    @Override
    String status(Wire.Acquired answer) {
        return answer.status();
    }

    @Override
    void granted(Wire.Acquired a) {
        if (a.token() == null) {
            refuse("GRANTED without a token");
            return;
        }
        // The revision is a zxid; the token is a zxid plus the cell's token floor, so only without a revision (an older
        // gateway) does the token stand in for it.
        long grantRevision = a.revision() != null && a.revision() > 0 ? a.revision() : a.token();
        HttpHold hold = new HttpHold(name, mode, a.token(), grantRevision, calls, a.cell());
        calls.session().track(hold);
        deliver(hold, () -> calls.session().untrack(hold));
    }

    @Override
    CompletableFuture<?> end() {
        return calls.cancel(name, requestId);
    }

    @Override
    void endInBackground() {
        calls.cancelInBackground(name, requestId);
    }

    @Override
    void release(Hold hold) {
        hold.release();
    }

    @Override
    AcquireTimeoutException timeout() {
        return new AcquireTimeoutException(name, wait);
    }
}
