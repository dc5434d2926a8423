package io.warden.client;

import java.util.concurrent.CompletionStage;

/**
 * One grant of a {@link FencedLock}: what {@link FencedLock#acquire} returns. Close it to release the lock:
 * <pre>{@code
 * try (Hold hold = lock.acquire(Duration.ofSeconds(5))) {
 *     store.write(record, hold.token());     // the resource rejects tokens lower than the last it accepted
 * }
 * }</pre>
 *
 * <h2>What the token promises</h2>
 * {@link #token()} is the fencing token of this grant: 64-bit and positive (a ZooKeeper zxid: values are skipped, only
 * their order means anything). It grows with every grant of a lock name: a grant's token is larger than the token of
 * every grant of that name made before it — through any gateway, in direct mode, across gateway failover and
 * ZooKeeper leader changes. So an EXCLUSIVE grant's token is larger than those of all holders before it:
 * <pre>{@code
 * long earlier, later;
 * try (Hold first = lock.acquire(wait)) { earlier = first.token(); }
 * try (Hold second = lock.acquire(wait)) { later = second.token(); }
 * assert later > earlier;
 * }</pre>
 * Pass the token to the resource with every write, and let the resource refuse lower tokens with a conditional
 * write, e.g. {@code UPDATE invoices SET ..., fence = ? WHERE id = ? AND fence < ?} (or {@code fence <= ?} when one
 * grant writes several times). A write that updates nothing came from a holder whose lock has passed to someone
 * else.
 *
 * <h2>What it does not promise: a lock is not a mutex</h2>
 * Holding a token is no proof of holding the lock now. A holder can be paused — a GC pause, swapping, a stopped VM —
 * past its session's TTL (or its ZooKeeper session's timeout, in direct mode), lose the lock while paused, wake up
 * and still write with its old token. Nothing in the client can prevent that; only the token, checked by the resource
 * in the same atomic step as the write, can. {@link #isValid()} narrows the window (it turns false as soon as the
 * client cannot be sure the lock is still held) but a check followed by a write is always a race. Curator's rule:
 * after {@link SessionState#SUSPENDED} you cannot be sure you hold the lock; after {@link SessionState#LOST} you do
 * not.
 *
 * <h2>Releasing</h2>
 * {@link #close()} and {@link #release()} are the same and idempotent: the first call releases (naming the token,
 * so it can never touch another holder's grant), later calls do nothing. After release, {@link #token()} and
 * {@link #checkValid()} throw {@link IllegalStateException} naming the lock.
 *
 * <p>Thread-safety: safe for use by any number of threads; release happens exactly once.
 */
public interface Hold extends AutoCloseable {
    /** The lock name, {@code namespace/path}. */
    String name();

    LockMode mode();

    /**
     * The fencing token of this grant (see the class comment for what it does and does not promise).
     *
     * @throws IllegalStateException once the hold was released
     */
    long token();

    /**
     * Whether this client can still be sure it holds the lock: not released, not lost, and — over HTTP — the local
     * deadline (send time of the last acknowledged keepalive plus the TTL, minus a drift margin) not passed, or — in
     * direct mode — the Curator connection neither SUSPENDED nor LOST. It can turn true again after a suspension when
     * a gateway acknowledges a keepalive (or Curator reconnects within the ZooKeeper session): the session never
     * expired, so the grant was never given up. {@code true} is no promise for the next instant (see "a lock is not a
     * mutex").
     */
    boolean isValid();

    /**
     * Throws unless {@link #isValid()}.
     *
     * @throws IllegalStateException       when the hold was released by this client
     * @throws LockOwnershipLostException when the session was lost or is suspended
     */
    void checkValid();

    /**
     * Completes when the hold is lost: the session was lost (a gateway said it expired or was closed; in direct mode,
     * the ZooKeeper session was LOST or the lock node deleted by someone else), or a release found the grant already
     * gone. It never completes for a hold that is released while held, nor while the session is merely
     * {@link SessionState#SUSPENDED}. Dependent actions run on the client's event thread (in direct mode, Curator's
     * event thread or the releasing thread): keep them short.
     */
    CompletionStage<Void> lost();

    /**
     * Releases the lock; later calls do nothing. When the gateways (or, in direct mode, ZooKeeper) cannot be reached in
     * time, the release goes on in the background (retries are safe: the release names the token or the node) and
     * this method returns.
     *
     * @throws LockOwnershipLostException when the hold was already lost: the caller's critical section may not have
     *                                    been exclusive (only the first call reports it)
     */
    void release();

    /** Same as {@link #release()}; declared without a checked exception. */
    @Override
    void close();
}
