package io.warden.shedlock;

import static io.warden.shedlock.WardenLockProviderTest.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.client.Hold;
import io.warden.client.WardenClient;
import io.warden.client.WardenClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Jobs run the way ShedLock runs them ({@link DefaultLockingTaskExecutor}, which Spring's {@code @SchedulerLock} uses
 * too) on two nodes against a real gateway: exclusion under a fuzz, the token the job reads and a resource that
 * refuses lower tokens, and losing the lock while the job runs.
 */
class ScheduledJobTest {
    private static WardenCell cell;
    private static WardenClient nodeA;
    private static WardenClient nodeB;
    private static WardenLockProvider a;
    private static WardenLockProvider b;
    private static LockingTaskExecutor onA;
    private static LockingTaskExecutor onB;

    private String name;

    @BeforeAll
    static void startCell() {
        cell = new WardenCell();
        nodeA = cell.client("node-a", Duration.ofSeconds(5));
        nodeB = cell.client("node-b", Duration.ofSeconds(5));
        a = new WardenLockProvider(nodeA);
        b = new WardenLockProvider(nodeB);
        onA = new DefaultLockingTaskExecutor(a);
        onB = new DefaultLockingTaskExecutor(b);
    }

    @AfterAll
    static void stopCell() {
        if (a != null) {
            a.close();
            b.close();
        }
        if (cell != null) {
            cell.close();
        }
    }

    @BeforeEach
    void freshName() {
        name = "job-" + UUID.randomUUID();
    }

    /**
     * A resource that keeps the last token it accepted and refuses a write with a token not above it (a real one does
     * this in the write itself, e.g. {@code UPDATE ... WHERE fence < ?}).
     */
    static final class FencedStore {
        private final AtomicLong lastToken = new AtomicLong();
        private final AtomicLong refused = new AtomicLong();

        boolean write(long token) {
            long last = lastToken.get();
            while (token > last) {
                if (lastToken.compareAndSet(last, token)) {
                    return true;
                }
                last = lastToken.get();
            }
            refused.incrementAndGet();
            return false;
        }
    }

    /**
     * ShedLock's FuzzTester, smaller, with fencing: three threads per job, on two nodes, run two jobs until each thread has run its
     * share, every run incrementing an unguarded counter (a lost update shows as a short count) and writing to a fenced
     * store with its token (a run out of token order shows as a refusal).
     */
    @Test
    void fuzz_concurrentRuns_neverOverlap_andTokensOnlyGrow() throws Exception {
        int threadsPerJob = 3; // two on node a (one session: exclusion within a node too), one on node b
        int runsPerThread = 10;
        String[] jobs = {name + "-1", name + "-2"};
        int[] counters = new int[jobs.length];
        FencedStore[] stores = {new FencedStore(), new FencedStore()};
        ExecutorService pool = Executors.newFixedThreadPool(jobs.length * threadsPerJob);
        try {
            List<Callable<Void>> tasks = new ArrayList<>();
            for (int t = 0; t < jobs.length * threadsPerJob; t++) {
                LockingTaskExecutor executor = t % threadsPerJob == threadsPerJob - 1 ? onB : onA;
                int job = t / threadsPerJob;
                tasks.add(() -> {
                    int[] done = {0};
                    while (done[0] < runsPerThread) {
                        int before = done[0];
                        executor.executeWithLock((Runnable) () -> {
                            int n = counters[job];
                            WardenLockProviderTest.sleep(1);
                            counters[job] = n + 1;
                            assertThat(stores[job].write(WardenShedLock.currentToken())).isTrue();
                            done[0]++;
                        }, config(jobs[job], Duration.ofMinutes(1), Duration.ofMillis(5)));
                        if (done[0] == before) {
                            WardenLockProviderTest.sleep(2); // held elsewhere: try again soon, without spinning
                        }
                    }
                    return null;
                });
            }
            for (Future<Void> f : pool.invokeAll(tasks)) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        for (int job = 0; job < jobs.length; job++) {
            assertThat(counters[job]).as("runs of %s", jobs[job]).isEqualTo(threadsPerJob * runsPerThread);
            assertThat(stores[job].refused.get()).as("writes of %s refused", jobs[job]).isZero();
        }
    }

    @Test
    void theJob_readsItsToken_andTokensGrowAcrossNodes() throws Throwable {
        List<Long> tokens = new ArrayList<>();
        LockingTaskExecutor.TaskWithResult<Long> job = () -> {
            Hold hold = WardenShedLock.currentHold();
            assertThat(hold.isValid()).isTrue();
            assertThat(hold.name()).isEqualTo("shedlock/" + name);
            assertThat(WardenShedLock.hold(name)).contains(hold);
            return WardenShedLock.currentToken();
        };

        tokens.add(onA.executeWithLock(job, config(name)).getResult());
        tokens.add(onB.executeWithLock(job, config(name)).getResult());
        tokens.add(onA.executeWithLock(job, config(name)).getResult());

        assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
        assertThatThrownBy(WardenShedLock::currentToken).as("after the job").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no ShedLock lock");
        assertThat(WardenShedLock.hold(name)).isEmpty();
    }

    @Test
    void nestedLocks_theInnermostIsCurrent_andEachIsFoundByName() throws Throwable {
        String outer = name + "-outer";
        String inner = name + "-inner";
        onA.executeWithLock((Runnable) () -> {
            long outerToken = WardenShedLock.currentToken();
            try {
                onA.executeWithLock((Runnable) () -> {
                    assertThat(WardenShedLock.currentHold().name()).isEqualTo("shedlock/" + inner);
                    assertThat(WardenShedLock.hold(outer).orElseThrow().token()).isEqualTo(outerToken);
                }, config(inner));
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
            assertThat(WardenShedLock.currentHold().name()).isEqualTo("shedlock/" + outer);
        }, config(outer));
    }

    @Test
    void lockExtender_extendsTheRunningJobsHold() throws Throwable {
        long[] token = new long[2];
        onA.executeWithLock((Runnable) () -> {
            token[0] = WardenShedLock.currentToken();
            LockExtender.extendActiveLock(Duration.ofSeconds(10), Duration.ZERO);
            WardenLockProviderTest.sleep(1200); // past the first lockAtMostFor
            token[1] = WardenShedLock.currentToken();
            assertThat(WardenShedLock.currentHold().isValid()).isTrue();
            assertThat(cell.holderSession(a.wardenName(name))).isEqualTo(nodeA.sessionId());
        }, config(name, Duration.ofSeconds(1), Duration.ZERO));

        assertThat(token[1]).isEqualTo(token[0]);
        assertThat(cell.holders(a.wardenName(name))).isZero();
    }

    @Test
    void lockLost_whileTheJobRuns_isSeenByTheJob_andItsUnlockLeavesTheNextHolderAlone() throws Throwable {
        AtomicReference<SimpleLock> next = new AtomicReference<>();
        AtomicBoolean lostSeen = new AtomicBoolean();
        String warden = a.wardenName(name);

        onA.executeWithLock((Runnable) () -> {
            Hold hold = WardenShedLock.currentHold();
            // An admin (or another process with the session id and token) ends the grant behind the job's back.
            assertThat(cell.releaseElsewhere(nodeA.sessionId(), warden, hold.token())).isTrue();
            hold.lost().toCompletableFuture().join();
            lostSeen.set(!WardenShedLock.currentHold().isValid());
            next.set(b.lock(config(name)).orElseThrow());
        }, config(name));

        assertThat(lostSeen).isTrue();
        assertThat(cell.holderSession(warden)).as("the job's unlock left node b's grant").isEqualTo(nodeB.sessionId());
        next.get().unlock();
    }

    @Test
    void lockLost_cannotBeExtended() {
        SimpleLock lock = a.lock(config(name)).orElseThrow();
        Hold hold = a.holdOf(name).orElseThrow();
        assertThat(cell.releaseElsewhere(nodeA.sessionId(), a.wardenName(name), hold.token())).isTrue();
        hold.lost().toCompletableFuture().join();

        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        WardenCell.await("the provider forgot the lost hold", () -> a.holdOf(name).isEmpty());
    }

    @Test
    void sessionLost_theHoldIsLost_andLockFails() {
        WardenClient node = cell.client("node-c", Duration.ofSeconds(2));
        try (WardenLockProvider provider = new WardenLockProvider(node)) {
            SimpleLock lock = provider.lock(config(name)).orElseThrow();
            Hold hold = provider.holdOf(name).orElseThrow();

            cell.deleteSession(node.sessionId());
            hold.lost().toCompletableFuture().join();

            assertThat(hold.isValid()).isFalse();
            WardenCell.await("the provider forgot the lost hold", () -> provider.holdOf(name).isEmpty());
            assertThatThrownBy(() -> provider.lock(config(name))).isInstanceOf(WardenClientException.class);
            SimpleLock other = b.lock(config(name)).orElseThrow();
            lock.unlock(); // lost: nothing to release, nothing thrown
            assertThat(cell.holderSession(a.wardenName(name))).isEqualTo(nodeB.sessionId());
            other.unlock();
        }
    }

    @Test
    void sessionLost_aProviderWithAClientSupplier_goesOnWithANewSession() {
        List<WardenClient> made = new ArrayList<>();
        try (WardenLockProvider provider = new WardenLockProvider(() -> {
            WardenClient c = cell.client("node-d-" + made.size(), Duration.ofSeconds(2));
            made.add(c);
            return c;
        }, "shedlock")) {
            SimpleLock lock = provider.lock(config(name)).orElseThrow();
            Hold hold = provider.holdOf(name).orElseThrow();
            cell.deleteSession(made.get(0).sessionId());
            hold.lost().toCompletableFuture().join();
            lock.unlock();

            SimpleLock again = provider.lock(config(name)).orElseThrow();

            assertThat(made).hasSize(2);
            assertThat(cell.holderSession(provider.wardenName(name))).isEqualTo(made.get(1).sessionId());
            again.unlock();
            assertThat(cell.holders(provider.wardenName(name))).isZero();
        }
        assertThat(made.get(1).state()).as("the provider closed the client it made").isEqualTo(io.warden.client.SessionState.CLOSED);
    }

    @Test
    void theJobsToken_isRefusedByTheStore_afterLockAtMostForPassedItOn() throws Throwable {
        FencedStore store = new FencedStore();
        AtomicBoolean lateWrite = new AtomicBoolean(true);
        onA.executeWithLock((Runnable) () -> {
            long token = WardenShedLock.currentToken();
            WardenCell.await("lockAtMostFor released the hold", () -> cell.holders(a.wardenName(name)) == 0);
            assertThat(WardenShedLock.currentHold().isValid()).isFalse();
            // The next run, on node b (its own thread: ShedLock would run a same-named job nested here unlocked).
            Thread nodeBJob = new Thread(() -> onB.executeWithLock(
                    (Runnable) () -> assertThat(store.write(WardenShedLock.currentToken())).isTrue(), config(name)));
            nodeBJob.start();
            try {
                nodeBJob.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            lateWrite.set(store.write(token)); // the slow job writes last, with its old token
        }, config(name, Duration.ofMillis(300), Duration.ZERO));

        assertThat(store.lastToken.get()).as("node b's run wrote").isPositive();
        assertThat(lateWrite).as("the late write was accepted").isFalse();
        assertThat(store.refused.get()).isOne();
    }
}
