package io.warden.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One acquire of a {@link MultiLock}, from the first call to its outcome ({@link RetriedAcquire}): one request with
 * {@code names}, ended as a whole by its request_id.
 */
final class MultiAcquireCall extends RetriedAcquire<Wire.AcquiredMany, MultiHold> {
    private final boolean failOnDeadlock;
    private final List<String> names;
    private final LockMode mode;

    /** {@code failOnDeadlock}: the request says {@code on_deadlock: FAIL} (it may be removed to break a deadlock). */
    MultiAcquireCall(LockCalls calls, List<String> names, LockMode mode, Duration wait, long maxWaitMs,
                     boolean failOnDeadlock) {
        super(calls, wait, maxWaitMs);
        this.failOnDeadlock = failOnDeadlock;
        this.names = List.copyOf(names);
        this.mode = mode;
    }

    @Override
    MultiAcquireCall start() {
        super.start();
        return this;
    }

    @Override
    String what() {
        return "locks " + names;
    }

    @Override
    CompletableFuture<HttpGateway.Reply<Wire.AcquiredMany>> send(long retryDeadline) {
        return calls.acquireMany(names, mode, requestId, deadlineNanos, maxWaitMs, retryDeadline, failOnDeadlock);
    }

    @Override
    String status(Wire.AcquiredMany answer) {
        return answer.status();
    }

    @Override
    void granted(Wire.AcquiredMany a) {
        if (a.tokens() == null || !a.tokens().keySet().containsAll(names)) {
            refuse("GRANTED without a token for every name: " + a.tokens());
            return;
        }
        // The revision is a zxid; without one (an older gateway) the smallest token stands in for it, as for one name.
        long grantRevision = a.revision() != null && a.revision() > 0 ? a.revision()
                : a.tokens().values().stream().mapToLong(Long::longValue).min().orElseThrow();
        HttpMultiHold hold = new HttpMultiHold(calls, requestId, mode, a.tokens(), grantRevision, a.cell()).track();
        deliver(hold, hold::untrack);
    }

    @Override
    CompletableFuture<?> end() {
        return calls.releaseRequest(requestId);
    }

    @Override
    void endInBackground() {
        calls.releaseRequestInBackground(requestId);
    }

    @Override
    void release(MultiHold hold) {
        hold.release();
    }

    @Override
    AcquireTimeoutException timeout() {
        return new AcquireTimeoutException(String.join(",", names), wait);
    }
}
