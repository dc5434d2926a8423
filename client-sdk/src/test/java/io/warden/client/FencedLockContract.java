package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link FencedLock} and {@link Hold}, as their javadoc states it, run against every implementation
 * (like ShedLock's {@code AbstractLockProviderIntegrationTest} and Curator's {@code TestInterProcessMutexBase}). A
 * subclass starts a real cell in {@code @BeforeEach}, stops it in {@code @AfterEach}, and says how to make a lock.
 *
 * <p>Each {@link #makeLock} call stands for another process: a lock of its own client (its own session or ZooKeeper
 * connection), so two made locks of one name exclude each other. Waits for asynchronous outcomes poll an observation
 * with a deadline ({@link WardenFixture#await}); nothing sleeps to synchronise.
 */
public abstract class FencedLockContract {
    /** Long enough never to run out in a passing test; a test that hangs fails at it instead. */
    protected static final Duration WAIT = Duration.ofSeconds(20);
    private static final AtomicInteger NAMES = new AtomicInteger();

    /** An EXCLUSIVE lock of {@code name} held through a new client of its own (another holder). */
    protected abstract FencedLock makeLock(String name);

    /** The SHARED and EXCLUSIVE locks of {@code name} through a new client of their own (another holder). */
    protected abstract FencedReadWriteLock makeReadWriteLock(String name);

    /** A lock of {@code name} through the same client as {@code lock} (its session or ZooKeeper connection). */
    protected abstract FencedLock sameClient(FencedLock lock, String name);

    /**
     * Ends {@code hold}'s grant behind its client's back, as an admin's force-release does: over HTTP a release by its
     * session id and token from another process, in direct mode a delete of its node by another ZooKeeper client.
     * {@code lock} is the lock it was acquired through.
     */
    protected abstract void endGrantElsewhere(FencedLock lock, Hold hold) throws Exception;

    /** The requests on {@code name}'s queue in ZooKeeper now, held or waiting. */
    protected abstract int queueLength(String name);

    /** A lock name no other test of the run uses. */
    protected static String freshName() {
        return "contract/lock-" + NAMES.incrementAndGet();
    }

    private void awaitQueue(String name, int length) {
        WardenFixture.await("the queue of " + name + " has " + length + " request(s)", () -> queueLength(name) == length);
    }

    // ------------------------------------------------------------------ acquire

    @Test
    public void acquire_freeLock_grantsAValidHoldWithAPositiveToken() {
        String name = freshName();
        FencedLock lock = makeLock(name);
        assertThat(lock.name()).isEqualTo(name);
        assertThat(lock.mode()).isEqualTo(LockMode.EXCLUSIVE);
        try (Hold hold = lock.acquire(WAIT)) {
            assertThat(hold.name()).isEqualTo(name);
            assertThat(hold.mode()).isEqualTo(LockMode.EXCLUSIVE);
            assertThat(hold.token()).isPositive();
            assertThat(hold.isValid()).isTrue();
            hold.checkValid();
            assertThat(hold.lost().toCompletableFuture()).isNotDone();
            assertThat(queueLength(name)).isEqualTo(1);
        }
        assertThat(queueLength(name)).isZero();
    }

    @Test
    public void acquire_isNotReentrant_aSecondAcquireOfTheSameLockDoesNotGetIt() {
        String name = freshName();
        FencedLock lock = makeLock(name);
        try (Hold held = lock.acquire(WAIT)) {
            assertThat(lock.tryAcquire()).isEmpty();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    public void tryAcquire_heldByOther_returnsEmpty_andLeavesNothingQueued() {
        String name = freshName();
        FencedLock other = makeLock(name);
        try (Hold held = makeLock(name).acquire(WAIT)) {
            assertThat(other.tryAcquire()).isEmpty();
            assertThat(queueLength(name)).isEqualTo(1);
            assertThat(held.isValid()).isTrue();
        }
        Optional<Hold> free = other.tryAcquire();
        assertThat(free).isPresent();
        free.get().close();
    }

    @Test
    public void acquire_heldUntilTheWaitRunsOut_throwsAcquireTimeout_andLeavesNothingQueued() {
        String name = freshName();
        FencedLock other = makeLock(name);
        Duration wait = Duration.ofMillis(300);
        try (Hold held = makeLock(name).acquire(WAIT)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> other.acquire(wait))
                    .isInstanceOf(AcquireTimeoutException.class)
                    .isInstanceOf(WardenClientException.class)
                    .hasMessageContaining(name);
            assertThat(System.nanoTime() - start).as("waited the whole wait").isGreaterThanOrEqualTo(wait.toNanos());
            assertThat(queueLength(name)).as("nothing left queued").isEqualTo(1);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    public void tryAcquireWithWait_heldUntilTheWaitRunsOut_returnsEmpty() {
        String name = freshName();
        try (Hold held = makeLock(name).acquire(WAIT)) {
            assertThat(makeLock(name).tryAcquire(Duration.ofMillis(200))).isEmpty();
            assertThat(queueLength(name)).isEqualTo(1);
        }
    }

    @Test
    public void acquireAsync_heldUntilTheWaitRunsOut_completesWithAcquireTimeout() {
        String name = freshName();
        try (Hold held = makeLock(name).acquire(WAIT)) {
            CompletableFuture<Hold> waiting = makeLock(name).acquireAsync(Duration.ofMillis(300));
            assertThatThrownBy(() -> waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(AcquireTimeoutException.class);
            awaitQueue(name, 1);
            assertThat(held.isValid()).isTrue();
        }
    }

    // ------------------------------------------------------------------ tokens and hand-over

    @Test
    public void release_thenAnotherAcquires_withAStrictlyLargerToken() {
        String name = freshName();
        long earlier;
        try (Hold first = makeLock(name).acquire(WAIT)) {
            earlier = first.token();
        }
        try (Hold second = makeLock(name).acquire(WAIT)) {
            assertThat(second.token()).isGreaterThan(earlier);
        }
    }

    @Test
    public void waiter_isGrantedWhenTheHolderReleases_withAStrictlyLargerToken() throws Exception {
        String name = freshName();
        Hold first = makeLock(name).acquire(WAIT);
        long firstToken = first.token();
        CompletableFuture<Hold> second = makeLock(name).acquireAsync(WAIT);
        awaitQueue(name, 2);
        assertThat(second).isNotDone();
        first.release();
        try (Hold granted = second.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(granted.token()).isGreaterThan(firstToken);
            assertThat(granted.isValid()).isTrue();
        }
    }

    // ------------------------------------------------------------------ release

    @Test
    public void close_twice_isSafe_andReleasesOnce() {
        String name = freshName();
        Hold hold = makeLock(name).acquire(WAIT);
        hold.close();
        hold.close();
        hold.release();
        assertThat(queueLength(name)).isZero();
        try (Hold next = makeLock(name).acquire(WAIT)) {
            assertThat(next.isValid()).isTrue();
        }
    }

    @Test
    public void close_fromManyThreadsAtOnce_releasesOnce_andNoneThrows() throws Exception {
        String name = freshName();
        Hold hold = makeLock(name).acquire(WAIT);
        CompletableFuture<?>[] closes = new CompletableFuture<?>[8];
        for (int i = 0; i < closes.length; i++) {
            closes[i] = CompletableFuture.runAsync(hold::close);
        }
        CompletableFuture.allOf(closes).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(queueLength(name)).isZero();
    }

    @Test
    public void useAfterRelease_throwsIllegalStateException_namingTheLock() {
        String name = freshName();
        Hold hold = makeLock(name).acquire(WAIT);
        hold.release();
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::token).isInstanceOf(IllegalStateException.class).hasMessageContaining(name);
        assertThatThrownBy(hold::checkValid).isInstanceOf(IllegalStateException.class)
                .isNotInstanceOf(LockOwnershipLostException.class).hasMessageContaining(name);
        // released while held: not lost
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
    }

    // ------------------------------------------------------------------ shared and exclusive

    @Test
    public void sharedHolders_coexist_andExcludeAWriter() {
        String name = freshName();
        FencedReadWriteLock a = makeReadWriteLock(name);
        FencedReadWriteLock b = makeReadWriteLock(name);
        assertThat(a.name()).isEqualTo(name);
        assertThat(a.readLock().mode()).isEqualTo(LockMode.SHARED);
        assertThat(a.writeLock().mode()).isEqualTo(LockMode.EXCLUSIVE);
        try (Hold r1 = a.readLock().acquire(WAIT); Hold r2 = b.readLock().acquire(WAIT)) {
            assertThat(r1.mode()).isEqualTo(LockMode.SHARED);
            assertThat(r1.isValid()).isTrue();
            assertThat(r2.isValid()).isTrue();
            assertThat(r2.token()).isPositive();
            assertThat(makeLock(name).tryAcquire()).isEmpty();
            assertThat(b.writeLock().tryAcquire()).isEmpty();
            assertThat(queueLength(name)).isEqualTo(2);
        }
    }

    @Test
    public void exclusiveHolder_excludesShared_andTheNextReaderGetsALargerToken() throws Exception {
        String name = freshName();
        FencedReadWriteLock reader = makeReadWriteLock(name);
        Hold writer = makeReadWriteLock(name).writeLock().acquire(WAIT);
        assertThat(reader.readLock().tryAcquire()).isEmpty();
        CompletableFuture<Hold> waiting = reader.readLock().acquireAsync(WAIT);
        awaitQueue(name, 2);
        assertThat(waiting).isNotDone();
        long writerToken = writer.token();
        writer.close();
        try (Hold read = waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(read.mode()).isEqualTo(LockMode.SHARED);
            assertThat(read.token()).isGreaterThan(writerToken);
        }
    }

    @Test
    public void queuedWriter_isNotOvertakenByALaterReader() throws Exception {
        String name = freshName();
        Hold r1 = makeReadWriteLock(name).readLock().acquire(WAIT);
        CompletableFuture<Hold> writer = makeReadWriteLock(name).writeLock().acquireAsync(WAIT);
        awaitQueue(name, 2);
        assertThat(makeReadWriteLock(name).readLock().tryAcquire()).as("a reader behind a queued writer").isEmpty();
        r1.close();
        try (Hold w = writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(w.mode()).isEqualTo(LockMode.EXCLUSIVE);
        }
    }

    // ------------------------------------------------------------------ giving up a wait

    @Test
    public void acquireAsync_cancel_removesTheQueuedRequest_soTheNextWaiterIsGranted() throws Exception {
        String name = freshName();
        Hold holder = makeLock(name).acquire(WAIT);
        CompletableFuture<Hold> cancelled = makeLock(name).acquireAsync(WAIT);
        awaitQueue(name, 2);
        CompletableFuture<Hold> next = makeLock(name).acquireAsync(WAIT);
        awaitQueue(name, 3);

        assertThat(cancelled.cancel(true)).isTrue();
        assertThat(cancelled).isCancelled();
        assertThatThrownBy(cancelled::join).isInstanceOf(CancellationException.class);
        awaitQueue(name, 2);

        long holderToken = holder.token();
        holder.release();
        // Had the cancelled request stayed queued, it would be first in line and `next` would wait on.
        try (Hold granted = next.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(granted.token()).isGreaterThan(holderToken);
            assertThat(queueLength(name)).as("only the granted request is left").isEqualTo(1);
        }
        awaitQueue(name, 0);
    }

    @Test
    public void interruptingABlockedAcquire_endsIt_cancelsTheRequest_andKeepsTheInterruptFlag() throws Exception {
        String name = freshName();
        FencedLock waiterLock = makeLock(name);
        try (Hold held = makeLock(name).acquire(WAIT)) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicReference<Boolean> flag = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    waiterLock.acquire(WAIT).close();
                } catch (RuntimeException e) {
                    thrown.set(e);
                    flag.set(Thread.currentThread().isInterrupted());
                }
            }, "contract-waiter");
            waiter.start();
            awaitQueue(name, 2);

            waiter.interrupt();
            waiter.join(WAIT.toMillis());

            assertThat(waiter.isAlive()).as("the acquire ended").isFalse();
            assertThat(thrown.get()).isInstanceOf(WardenClientException.class).hasMessageContaining("interrupted");
            assertThat(flag.get()).as("the interrupt flag is set again").isTrue();
            awaitQueue(name, 1);
            assertThat(held.isValid()).isTrue();
        }
        try (Hold later = waiterLock.acquire(WAIT)) {
            assertThat(later.isValid()).isTrue();
        }
    }

    // ------------------------------------------------------------------ holds ended elsewhere, interrupted waits

    /**
     * A force-release was never noticed over HTTP ({@code isValid()} stayed true, {@code lost()}
     * never completed) while direct mode noticed. In both modes a grant ended elsewhere makes the hold lost, its release
     * reports it (and leaves nothing behind), and the lock is free for others; other holds of the client are untouched.
     */
    @Test
    public void grantEndedElsewhere_theHoldIsLost_releaseReportsIt_andTheLockIsFree() throws Exception {
        String name = freshName();
        FencedLock lock = makeLock(name);
        Hold other = sameClient(lock, name + "-other").acquire(WAIT);
        Hold hold = lock.acquire(WAIT);

        endGrantElsewhere(lock, hold);

        hold.lost().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining(name);
        assertThatThrownBy(hold::release).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining(name);
        hold.close(); // reported once
        awaitQueue(name, 0);
        try (Hold next = makeLock(name).acquire(WAIT)) {
            assertThat(next.isValid()).isTrue();
        }
        assertThat(other.isValid()).as("another hold of the same client").isTrue();
        assertThat(other.lost().toCompletableFuture()).isNotDone();
        other.close();
    }

    /** Rounds of {@link #interruptedAcquires_racingTheirGrants_neverLeaveAHoldOrAQueuedRequest}. */
    protected static final int INTERRUPT_ROUNDS = 800;

    /**
     * When the grant completed the acquire just after the waiting thread was interrupted, the
     * interrupt's cancel found the acquire already done, nothing was sent, and the caller was told its request was
     * cancelled while its session kept the lock (5 leaks in 1,500 interrupted acquires). Whatever the race, an acquire
     * that returns no hold leaves no hold and no queued request behind. Each round interrupts an acquire of a free
     * lock at about the time its grant comes back (learnt from the rounds before), then looks at the queue.
     */
    @Test
    public void interruptedAcquires_racingTheirGrants_neverLeaveAHoldOrAQueuedRequest() throws Exception {
        String base = freshName();
        FencedLock[] locks = new FencedLock[INTERRUPT_ROUNDS];
        FencedLock first = makeLock(base + "-0");
        long grantNanos = TimeUnit.MILLISECONDS.toNanos(2);
        int interrupted = 0;
        for (int round = 0; round < INTERRUPT_ROUNDS; round++) {
            // one client, a lock name per round: a leak in one round cannot change the next
            FencedLock lock = round == 0 ? first : sameClient(first, base + "-" + round);
            locks[round] = lock;
            AtomicReference<Hold> granted = new AtomicReference<>();
            AtomicReference<Long> took = new AtomicReference<>();
            // The acquire runs 1,000 frames deep, as in many an application: whatever the client does after the
            // interrupt, exceptions on the way cost their stack traces, and the race gets a chance.
            Thread waiter = new Thread(null, () -> deep(1000, () -> {
                long start = System.nanoTime();
                try {
                    granted.set(lock.acquire(WAIT));
                    took.set(System.nanoTime() - start);
                } catch (WardenClientException e) {
                    // interrupted: the request must be gone
                }
            }), "contract-interrupted-" + round, 16L << 20);
            long delay = (long) (grantNanos * (0.7 + 0.4 * java.util.concurrent.ThreadLocalRandom.current().nextDouble()));
            waiter.start();
            long until = System.nanoTime() + delay;
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
            waiter.interrupt();
            waiter.join(WAIT.toMillis());
            assertThat(waiter.isAlive()).as("round %d: the acquire ended", round).isFalse();
            Hold hold = granted.get();
            // Keep the interrupts near the moment the grant comes back: later after an interrupt, earlier after a grant.
            if (hold != null) {
                grantNanos = Math.min(grantNanos, (grantNanos + took.get()) / 2) * 9 / 10;
                hold.close();
            } else {
                interrupted++;
                grantNanos = grantNanos * 6 / 5;
            }
        }
        assertThat(interrupted).as("rounds in which the interrupt ended the acquire").isPositive();
        List<String> leaked = new ArrayList<>();
        try {
            WardenFixture.await("every queue is empty", Duration.ofSeconds(10), () -> {
                leaked.clear();
                for (FencedLock l : locks) {
                    if (queueLength(l.name()) != 0) {
                        leaked.add(l.name());
                    }
                }
                return leaked.isEmpty();
            });
        } catch (AssertionError e) {
            throw new AssertionError(leaked.size() + " of " + INTERRUPT_ROUNDS + " acquires (" + interrupted
                    + " of them interrupted) left a hold or a queued request behind: " + leaked, e);
        }
    }

    private static void deep(int frames, Runnable action) {
        if (frames == 0) {
            action.run();
        } else {
            deep(frames - 1, action);
        }
    }
}
