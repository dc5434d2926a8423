package io.warden.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.client.LockOwnershipLostException;
import io.warden.client.WardenClient;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * The registry against a real gateway, modelled on what Spring Integration's own registry tests check (JDBC, Redis,
 * ZooKeeper: lock and unlock, reentrancy, two threads, two registries, the wrong thread unlocking, TTLs, renewal,
 * expiry of unused locks), plus what only Warden's locks have: fencing tokens and the loss of a hold. Each registry on
 * its own client stands for one application instance. One cell for the class; every test uses its own lock name.
 */
class WardenLockRegistryTest {
    private static final AtomicInteger KEYS = new AtomicInteger();
    private static TestCell cell;

    private final String key = "job-" + KEYS.incrementAndGet();
    private final String name = "jobs/" + key;
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeAll
    static void startCell() throws Exception {
        cell = new TestCell();
    }

    @AfterAll
    static void stopCell() throws Exception {
        cell.close();
    }

    @AfterEach
    void closeInstances() throws Exception {
        pool.shutdownNow();
        cell.closeClients();
    }

    @Test
    void lock_andUnlock_holdAndFreeTheWardenLock_andOneLockIsCachedPerKey() {
        WardenLockRegistry registry = cell.registry("alpha");
        for (int i = 0; i < 3; i++) {
            WardenLock lock = registry.obtain(key);
            lock.lock();
            try {
                assertThat(lock.isHeldByCurrentThread()).isTrue();
                assertThat(cell.holders(name)).isEqualTo(1);
                assertThat(cell.lock(name).path("holders").get(0).path("token").asLong()).isEqualTo(lock.token());
                assertThat(registry.cached()).isEqualTo(1);
            } finally {
                lock.unlock();
            }
            assertThat(cell.holders(name)).isZero();
            assertThat(lock.isAcquiredInThisProcess()).isFalse();
        }
    }

    @Test
    void tryLock_heldByAnotherInstance_isFalseAtOnce_andLeavesNothingQueued() throws Exception {
        WardenLock a = cell.registry("alpha").obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lock();
        assertThat(b.tryLock()).isFalse();
        assertThat(cell.waiters(name)).isZero();

        long started = System.nanoTime();
        assertThat(b.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
        assertThat(cell.waiters(name)).isZero();
        assertThat(b.isAcquiredInThisProcess()).isFalse();
        a.unlock();
    }

    @Test
    void tryLock_withWait_getsTheLockWhenTheOtherInstanceUnlocks_withALargerToken() throws Exception {
        WardenLock a = cell.registry("alpha").obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lock();
        long first = a.token();
        Future<Long> waiter = pool.submit(() -> {
            assertThat(b.tryLock(10, TimeUnit.SECONDS)).isTrue();
            try {
                return b.token();
            } finally {
                b.unlock();
            }
        });
        await("the other instance queues", () -> cell.waiters(name) == 1);
        a.unlock();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(first);
    }

    @Test
    void twoInstances_excludeEachOther_untilTheHolderUnlocks() throws Exception {
        WardenLock a = cell.registry("alpha").obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lockInterruptibly();
        AtomicBoolean locked = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(1);
        Future<?> other = pool.submit(() -> {
            started.countDown();
            b.lockInterruptibly();
            try {
                locked.set(true);
            } finally {
                b.unlock();
            }
            return null;
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        await("the other instance queues", () -> cell.waiters(name) == 1);
        holdsFor("the other instance waits", Duration.ofMillis(300), () -> !locked.get());
        a.unlock();
        other.get(10, TimeUnit.SECONDS);
        assertThat(locked).isTrue();
    }

    @Test
    void threadsOfOneInstance_excludeEachOther_andQueueOneRequestAtATime() throws Exception {
        WardenLockRegistry registry = cell.registry("alpha");
        WardenLock lock = registry.obtain(key);
        lock.lock();
        Future<Boolean> second = pool.submit(() -> {
            boolean got = lock.tryLock(5, TimeUnit.SECONDS);
            if (got) {
                lock.unlock();
            }
            return got;
        });
        holdsFor("the second thread waits locally, not in Warden", Duration.ofMillis(300),
                () -> !second.isDone() && cell.waiters(name) == 0);
        lock.unlock();
        assertThat(second.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void sameThread_locksReentrantly_andOnlyTheOutermostUnlockReleases() throws Exception {
        WardenLockRegistry registry = cell.registry("alpha");
        WardenLock lock = registry.obtain(key);
        lock.lock();
        long token = lock.token();
        assertThat(registry.obtain(key)).isSameAs(lock);
        assertThat(lock.tryLock()).isTrue();
        lock.lockInterruptibly();
        assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(5))).isTrue();
        assertThat(lock.token()).isEqualTo(token);
        assertThat(cell.holders(name)).isEqualTo(1);
        lock.unlock();
        lock.unlock();
        lock.unlock();
        assertThat(cell.holders(name)).isEqualTo(1);
        lock.unlock();
        assertThat(cell.holders(name)).isZero();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void aNestedTryLock_afterTheTtlRanOut_takesANewGrant_asSpringsRegistriesDo() throws Exception {
        WardenLock lock = cell.registry("alpha").obtain(key);
        lock.lock(Duration.ofMillis(500));
        long first = lock.token();
        await("the TTL runs out and the grant is released", () -> cell.holders(name) == 0);

        assertThat(lock.tryLock()).as("nested, after the grant ended").isTrue();
        assertThat(lock.token()).isGreaterThan(first);
        assertThat(cell.holders(name)).isEqualTo(1);
        lock.unlock();
        assertThat(cell.holders(name)).as("the nested unlock keeps the new grant").isEqualTo(1);
        lock.unlock();
        assertThat(cell.holders(name)).isZero();
    }

    @Test
    void aNestedTryLock_afterAnotherInstanceTookTheLock_isFalse_andTheOuterUnlockThrows() throws Exception {
        WardenLock a = cell.registry("alpha").obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lock(Duration.ofMillis(500));
        assertThat(b.tryLock(10, TimeUnit.SECONDS)).isTrue();

        assertThat(a.tryLock()).isFalse();
        assertThat(a.isHeldByCurrentThread()).as("still the outer lock").isTrue();
        assertThatThrownBy(a::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThat(a.isAcquiredInThisProcess()).isFalse();
        b.unlock();
    }

    @Test
    void unlock_byAnotherThread_throwsIllegalMonitorState_andTheOwnerKeepsTheLock() throws Exception {
        WardenLockRegistry registry = cell.registry("alpha");
        WardenLock lock = registry.obtain(key);
        lock.lock();
        List<Callable<Object>> byAnotherThread = List.of(
                () -> { lock.unlock(); return null; },
                lock::token,
                lock::hold,
                () -> { registry.renewLock(key); return null; });
        for (Callable<Object> call : byAnotherThread) {
            Throwable refused = outcome(pool.submit(call));
            assertThat(refused).isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("own")
                    .hasMessageContaining(name);
        }
        assertThat(cell.holders(name)).isEqualTo(1);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(cell.holders(name)).isZero();
    }

    @Test
    void ttl_runsOutWithoutRenewal_theNextInstanceGetsTheLock_andTheLateUnlockThrows() throws Exception {
        WardenLock a = cell.registry("alpha").obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        long lockedAt = System.nanoTime();
        a.lock(Duration.ofMillis(700));
        long first = a.token();

        assertThat(b.tryLock(Duration.ofSeconds(10), Duration.ofSeconds(30))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - lockedAt)).as("not before the TTL")
                .isGreaterThanOrEqualTo(Duration.ofMillis(700));
        assertThat(b.token()).isGreaterThan(first);

        assertThatThrownBy(a::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining(name).hasMessageContaining("TTL of 700 ms");
        assertThat(a.isAcquiredInThisProcess()).isFalse();
        assertThat(cell.holders(name)).as("the late unlock leaves the new holder alone").isEqualTo(1);
        b.unlock();
    }

    @Test
    void renewLock_keepsTheLockPastItsTtl_andACustomTtlToo() throws Exception {
        // Renewed every 200 ms for two and a half TTLs: without renewal the TTL runs out twice over, and a renewal
        // would have to come 1.8 s late (a stalled JVM on a loaded machine) for it to run out with one.
        WardenLockRegistry alpha = cell.registry("alpha", Duration.ofSeconds(2));
        WardenLock a = alpha.obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lock();
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() - end < 0) {
            alpha.renewLock(key);
            TimeUnit.MILLISECONDS.sleep(200);
            assertThat(b.tryLock()).as("renewed every 200 ms: a TTL of 2 s never runs out").isFalse();
        }
        alpha.renewLock(key, Duration.ofSeconds(30));
        TimeUnit.MILLISECONDS.sleep(2_500);
        assertThat(b.tryLock()).as("renewed with 30 s: past the 2 s TTL").isFalse();
        a.unlock();
        assertThat(b.tryLock()).isTrue();
        b.unlock();
    }

    @Test
    void renewLock_notOwned_throwsIllegalMonitorState() {
        WardenLockRegistry registry = cell.registry("alpha");
        assertThatThrownBy(() -> registry.renewLock(key)).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining(name);
        registry.obtain(key);
        assertThatThrownBy(() -> registry.renewLock(key, Duration.ofSeconds(5)))
                .isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining(name);
    }

    @Test
    void renewalTaskScheduler_renewsEveryGrantUntilItIsUnlocked() throws Exception {
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.initialize();
        try {
            // Renewed every third of its TTL (667 ms) for two and a half TTLs; a renewal would have to come 1.3 s late
            // for the TTL to run out.
            WardenLockRegistry alpha = cell.registry("alpha", Duration.ofSeconds(2));
            alpha.setRenewalTaskScheduler(scheduler);
            WardenLock a = alpha.obtain(key);
            WardenLock b = cell.registry("beta").obtain(key);
            a.lock();
            long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() - end < 0) {
                TimeUnit.MILLISECONDS.sleep(250);
                assertThat(b.tryLock()).as("renewed in the background: a TTL of 2 s never runs out").isFalse();
            }
            a.unlock();
            assertThat(b.tryLock()).isTrue();
            b.unlock();
        } finally {
            scheduler.shutdown();
        }
    }

    @Test
    void expireUnusedOlderThan_dropsOnlyLocksNoThreadHolds() throws Exception {
        WardenLockRegistry registry = cell.registry("alpha");
        WardenLock held = registry.obtain(key + "-held");
        WardenLock idle = registry.obtain(key + "-idle");
        held.lock();
        TimeUnit.MILLISECONDS.sleep(20);

        registry.expireUnusedOlderThan(60_000);
        assertThat(registry.cached()).as("both used within the last minute").isEqualTo(2);

        registry.expireUnusedOlderThan(0);
        assertThat(registry.cached()).isEqualTo(1);
        assertThat(registry.obtain(key + "-held")).isSameAs(held);
        assertThat(registry.obtain(key + "-idle")).isNotSameAs(idle);
        held.unlock();

        TimeUnit.MILLISECONDS.sleep(20);
        registry.expireUnusedOlderThan(0);
        assertThat(registry.cached()).isZero();
    }

    @Test
    void aDroppedLock_lockedByAThreadThatKeptIt_isPutBack() throws Exception {
        WardenLockRegistry registry = cell.registry("alpha");
        WardenLock lock = registry.obtain(key);
        TimeUnit.MILLISECONDS.sleep(20);
        registry.expireUnusedOlderThan(0);
        assertThat(registry.cached()).isZero();

        lock.lock();
        assertThat(registry.obtain(key)).as("the lock this thread holds, so that it can lock it again")
                .isSameAs(lock);
        lock.unlock();
    }

    @Test
    void lockInterruptibly_interruptedWhileQueued_throws_andLeavesNothingQueuedOrHeld() throws Exception {
        WardenLock a = cell.registry("alpha").obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lock();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                b.lockInterruptibly();
                b.unlock();
                outcome.set(new AssertionError("locked"));
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        waiter.start();
        await("the other instance queues", () -> cell.waiters(name) == 1);
        waiter.interrupt();
        waiter.join(10_000);
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        await("its request is cancelled", () -> cell.waiters(name) == 0);
        assertThat(b.isAcquiredInThisProcess()).isFalse();
        a.unlock();
        assertThat(cell.holders(name)).as("the cancelled request was not granted").isZero();
    }

    @Test
    void lock_interruptedWhileQueued_goesOnWaiting_andKeepsTheInterrupt() throws Exception {
        WardenLock a = cell.registry("alpha").obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lock();
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                b.lock();
                outcome.set(Thread.currentThread().isInterrupted());
                b.unlock();
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        waiter.start();
        await("the other instance queues", () -> cell.waiters(name) == 1);
        waiter.interrupt();
        holdsFor("lock() goes on waiting", Duration.ofMillis(300), () -> waiter.isAlive() && cell.waiters(name) == 1);
        a.unlock();
        waiter.join(10_000);
        assertThat(outcome.get()).as("locked, with the interrupt flag set again").isEqualTo(Boolean.TRUE);
        assertThat(cell.holders(name)).as("an interrupted owner's unlock released before it returned").isZero();
    }

    @Test
    void fencingTokens_growAcrossHolders_andExecuteLockedReachesThem() throws Exception {
        WardenLockRegistry alpha = cell.registry("alpha");
        WardenLockRegistry beta = cell.registry("beta");
        long[] tokens = new long[4];
        for (int i = 0; i < tokens.length; i++) {
            WardenLockRegistry registry = i % 2 == 0 ? alpha : beta;
            int at = i;
            registry.executeLocked(key, () -> {
                tokens[at] = registry.obtain(key).token();
            });
        }
        for (int i = 1; i < tokens.length; i++) {
            assertThat(tokens[i]).as("token %d", i).isGreaterThan(tokens[i - 1]);
        }
    }

    @Test
    void fuzz_threadsOfTwoInstances_incrementExactly_andAFencedStoreNeverSeesATokenGoBack() throws Exception {
        WardenLockRegistry alpha = cell.registry("alpha");
        WardenLockRegistry beta = cell.registry("beta");
        AtomicInteger counter = new AtomicInteger();
        AtomicLong lastToken = new AtomicLong();
        AtomicBoolean refused = new AtomicBoolean();
        int threads = 6;
        int rounds = 10;
        List<Future<Object>> workers = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
            WardenLockRegistry registry = t % 2 == 0 ? alpha : beta;
            workers.add(pool.submit(() -> {
                for (int r = 0; r < rounds; r++) {
                    registry.executeLocked(key, () -> {
                        long token = registry.obtain(key).token();
                        // the store: accepts a write only with a token larger than the last one it took
                        if (token <= lastToken.get()) {
                            refused.set(true);
                        }
                        lastToken.set(token);
                        int read = counter.get();
                        Thread.yield();
                        counter.set(read + 1);
                    });
                }
                return null;
            }));
        }
        for (Future<Object> w : workers) {
            w.get(60, TimeUnit.SECONDS);
        }
        assertThat(counter.get()).isEqualTo(threads * rounds);
        assertThat(refused).as("a write with a token not larger than the last").isFalse();
    }

    @Test
    void aLockLostElsewhere_isNoLongerValid_cannotBeRenewed_andItsUnlockThrows() throws Exception {
        WardenClient alphaClient = cell.client("alpha");
        WardenLockRegistry alpha = new WardenLockRegistry(alphaClient, "jobs");
        WardenLock a = alpha.obtain(key);
        WardenLock b = cell.registry("beta").obtain(key);
        a.lock();
        long token = a.token();

        // an operator (or another process with the session id) releases the grant by its token
        assertThat(cell.release(alphaClient.sessionId(), name, token).path("released").asBoolean()).isTrue();
        await("the hold learns it is lost", () -> a.hold().lost().toCompletableFuture().isDone());
        assertThat(a.hold().isValid()).isFalse();
        assertThat(a.token()).as("still the token of the lost grant").isEqualTo(token);
        assertThatThrownBy(() -> alpha.renewLock(key)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(name);

        assertThat(b.tryLock(5, TimeUnit.SECONDS)).isTrue();
        assertThat(b.token()).isGreaterThan(token);
        assertThatThrownBy(a::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining(name).hasCauseInstanceOf(LockOwnershipLostException.class);
        assertThat(a.isAcquiredInThisProcess()).isFalse();
        b.unlock();
        alpha.close();
    }

    @Test
    void close_releasesGrantsStillHeld_andRefusesNewLocks() throws Exception {
        WardenLockRegistry registry = cell.registry("alpha");
        WardenLock lock = registry.obtain(key);
        lock.lock();
        registry.close();
        assertThat(cell.holders(name)).isZero();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> registry.obtain(key)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void badInput_isRefusedWithAMessageNamingIt() {
        WardenClient client = cell.client("alpha");
        assertThatThrownBy(() -> new WardenLockRegistry(client, "Not A Namespace"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefix 'Not A Namespace'");
        assertThatThrownBy(() -> new WardenLockRegistry(client, "jobs", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("defaultTtl");

        WardenLockRegistry registry = new WardenLockRegistry(client, "jobs");
        try {
            assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lockKey must be a String").hasMessageContaining("Integer");
            assertThatThrownBy(() -> registry.obtain("with space")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("with space");
            WardenLock lock = registry.obtain(key);
            assertThatThrownBy(() -> lock.lock(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ttl");
            assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(-1), Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waitTime");
            assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
            assertThat(lock.isAcquiredInThisProcess()).isFalse();
        } finally {
            registry.close();
        }
    }

    private static Throwable outcome(Future<Object> call) throws Exception {
        try {
            call.get(10, TimeUnit.SECONDS);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        WardenFixture.await(what, condition);
    }

    /** Asserts that {@code condition} holds throughout {@code period} (an observation over time, not a sync). */
    private static void holdsFor(String what, Duration period, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + period.toNanos();
        while (System.nanoTime() - end < 0) {
            assertThat(condition.getAsBoolean()).as(what).isTrue();
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }
}
