package io.warden.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * A {@link FencedLock} over the HTTP API: a name and a mode in front of {@link AcquireCall}, which does the work.
 *
 * <p>Concurrency: immutable; each acquire is its own {@link AcquireCall}.
 */
final class HttpFencedLock implements FencedLock {
    private final WardenClient client;
    private final String name;
    private final LockMode mode;
    /** A semaphore's permits; 0 for a lock. */
    private final int permits;
    /** Whether its acquires say {@code on_deadlock: FAIL}. */
    private final boolean failOnDeadlock;

    HttpFencedLock(WardenClient client, String name, LockMode mode) {
        this(client, name, mode, 0);
    }

    HttpFencedLock(WardenClient client, String name, LockMode mode, int permits) {
        this(client, name, mode, permits, false);
    }

    private HttpFencedLock(WardenClient client, String name, LockMode mode, int permits, boolean failOnDeadlock) {
        this.failOnDeadlock = failOnDeadlock;
        this.client = client;
        this.name = name;
        this.mode = mode;
        this.permits = permits;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LockMode mode() {
        return mode;
    }

    @Override
    public FencedLock failingOnDeadlock() {
        return new HttpFencedLock(client, name, mode, permits, true);
    }

    @Override
    public Hold acquire(Duration wait) {
        AcquireCall call = begin(wait);
        try {
            return call.result().get();
        } catch (InterruptedException e) {
            call.giveUp();
            Thread.currentThread().interrupt();
            throw new WardenClientException("interrupted while waiting for lock '" + name + "'; its request was cancelled", e);
        } catch (ExecutionException e) {
            throw Failures.rethrow(e.getCause());
        }
    }

    @Override
    public CompletableFuture<Hold> acquireAsync(Duration wait) {
        return begin(wait).result();
    }

    private AcquireCall begin(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative, got " + wait);
        }
        return new AcquireCall(client.calls(), name, mode, permits, wait, client.maxWaitPerCallMs(), failOnDeadlock).start();
    }

    @Override
    public String toString() {
        return "FencedLock[" + name + " " + mode + (permits > 0 ? " of " + permits + " permits" : "")
                + (failOnDeadlock ? ", on_deadlock FAIL" : "") + "]";
    }
}
