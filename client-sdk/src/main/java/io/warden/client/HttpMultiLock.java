package io.warden.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * A {@link MultiLock} over the HTTP API: {@code POST /v1/acquire} with {@code names}, repeated with the same request id
 * (QUEUED answers, lost replies, another gateway) until granted or the wait runs out ({@link MultiAcquireCall}); the
 * hold ({@link HttpMultiHold}) is tracked by the session name by name and releases the whole request by its request id.
 *
 * <p>Concurrency: immutable; each acquire is its own {@link MultiAcquireCall}, whose HTTP calls run on the client's I/O
 * threads.
 */
final class HttpMultiLock implements MultiLock {
    private final WardenClient client;
    private final List<String> names;
    private final LockMode mode;
    /** Whether its acquires say {@code on_deadlock: FAIL}. */
    private final boolean failOnDeadlock;

    HttpMultiLock(WardenClient client, List<String> names, LockMode mode) {
        this(client, names, mode, false);
    }

    private HttpMultiLock(WardenClient client, List<String> names, LockMode mode, boolean failOnDeadlock) {
        this.client = client;
        this.names = List.copyOf(names);
        this.mode = mode;
        this.failOnDeadlock = failOnDeadlock;
    }

    @Override
    public MultiLock failingOnDeadlock() {
        return new HttpMultiLock(client, names, mode, true);
    }

    @Override
    public List<String> names() {
        return names;
    }

    @Override
    public LockMode mode() {
        return mode;
    }

    @Override
    public MultiHold acquire(Duration wait) {
        MultiAcquireCall call = begin(wait);
        try {
            return call.result().get();
        } catch (InterruptedException e) {
            call.giveUp();
            Thread.currentThread().interrupt();
            throw new WardenClientException("interrupted while waiting for locks " + names + "; the request was cancelled", e);
        } catch (ExecutionException e) {
            throw Failures.rethrow(e.getCause());
        }
    }

    @Override
    public CompletableFuture<MultiHold> acquireAsync(Duration wait) {
        return begin(wait).result();
    }

    private MultiAcquireCall begin(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative, got " + wait);
        }
        return new MultiAcquireCall(client.calls(), names, mode, wait, client.maxWaitPerCallMs(), failOnDeadlock).start();
    }

    @Override
    public String toString() {
        return "MultiLock" + names + " " + mode + (failOnDeadlock ? ", on_deadlock FAIL" : "");
    }
}
