package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The lock API against a real gateway on a real ZooKeeper: acquire, try, timeouts, cancellation, shared and exclusive. */
class FencedLockTest {
    private static final String NAME = "payments/invoice-42";

    private Cell cell;
    private Gateway gw;
    private WardenClient alice;
    private WardenClient bob;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
        gw = cell.gateway();
        alice = cell.client("alice", Cell.url(gw));
        bob = cell.client("bob", Cell.url(gw));
    }

    @AfterEach
    void tearDown() throws Exception {
        cell.close();
    }

    @Test
    void acquire_freeLock_grantsAHoldWithAToken() {
        try (Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
            assertThat(hold.name()).isEqualTo(NAME);
            assertThat(hold.mode()).isEqualTo(LockMode.EXCLUSIVE);
            assertThat(hold.token()).isPositive();
            assertThat(hold.isValid()).isTrue();
            var view = cell.lock(gw, NAME);
            assertThat(view.path("holders")).hasSize(1);
            assertThat(view.path("holders").get(0).path("session_id").asText()).isEqualTo(alice.sessionId());
            assertThat(view.path("holders").get(0).path("token").asLong()).isEqualTo(hold.token());
        }
        assertThat(cell.holders(gw, NAME)).isZero();
    }

    @Test
    void tokens_growWithEveryGrant() {
        long earlier;
        long later;
        try (Hold first = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
            earlier = first.token();
        }
        try (Hold second = bob.lock(NAME).acquire(Duration.ofSeconds(5))) {
            later = second.token();
        }
        assertThat(later).isGreaterThan(earlier);
    }

    @Test
    void tryAcquire_heldByOther_returnsEmpty_andLeavesNothingQueued() {
        try (Hold held = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
            assertThat(bob.lock(NAME).tryAcquire()).isEmpty();
            assertThat(cell.waiters(gw, NAME)).isZero();
            assertThat(held.isValid()).isTrue();
        }
        Optional<Hold> free = bob.lock(NAME).tryAcquire();
        assertThat(free).isPresent();
        free.get().close();
    }

    @Test
    void acquire_heldUntilTimeout_throwsTimeout_andLeavesNothingQueued() {
        try (Hold held = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> bob.lock(NAME).acquire(Duration.ofMillis(300)))
                    .isInstanceOf(AcquireTimeoutException.class)
                    .isInstanceOf(WardenClientException.class)
                    .hasMessageContaining(NAME);
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
            assertThat(cell.waiters(gw, NAME)).isZero();
            assertThat(bob.lock(NAME).tryAcquire(Duration.ofMillis(100))).isEmpty();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void acquire_waiting_isGrantedWhenTheHolderReleases() throws Exception {
        Hold held = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        long heldToken = held.token();
        CompletableFuture<Hold> waiting = bob.lock(NAME).acquireAsync(Duration.ofSeconds(20));
        Cell.await("bob is queued", () -> cell.waiters(gw, NAME) == 1);
        assertThat(waiting).isNotDone();
        held.release();
        Hold granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.token()).isGreaterThan(heldToken);
        assertThat(cell.lock(gw, NAME).path("holders").get(0).path("session_id").asText()).isEqualTo(bob.sessionId());
        granted.close();
    }

    @Test
    void acquireAsync_cancel_removesTheQueuedRequest() throws Exception {
        try (Hold held = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
            CompletableFuture<Hold> waiting = bob.lock(NAME).acquireAsync(Duration.ofSeconds(30));
            Cell.await("bob is queued", () -> cell.waiters(gw, NAME) == 1);

            assertThat(waiting.cancel(true)).isTrue();

            Cell.await("bob's request is gone", () -> cell.waiters(gw, NAME) == 0);
            assertThat(waiting).isCancelled();
            assertThatThrownBy(waiting::join).isInstanceOf(CancellationException.class);
            assertThat(held.isValid()).isTrue();
        }
        assertThat(cell.holders(gw, NAME)).isZero(); // the cancelled request was not granted behind our back
    }

    @Test
    void acquire_interrupted_cancelsTheQueuedRequest_andKeepsTheInterruptFlag() throws Exception {
        try (Hold held = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicReference<Boolean> flag = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    bob.lock(NAME).acquire(Duration.ofSeconds(30)).close();
                } catch (RuntimeException e) {
                    thrown.set(e);
                    flag.set(Thread.currentThread().isInterrupted());
                }
            }, "bob-waiter");
            waiter.start();
            Cell.await("bob is queued", () -> cell.waiters(gw, NAME) == 1);

            waiter.interrupt();
            waiter.join(TimeUnit.SECONDS.toMillis(20));

            assertThat(waiter.isAlive()).isFalse();
            assertThat(thrown.get()).isInstanceOf(WardenClientException.class).hasMessageContaining("interrupted");
            assertThat(flag.get()).isTrue();
            // the blocking acquire waited for its cancel: nothing queued when it returned
            assertThat(cell.waiters(gw, NAME)).isZero();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void readWriteLock_readersShare_writerExcludes() throws Exception {
        FencedReadWriteLock a = alice.readWriteLock(NAME);
        FencedReadWriteLock b = bob.readWriteLock(NAME);
        assertThat(a.readLock().mode()).isEqualTo(LockMode.SHARED);
        assertThat(a.writeLock().mode()).isEqualTo(LockMode.EXCLUSIVE);

        Hold r1 = a.readLock().acquire(Duration.ofSeconds(5));
        Hold r2 = b.readLock().acquire(Duration.ofSeconds(5));
        assertThat(r1.mode()).isEqualTo(LockMode.SHARED);
        assertThat(cell.lock(gw, NAME).path("mode").asText()).isEqualTo("SHARED");
        assertThat(cell.holders(gw, NAME)).isEqualTo(2);

        assertThat(b.writeLock().tryAcquire()).isEmpty();
        CompletableFuture<Hold> writer = b.writeLock().acquireAsync(Duration.ofSeconds(20));
        Cell.await("the writer is queued", () -> cell.waiters(gw, NAME) == 1);
        // a reader never overtakes a queued writer
        assertThat(a.readLock().tryAcquire()).isEmpty();

        r1.close();
        assertThat(writer).isNotDone();
        r2.close();
        Hold w = writer.get(10, TimeUnit.SECONDS);
        assertThat(w.mode()).isEqualTo(LockMode.EXCLUSIVE);
        assertThat(w.token()).isPositive();
        assertThat(cell.lock(gw, NAME).path("mode").asText()).isEqualTo("EXCLUSIVE");
        assertThat(a.readLock().tryAcquire()).isEmpty();
        w.close();
        Optional<Hold> reader = a.readLock().tryAcquire();
        assertThat(reader).isPresent();
        reader.get().close();
    }

    @Test
    void release_isIdempotent_andUseAfterReleaseNamesTheLock() {
        Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        long token = hold.token();
        hold.release();
        hold.close();
        hold.release();
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::token).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(NAME).hasMessageContaining(Long.toString(token));
        assertThatThrownBy(hold::checkValid).isInstanceOf(IllegalStateException.class).hasMessageContaining(NAME);
        assertThat(cell.holders(gw, NAME)).isZero();
    }

    @Test
    void release_concurrentCloses_releaseOnce() throws Exception {
        Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        CompletableFuture<?>[] closes = new CompletableFuture<?>[8];
        for (int i = 0; i < closes.length; i++) {
            closes[i] = CompletableFuture.runAsync(hold::close);
        }
        CompletableFuture.allOf(closes).get(10, TimeUnit.SECONDS); // none threw
        assertThat(cell.holders(gw, NAME)).isZero();
    }

    @Test
    void acquire_longerThanOneCall_keepsItsPlaceWithTheSameRequestId() throws Exception {
        // The service holds one call at most 5 minutes; with the per-call cap lowered to 200 ms the client must
        // repeat its call (on_timeout=KEEP) with one request_id, never queueing twice.
        WardenClient carol = cell.track(WardenClient.builder().endpoints(Cell.url(gw)).clientId("carol")
                .sessionTtl(Duration.ofSeconds(5)).maxWaitPerCall(Duration.ofMillis(200)).build());
        Hold held = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> waiting = carol.lock(NAME).acquireAsync(Duration.ofSeconds(20));
        Cell.await("carol is queued", () -> cell.waiters(gw, NAME) == 1);
        String requestId = cell.lock(gw, NAME).path("waiters").get(0).path("request_id").asText();
        Cell.holdsFor("carol stays queued once, under one request_id", Duration.ofMillis(800), () -> {
            var waiters = cell.lock(gw, NAME).path("waiters");
            return waiters.size() == 1 && waiters.get(0).path("request_id").asText().equals(requestId);
        });
        held.close();
        try (Hold granted = waiting.get(10, TimeUnit.SECONDS)) {
            assertThat(granted.isValid()).isTrue();
            assertThat(fxQueueSize()).isEqualTo(1);
        }
    }

    @Test
    void acquire_longWaitThatRunsOut_cancelsItsRequest() {
        WardenClient carol = cell.track(WardenClient.builder().endpoints(Cell.url(gw)).clientId("carol")
                .sessionTtl(Duration.ofSeconds(5)).maxWaitPerCall(Duration.ofMillis(150)).build());
        try (Hold held = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> carol.lock(NAME).acquire(Duration.ofMillis(700)))
                    .isInstanceOf(AcquireTimeoutException.class);
            assertThat(cell.waiters(gw, NAME)).isZero();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void lock_badName_failsBeforeAnyCall() {
        assertThatThrownBy(() -> alice.lock("NoNamespace")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NoNamespace");
        assertThatThrownBy(() -> alice.lock("ns/_hidden")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("_hidden");
        assertThatThrownBy(() -> alice.lock(NAME).acquire(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void close_releasesEveryHold_andFailsLaterAcquires() {
        Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> waiting = alice.lock("payments/other").acquireAsync(Duration.ZERO);
        waiting.join().close();
        alice.close();
        alice.close();
        assertThat(alice.state()).isEqualTo(SessionState.CLOSED);
        assertThat(hold.isValid()).isFalse();
        hold.close(); // no-op: closing the session released it
        assertThat(cell.holders(gw, NAME)).isZero();
        assertThatThrownBy(() -> alice.lock(NAME).tryAcquire()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    private int fxQueueSize() {
        return cell.fx.queueSize(NAME);
    }
}
