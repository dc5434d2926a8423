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
 * {@link #token()} is the fencing token of this grant: 64-bit and positive (a ZooKeeper zxid plus the cell's token
 * floor: values are skipped, only their order means anything). It grows with every grant of a lock name: a grant's token is larger than the token of
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
     * Whether this client can still be sure it holds the lock. {@code true} is no promise for the next instant (see "a
     * lock is not a mutex"). It is false once the hold was released or {@linkplain #lost() lost}, and also:
     * <ul>
     *   <li><b>over HTTP</b>, from the session's <em>local deadline</em> on: the send time of the latest keepalive a
     *   gateway acknowledged, plus the TTL that acknowledgement reported (the session's TTL now, even if someone else
     *   changed it), minus a margin (500 ppm of that TTL and the builder's safety margin, 100 ms by default). The service
     *   cannot expire the session before then. It turns true again when a later keepalive is acknowledged (the session
     *   never expired, so the grant was never given up). Remaining window: a TTL shortened by another caller counts from
     *   the next acknowledged keepalive on, at most one heartbeat interval (a third of the TTL before the change) later;
     *   a keepalive acknowledged with a longer TTL moves the deadline later at once.</li>
     *   <li><b>in direct mode</b>, while Curator's connection is SUSPENDED or LOST (its events come a little late), and
     *   from the local deadline of the node's ZooKeeper session on: the send time of the latest request of that session
     *   ZooKeeper answered (the grant's read, then a probe every third of the session timeout) plus the negotiated
     *   session timeout, minus 500 ppm of it and 100 ms. ZooKeeper cannot expire the session before then.</li>
     * </ul>
     * So a holder paused past its session (a GC pause, SIGSTOP, a frozen VM) is not valid the instant it resumes, in
     * both modes: measured with a holder JVM stopped until another client held the lock, no sample of
     * {@code isValid()} after it resumed said true (in direct mode, before this deadline existed, 1,828 samples over
     * 228 ms did).
     */
    boolean isValid();

    /**
     * Throws unless {@link #isValid()}.
     *
     * @throws IllegalStateException       when the hold was released by this client
     * @throws LockOwnershipLostException when the hold was lost, or the session (or ZooKeeper session) may have expired
     */
    void checkValid();

    /**
     * Completes, once and for good, when the hold is lost:
     * <ul>
     *   <li><b>over HTTP</b>: a gateway said the session is gone (expired or closed by someone else; noticed by the
     *   next heartbeat, at most a heartbeat interval after it happened, or at once when a heartbeat was overdue: about
     *   60 ms after a paused holder resumed); or the grant ended elsewhere — an admin's force-release, a release by
     *   token from another process — which the session's own watch of its events reports (a RELEASED, EXPIRED or
     *   CANCELLED event for this grant, or a RESYNC that no longer lists it; measured 4-7 ms median, 12-34 ms at most,
     *   gateway and client on one host; while no gateway can be reached, not before the watch resumes); or a release
     *   found the grant already gone.</li>
     *   <li><b>in direct mode</b>: Curator reports the ZooKeeper session LOST (measured 0.24-1.7 s after a holder
     *   paused past its session resumed), or the lock node is deleted by someone else (ZooKeeper's watch event: 2 ms
     *   median, 74 ms at most), or a release found the node already gone.</li>
     * </ul>
     * It never completes for a hold released while held, nor while the session is merely
     * {@link SessionState#SUSPENDED}. Until it completes, {@link #isValid()} is what to look at: it turns false first.
     * Dependent actions run on the client's event thread (in direct mode, Curator's event thread or the releasing
     * thread): keep them short.
     */
    CompletionStage<Void> lost();

    /**
     * Calls {@code listener} with this hold, once, when the service asks this holder to let go (an admin's revoke,
     * {@code POST /v1/revoke}): the hold is force-released if it still holds after the revoke's grace, so finish or
     * abandon the work and {@link #release()} it. Over HTTP the request arrives on the session's own watch (the one
     * that tells of a grant ended elsewhere); the listener runs on the client's event thread, or at once on the calling
     * thread when the request came before the listener was added. Keep it short. Listeners of a hold that is released
     * or lost first are never called. In direct mode, a Curator {@code Revoker} on the lock node is such a request.
     *
     * @return this hold
     * @throws UnsupportedOperationException when this kind of hold cannot hear of revokes
     */
    default Hold onRevokeRequested(java.util.function.Consumer<? super Hold> listener) {
        throw new UnsupportedOperationException(this + " cannot hear of revokes");
    }

    /**
     * Releases the lock; later calls do nothing. When the gateways (or, in direct mode, ZooKeeper) cannot be reached in
     * time, the release goes on in the background (retries are safe: the release names the token or the node) and
     * this method returns.
     *
     * @throws LockOwnershipLostException when the hold was already lost: the caller's critical section may not have
     *                                    been exclusive (only the first call reports it). In direct mode the node is
     *                                    deleted all the same.
     */
    void release();

    /** Same as {@link #release()}; declared without a checked exception. */
    @Override
    void close();
}
