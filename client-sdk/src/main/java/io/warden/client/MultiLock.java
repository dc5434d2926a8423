package io.warden.client;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Several locks taken together ({@link WardenClient#multiLock}): one request whose queue entries on every name are made
 * in one ZooKeeper transaction, so two multi-locks are in the same order on every name they share and can never
 * deadlock each other, whatever order their names were given in. It is granted when it holds every name; each name's
 * token keeps that name's fencing guarantee (see {@link Hold}).
 * <pre>{@code
 * MultiLock both = warden.multiLock("bank/account-1", "bank/account-2");
 * try (MultiHold hold = both.acquire(Duration.ofSeconds(5))) {
 *     debit(from, hold.token("bank/account-1"));
 *     credit(to, hold.token("bank/account-2"));
 * }
 * }</pre>
 * While it waits, the request already holds the names that are free and blocks them for others (it is in their queues
 * in order). A plain Curator client on one of the names is excluded as by any other hold.
 *
 * <p>Thread-safety: immutable; each acquire is its own request.
 */
public interface MultiLock {
    /** The names, in the order given. */
    List<String> names();

    /** EXCLUSIVE or SHARED, for every name. */
    LockMode mode();

    /**
     * Waits up to {@code wait} for every name. Throws {@link AcquireTimeoutException} when not granted in time (the
     * request is then removed from every queue), {@link SessionLostException} when the session ends,
     * {@link DeadlockException} when it said FAIL ({@link #failingOnDeadlock}) and was removed to break a deadlock, and
     * {@link WardenClientException} for anything else. Interrupting the waiting thread ends the request on every name
     * (a grant that won the race is released), sets the interrupt flag again and throws {@link WardenClientException}.
     */
    MultiHold acquire(Duration wait);

    /**
     * Asks for every name without blocking the caller. The future completes with the hold, or exceptionally with the
     * exceptions of {@link #acquire}. {@code cancel} on it (before it completes) ends the request on every name; if the
     * grant raced the cancel, the grant is released. A waiting call holds no thread.
     */
    CompletableFuture<MultiHold> acquireAsync(Duration wait);

    /**
     * The same names, whose acquires may be failed to break a deadlock ({@code on_deadlock: FAIL}), as
     * {@link FencedLock#failingOnDeadlock}: when the request is the youngest FAIL request of a cycle of the gateways'
     * wait-for graph, every one of its entries is removed (the names it already held too: it was not granted) and the
     * acquire throws {@link DeadlockException} with the cycle; the session's other holds stay.
     */
    MultiLock failingOnDeadlock();

    /** As {@link #acquire}, empty when not granted in time. */
    default Optional<MultiHold> tryAcquire(Duration wait) {
        try {
            return Optional.of(acquire(wait));
        } catch (AcquireTimeoutException notGranted) {
            return Optional.empty();
        }
    }
}
