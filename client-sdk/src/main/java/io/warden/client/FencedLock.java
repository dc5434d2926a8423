package io.warden.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A named lock of a Warden cell: through a {@link WardenClient} (its session, over the gateways' HTTP API) or
 * straight in ZooKeeper through {@link io.warden.client.direct.DirectLocks}; the two exclude each other on the same
 * name. It is a handle, not state: it holds nothing itself, every acquire gives a new {@link Hold}, and two
 * {@code FencedLock}s of the same name and client are the same lock (not reentrant: a second acquire through the same
 * client queues behind the first).
 * <pre>{@code
 * FencedLock lock = warden.lock("payments/invoice-42");
 * try (Hold hold = lock.acquire(Duration.ofSeconds(5))) {
 *     store.write(record, hold.token());
 * }
 * }</pre>
 *
 * <h2>The fencing token</h2>
 * Every grant comes with a token ({@link Hold#token()}) that grows with every grant of the name: a later grant always
 * has a larger token, through any gateway or in direct mode, across failovers. A token is not proof that the lock is
 * still held: a GC pause, a stopped VM or an expired session can pass between any check and the write, and the lock
 * may have gone to another holder meanwhile. Only the resource can tell, by refusing a token lower than the last one
 * it accepted (see {@link Hold} and {@link io.warden.client.fencing.FencedWrite}).
 *
 * <h2>When a hold stops being valid</h2>
 * A {@link Hold}'s {@link Hold#isValid()} turns false, and its {@link Hold#lost()} completes, as its javadoc says in
 * full; in short:
 * <ul>
 *   <li>over HTTP, {@code isValid()} is false from the session's local deadline on (send time of the last
 *   acknowledged keepalive plus the TTL it reported, minus a margin), and {@code lost()} completes when a gateway says
 *   the session is gone or when the session's watch of its own events sees the grant end elsewhere (an admin's
 *   force-release, a release by token from another process): a few milliseconds after it, or when the watch resumes
 *   after an outage;</li>
 *   <li>in direct mode, {@code isValid()} is false while Curator's connection is SUSPENDED or LOST and from the
 *   ZooKeeper session's local deadline on (send time of the last answered request plus the session timeout, minus a
 *   margin), and {@code lost()} completes when Curator reports LOST or the node is deleted by someone else.</li>
 * </ul>
 *
 * <p>Over HTTP, every acquire carries one generated {@code request_id} for all its retries and failovers, so a
 * retried call never queues twice, and every attempt asks for what remains of the caller's wait; waits longer than
 * the service's limit per call (5 minutes) are repeated with the same {@code request_id}, keeping the place in the
 * queue.
 *
 * <p>Thread-safety: safe for use by any number of threads; each acquire is independent of the others.
 */
public interface FencedLock {
    /** The lock name, {@code namespace/path}. */
    String name();

    /** EXCLUSIVE for {@link WardenClient#lock} and a write lock, SHARED for a read lock. */
    LockMode mode();

    /**
     * Waits up to {@code wait} for the lock. Interrupting the waiting thread cancels the request: it is removed from
     * the lock's queue, the interrupt flag is set again, and a {@link WardenClientException} is thrown. Whatever the
     * race with the grant, an acquire that returns no hold leaves no hold and no queued request behind: over HTTP a
     * grant that won the race is released; in direct mode an interrupt that comes after Curator granted is left to the
     * caller (the hold is returned, with the interrupt flag set).
     *
     * @param wait how long to wait; zero tries once
     * @throws AcquireTimeoutException  when the lock was not granted in time (nothing is left queued)
     * @throws SessionLostException     when the client's session is gone (HTTP only: direct locks have no session)
     * @throws DeadlockException        when the request said FAIL ({@link #failingOnDeadlock}) and was removed to break a
     *                                  deadlock
     * @throws WardenClientException    when no gateway could be reached, the gateway refused the request (see
     *                                  {@link WardenClientException#code()}), ZooKeeper failed (direct mode, no code),
     *                                  or the wait was interrupted
     * @throws IllegalStateException    when the client ({@link WardenClient} or {@code DirectLocks}) was closed
     * @throws IllegalArgumentException when {@code wait} is negative
     */
    Hold acquire(Duration wait);

    /** Takes the lock if it is free now; empty when it is not. Same exceptions as {@link #acquire} except the timeout. */
    default Optional<Hold> tryAcquire() {
        return tryAcquire(Duration.ZERO);
    }

    /** Waits up to {@code wait}; empty when the lock was not granted in time. Same exceptions as {@link #acquire} except the timeout. */
    default Optional<Hold> tryAcquire(Duration wait) {
        try {
            return Optional.of(acquire(wait));
        } catch (AcquireTimeoutException notGranted) {
            return Optional.empty();
        }
    }

    /**
     * Asks for the lock without blocking the caller. The future completes with the hold, or exceptionally with the
     * exceptions of {@link #acquire}. {@code cancel} on it (before it completes) removes the request from the lock's
     * queue; if the grant raced the cancel, the grant is released. Over HTTP a waiting call holds no thread; in direct
     * mode it holds one thread of the {@code DirectLocks} (Curator's lock blocks its thread) until it ends.
     */
    CompletableFuture<Hold> acquireAsync(Duration wait);

    /**
     * The same lock, whose acquires may be failed to break a deadlock ({@code on_deadlock: FAIL}): when the request is
     * in a cycle of the gateways' wait-for graph (sessions each waiting for a lock another holds) and is the youngest
     * such request in it, it is removed from its queue and the acquire throws {@link DeadlockException} with the cycle;
     * the session's holds stay. Without it (WAIT) a deadlock is only reported ({@code GET /v1/deadlocks}). Over HTTP
     * only: direct mode has no wait-for graph.
     *
     * @throws UnsupportedOperationException in direct mode
     */
    default FencedLock failingOnDeadlock() {
        throw new UnsupportedOperationException("deadlock detection needs the gateways (HTTP mode); " + name()
                + " is a direct lock");
    }
}
