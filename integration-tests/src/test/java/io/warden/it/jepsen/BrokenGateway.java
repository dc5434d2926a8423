package io.warden.it.jepsen;

import io.warden.service.Gateway;
import io.warden.service.Rules;
import io.warden.service.Settings;
import io.warden.service.api.DeadlockAction;
import io.warden.service.config.WardenConfig;
import io.warden.service.lock.GrantRules;
import io.warden.service.queue.LockQueue;
import io.warden.service.watch.ResumeRule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;

/**
 * A gateway with one deliberate bug, for the proof suite only: a checker that nobody has seen fail proves nothing. It is
 * the service's gateway built with one of the contract's rules broken ({@link Rules}, the seams the engine, the session
 * tracker and the watch hub are built with); the service itself has no way to break them. Started by {@link JepsenCell}
 * in place of the service jar, with the same arguments and {@code -Dwarden.broken=NAME}.
 *
 * <ul>
 *   <li>{@link Bug#GRANT_WITHOUT_CHECK}: every request is granted as soon as its queue node exists, holders or not
 *   (breaks contract §2.1; the mutex checker must see two holders).</li>
 *   <li>{@link Bug#EXPIRE_AT_HALF_TTL}: a tracked session's deadline is half its TTL after its last keepalive (breaks
 *   §2.3; the expiry checker must see an early expiry).</li>
 *   <li>{@link Bug#TOKEN_OF_LOCK}: a grant's token is the lock node's instead of its queue node's, so holders one after
 *   another share a token while the lock node lives (breaks §2.2, fencing; a release by that token finds the session's
 *   own node on the lock). The fenced counter's checker must see a lost increment.</li>
 *   <li>{@link Bug#WAITERS_NEVER_WOKEN}: a queued call is not woken when the node it waits for goes; it looks again only
 *   when its wait runs out (breaks §2.4; the liveness checker must see a client that does not acquire within its
 *   bound).</li>
 *   <li>{@link Bug#RESUME_FROM_NOW}: a watch resumed with {@code since_revision} gets neither the events it missed nor a
 *   RESYNC, only what happens from now on (breaks §3's resume; the watch checker must see a grant it never got).</li>
 *   <li>{@link Bug#REFUSE_FREE_TRIES}: a try-lock that reads before it writes is refused whatever it reads, a free lock
 *   too (breaks §3's try-lock; the mutex checker must see a try refused while nobody held the lock).</li>
 *   <li>{@link Bug#SEMAPHORE_ONE_MORE}: a semaphore entry holds one place further back than its permits allow (breaks
 *   §2.12; the semaphore checker must see one holder more than the permits).</li>
 *   <li>{@link Bug#MULTI_ONE_NAME_AT_A_TIME}: a multi-lock request's entries are made one transaction per name, in the
 *   order given, each {@link #ONE_NAME_PAUSE} after the one before (as a client that takes its locks one by one, a
 *   round trip each, would); two requests that name the same locks in crossed orders can then each hold one and wait
 *   for the other (breaks §2.11; the liveness checker must see multi-lock requests that are never granted).</li>
 *   <li>{@link Bug#MULTI_FIRST_NAME_ONLY}: a multi-lock request is granted once the entry on its first name holds,
 *   whatever its other names' queues say (breaks §2.11's "granted when it holds every name", and so §2.1 on the other
 *   names; the mutex checker must see two holders of a name a multi-lock request was granted while another held it).</li>
 *   <li>{@link Bug#DEADLOCKS_NEVER_BROKEN}: the gateway finds deadlocks and lists them, but never removes a victim
 *   (breaks §2.13; the deadlock checker must see a cycle with an {@code on_deadlock: FAIL} member that no 409 broke
 *   within its bound).</li>
 *   <li>{@link Bug#MOVE_WITHOUT_FLOOR_RAISE}: a move of a namespace to another cell ({@code PUT
 *   /v1/namespaces/{namespace}/cell}) freezes, drains and flips it as the contract says, but never raises the new cell's
 *   token floor ({@link io.warden.service.MoveRule} {@code () -> false}), so a namespace moved into a cell whose zxids are
 *   behind the old cell's is granted tokens below the ones it had (breaks §1, tokens only grow; the fencing checker must
 *   see a token that went down across the move, and the fenced counter refuses the increments made under it).</li>
 * </ul>
 */
public final class BrokenGateway {
    static final String PROPERTY = "warden.broken";
    /** {@link Bug#MULTI_ONE_NAME_AT_A_TIME}'s pause between one name's transaction and the next. */
    static final Duration ONE_NAME_PAUSE = Duration.ofSeconds(1);
    private static final Logger log = LoggerFactory.getLogger(BrokenGateway.class);

    /** The deliberate bugs. */
    enum Bug {
        GRANT_WITHOUT_CHECK, EXPIRE_AT_HALF_TTL, TOKEN_OF_LOCK, WAITERS_NEVER_WOKEN, RESUME_FROM_NOW, REFUSE_FREE_TRIES,
        SEMAPHORE_ONE_MORE, MULTI_ONE_NAME_AT_A_TIME, MULTI_FIRST_NAME_ONLY, DEADLOCKS_NEVER_BROKEN,
        MOVE_WITHOUT_FLOOR_RAISE;

        Rules rules() {
            Rules c = Rules.CONTRACT;
            return switch (this) {
                case GRANT_WITHOUT_CHECK -> new Rules(new GrantRules() {
                    @Override
                    public boolean holds(LockQueue queue, int index) {
                        return true;
                    }
                }, c.expiry(), c.resume());
                case EXPIRE_AT_HALF_TTL -> new Rules(c.grants(), ttlMs -> Duration.ofMillis(ttlMs).toNanos() / 2, c.resume());
                case TOKEN_OF_LOCK -> new Rules(new GrantRules() {
                    @Override
                    public long grantToken(long queueNodeToken, long lockNodeToken) {
                        return lockNodeToken;
                    }

                    @Override
                    public boolean names(long token, long nodeToken) {
                        return true; // any node of the session's on the lock: the token no longer names one
                    }
                }, c.expiry(), c.resume());
                case WAITERS_NEVER_WOKEN -> new Rules(new GrantRules() {
                    @Override
                    public void awaitedEntryGone(Runnable wake) {
                        // not woken: the call looks again only when its wait runs out
                    }
                }, c.expiry(), c.resume());
                case RESUME_FROM_NOW -> new Rules(c.grants(), c.expiry(), (ResumeRule) since -> null);
                case SEMAPHORE_ONE_MORE -> new Rules(new GrantRules() {
                    @Override
                    public boolean holds(LockQueue queue, int index) {
                        // A semaphore entry holds at one place more than its permits allow.
                        var e = queue.entries().get(index);
                        return queue.holds(index) || e.mode() == io.warden.service.api.Mode.SEMAPHORE
                                && index == e.permits() && queue.waitsForCount(index);
                    }
                }, c.expiry(), c.resume());
                case MULTI_ONE_NAME_AT_A_TIME -> new Rules(new GrantRules() {
                    @Override
                    public CompletableFuture<List<CuratorTransactionResult>> writeMulti(List<CuratorOp> ops,
                            int firstEntry, int names,
                            Function<List<CuratorOp>, CompletableFuture<List<CuratorTransactionResult>>> send) {
                        // The record with the first name's entry, then each further name's entry alone (the client id
                        // note with the last), each sent a pause after the one before was answered.
                        List<List<CuratorOp>> parts = new ArrayList<>();
                        parts.add(ops.subList(0, firstEntry + 1));
                        for (int k = 1; k < names; k++) {
                            int from = firstEntry + k;
                            parts.add(ops.subList(from, k == names - 1 ? ops.size() : from + 1));
                        }
                        CompletableFuture<List<CuratorTransactionResult>> all = send.apply(parts.get(0))
                                .thenApply(ArrayList::new);
                        for (List<CuratorOp> part : parts.subList(1, parts.size())) {
                            all = all.thenCompose(done -> CompletableFuture.supplyAsync(() -> part,
                                            CompletableFuture.delayedExecutor(ONE_NAME_PAUSE.toMillis(), TimeUnit.MILLISECONDS))
                                    .thenCompose(send).thenApply(more -> {
                                        done.addAll(more);
                                        return done;
                                    }));
                        }
                        return all;
                    }
                }, c.expiry(), c.resume());
                case MULTI_FIRST_NAME_ONLY -> new Rules(new GrantRules() {
                    @Override
                    public int firstNotHolding(List<LockQueue> queues, int[] at) {
                        return holds(queues.get(0), at[0]) ? -1 : 0; // the other names are not looked at
                    }
                }, c.expiry(), c.resume());
                case DEADLOCKS_NEVER_BROKEN -> new Rules(new GrantRules() {
                    @Override
                    public CompletableFuture<Boolean> breakDeadlock(DeadlockAction action,
                            Function<DeadlockAction, CompletableFuture<Boolean>> remove) {
                        return CompletableFuture.completedFuture(false); // found and listed, never broken
                    }
                }, c.expiry(), c.resume());
                case REFUSE_FREE_TRIES -> new Rules(new GrantRules() {
                    @Override
                    public boolean refusesTry(LockQueue queue, io.warden.service.api.Mode mode, int permits) {
                        return true;
                    }
                }, c.expiry(), c.resume());
                // The other rules as the contract has them: only the move's floor raise is left out.
                case MOVE_WITHOUT_FLOOR_RAISE -> new Rules(c.grants(), c.expiry(), c.resume(), () -> false);
            };
        }
    }

    private BrokenGateway() {
    }

    public static void main(String[] args) throws Exception {
        Bug bug = Bug.valueOf(System.getProperty(PROPERTY));
        WardenConfig config = Settings.loader().load(args);
        Gateway gateway = Gateway.start(config, bug.rules());
        log.warn("gateway {} RUNS WITH THE DELIBERATE BUG {}: for the proof suite's own tests only; it breaks the contract "
                + "on purpose", gateway.gatewayId(), bug);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            gateway.close();
            stopped.countDown();
        }, "broken-gateway-shutdown"));
        stopped.await();
    }
}
