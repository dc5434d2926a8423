package io.warden.service.lock;

import io.warden.service.queue.LockQueue;

/**
 * The rules by which the engine grants a lock, names its token, wakes a waiting call and matches a release's token, as
 * the contract fixes them: {@link #CONTRACT}, the only rules production code uses. The engine is built with them (a
 * seam, as Caffeine is given its {@code Ticker}) so that the proof suite can build a gateway that breaks one on purpose
 * and show that its checkers see the breach; nothing in the gateway chooses other rules.
 *
 * <p>Implementations are called on ZooKeeper's event thread and must be quick and side-effect free but for
 * {@link #awaitedEntryGone}'s {@code wake}.
 */
public interface GrantRules {
    /** The contract's rules. */
    GrantRules CONTRACT = new GrantRules() {
    };

    /** Whether the entry at {@code index} of {@code queue} holds the lock (contract §2.1: mutual exclusion, FIFO). */
    default boolean holds(LockQueue queue, int index) {
        return queue.holds(index);
    }

    /**
     * Whether a try-lock of {@code mode} ({@code permits}: a semaphore's, else 0) may be refused, without making its
     * request, on {@code queue} read at a moment within the call: when a request made then would not hold at once
     * (contract §3, {@code wait_ms} 0).
     */
    default boolean refusesTry(LockQueue queue, io.warden.service.api.Mode mode, int permits) {
        return !queue.wouldHoldAtOnce(mode, permits);
    }

    /**
     * The token a grant answers with (§2.2): its queue node's, which no other grant of the cell shares.
     * {@code lockNodeToken} is the lock node's, which every grant of one lock node shares.
     */
    default long grantToken(long queueNodeToken, long lockNodeToken) {
        return queueNodeToken;
    }

    /** Whether a release by {@code token} names the session's queue node whose token is {@code nodeToken} (§2.6). */
    default boolean names(long token, long nodeToken) {
        return token == nodeToken;
    }

    /** The entry a held call waits for is gone: {@code wake} looks at the call again at once (§2.4). */
    default void awaitedEntryGone(Runnable wake) {
        wake.run();
    }
}
