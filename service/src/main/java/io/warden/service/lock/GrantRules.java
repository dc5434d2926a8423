package io.warden.service.lock;

import io.warden.service.queue.LockQueue;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;

/**
 * The rules by which the engine grants a lock (a multi-lock request too), names its token, wakes a waiting call, matches
 * a release's token and breaks a deadlock, as the contract fixes them: {@link #CONTRACT}, the only rules production
 * code uses. The engine is built with them (a seam, as Caffeine is given its {@code Ticker}) so that the proof suite can
 * build a gateway that breaks one on purpose and show that its checkers see the breach; nothing in the gateway chooses
 * other rules.
 *
 * <p>Implementations are called on ZooKeeper's event thread (or a caller's) and must be quick and side-effect free but for
 * {@link #awaitedEntryGone}'s {@code wake}, {@link #writeMulti}'s {@code send} and {@link #breakDeadlock}'s
 * {@code remove}.
 */
public interface GrantRules {
    /** The contract's rules. */
    GrantRules CONTRACT = new GrantRules() {
    };

    /**
     * Whether the entry at {@code index} of {@code queue} holds the lock (guarantees 1 and 5 of docs/guarantees.md:
     * grant, FIFO).
     */
    default boolean holds(LockQueue queue, int index) {
        return queue.holds(index);
    }

    /**
     * Where a multi-lock request stands (guarantee 11 of docs/guarantees.md): the first of its names, in the request's
     * order, whose entry does not hold ({@code at[k]} is its entry's index in {@code queues.get(k)}), or -1 when every
     * entry holds and the request is granted. The contract grants a request only when it holds every name.
     */
    default int firstNotHolding(List<LockQueue> queues, int[] at) {
        for (int k = 0; k < at.length; k++) {
            if (!holds(queues.get(k), at[k])) {
                return k;
            }
        }
        return -1;
    }

    /**
     * Whether a try-lock of {@code mode} ({@code permits}: a semaphore's, else 0) may be refused, without making its
     * request, on {@code queue} read at a moment within the call: when a request made then would not hold at once
     * (docs/api.md, {@code wait_ms} 0).
     */
    default boolean refusesTry(LockQueue queue, io.warden.service.api.Mode mode, int permits) {
        return !queue.wouldHoldAtOnce(mode, permits);
    }

    /**
     * The token a grant answers with (guarantee 2 of docs/guarantees.md): its queue node's, which no other grant of the
     * cell shares. {@code lockNodeToken} is the lock node's, which every grant of one lock node shares.
     */
    default long grantToken(long queueNodeToken, long lockNodeToken) {
        return queueNodeToken;
    }

    /**
     * Whether a release by {@code token} names the session's queue node whose token is {@code nodeToken} (guarantee 4
     * of docs/guarantees.md).
     */
    default boolean names(long token, long nodeToken) {
        return token == nodeToken;
    }

    /**
     * The entry a held call waits for is gone: {@code wake} looks at the call again at once (guarantee 4 of
     * docs/guarantees.md).
     */
    default void awaitedEntryGone(Runnable wake) {
        wake.run();
    }

    /**
     * Sends a multi-lock request's writes (guarantee 11 of docs/guarantees.md): {@code ops} are the record's create and
     * set, then one sequential create per name from {@code firstEntry} on, in the request's order ({@code names} of
     * them), then the client id note's; {@code send} sends one transaction. The contract sends them as one transaction,
     * so that two requests are in the same order on every name they share and never wait for each other in a cycle. The
     * answer is the results of every op, in the order of {@code ops}.
     */
    default CompletableFuture<List<CuratorTransactionResult>> writeMulti(List<CuratorOp> ops, int firstEntry, int names,
            Function<List<CuratorOp>, CompletableFuture<List<CuratorTransactionResult>>> send) {
        return send.apply(ops);
    }

    /**
     * Breaks a deadlock the watch mirror found (guarantee 13 of docs/guarantees.md): {@code remove} takes the victim's
     * request out in one conditional {@code multi} and answers its call 409 DEADLOCK; the answer is true when it did.
     * The contract breaks every cycle that has a victim (a member that said {@code on_deadlock: FAIL}).
     */
    default CompletableFuture<Boolean> breakDeadlock(io.warden.service.api.DeadlockAction action,
            Function<io.warden.service.api.DeadlockAction, CompletableFuture<Boolean>> remove) {
        return remove.apply(action);
    }
}
