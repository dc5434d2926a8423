package io.warden.client.direct;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.client.AcquireTimeoutException;
import io.warden.client.FencedLock;
import io.warden.client.FencedReadWriteLock;
import io.warden.client.Hold;
import io.warden.client.LockMode;
import io.warden.client.LockOwnershipLostException;
import io.warden.client.WardenClientException;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Direct mode on a real ZooKeeper: grants, tokens, timeouts, cancellation, and Curator's connection rule. */
class DirectLocksTest {
    private static final String NAME = "payments/invoice-42";
    private static final Duration WAIT = Duration.ofSeconds(5);

    private WardenFixture fx;
    private CuratorFramework alice;
    private CuratorFramework bob;
    private DirectLocks aliceLocks;
    private DirectLocks bobLocks;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        alice = curator(Duration.ofSeconds(10));
        bob = curator(Duration.ofSeconds(10));
        aliceLocks = DirectLocks.of(alice);
        bobLocks = DirectLocks.of(bob);
    }

    @AfterEach
    void tearDown() throws Exception {
        aliceLocks.close();
        bobLocks.close();
        alice.close();
        bob.close();
        fx.close();
    }

    private CuratorFramework curator(Duration sessionTimeout) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(fx.server.getConnectString())
                .sessionTimeoutMs((int) sessionTimeout.toMillis()).connectionTimeoutMs(3000)
                .retryPolicy(new RetryNTimes(50, 100)).build();
        c.start();
        assertThat(c.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        return c;
    }

    @Test
    void acquire_freeLock_tokenIsTheCzxidOfOurNodeOnTheGatewaysPath() throws Exception {
        try (Hold hold = aliceLocks.lock(NAME).acquire(WAIT)) {
            assertThat(hold.name()).isEqualTo(NAME);
            assertThat(hold.mode()).isEqualTo(LockMode.EXCLUSIVE);
            assertThat(hold.isValid()).isTrue();
            List<String> queue = fx.queue(NAME); // fx.curator is on the chroot /warden
            assertThat(queue).singleElement().asString().startsWith("_c_").contains("-__WRIT__");
            Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(NAME) + "/" + queue.get(0));
            assertThat(hold.token()).isPositive().isEqualTo(stat.getCzxid());
            assertThat(stat.getEphemeralOwner()).isEqualTo(alice.getZookeeperClient().getZooKeeper().getSessionId());
        }
        assertThat(fx.queue(NAME)).isEmpty();
    }

    @Test
    void curatorRevoker_onTheHoldsNode_callsOnRevokeRequested_andADeletionAfterIsStillNoticed() throws Exception {
        Hold hold = aliceLocks.lock(NAME).acquire(WAIT);
        java.util.concurrent.CompletableFuture<Hold> asked = new java.util.concurrent.CompletableFuture<>();
        hold.onRevokeRequested(asked::complete);
        String path = ((DirectHold) hold).path();

        org.apache.curator.framework.recipes.locks.Revoker.attemptRevoke(fx.curator, path);

        assertThat(asked.get(10, TimeUnit.SECONDS)).isSameAs(hold);
        assertThat(hold.isValid()).as("asked, not taken").isTrue();
        // The data change spent the node's watch; it was set again, so a deletion is still seen.
        fx.curator.delete().forPath(path);
        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
    }

    @Test
    void of_chroot_putsLocksUnderThatChroot() throws Exception {
        try (DirectLocks other = DirectLocks.of(alice, "/cells/blue");
             Hold hold = other.lock(NAME).acquire(WAIT)) {
            assertThat(other.chroot()).isEqualTo("/cells/blue");
            assertThat(alice.getChildren().forPath("/cells/blue" + WardenFixture.lockPath(NAME))).hasSize(1);
            assertThat(fx.queue(NAME)).isEmpty();
            assertThat(hold.token()).isPositive();
        }
    }

    @Test
    void tokens_growWithEveryGrant() {
        FencedLock lock = aliceLocks.lock(NAME);
        long earlier;
        long later;
        try (Hold first = lock.acquire(WAIT)) {
            earlier = first.token();
        }
        try (Hold second = bobLocks.lock(NAME).acquire(WAIT)) {
            later = second.token();
        }
        assertThat(later).isGreaterThan(earlier);
    }

    @Test
    void tryAcquire_heldByOther_returnsEmptyAndLeavesNothingQueued() throws Exception {
        try (Hold held = aliceLocks.lock(NAME).acquire(WAIT)) {
            assertThat(bobLocks.lock(NAME).tryAcquire()).isEmpty();
            assertThat(fx.queue(NAME)).hasSize(1);
        }
        Optional<Hold> later = bobLocks.lock(NAME).tryAcquire();
        assertThat(later).isPresent();
        later.get().release();
    }

    @Test
    void acquire_notGrantedInTime_throwsTimeoutAndLeavesNothingQueued() throws Exception {
        try (Hold held = aliceLocks.lock(NAME).acquire(WAIT)) {
            assertThatThrownBy(() -> bobLocks.lock(NAME).acquire(Duration.ofMillis(200)))
                    .isInstanceOf(AcquireTimeoutException.class).hasMessageContaining(NAME);
            assertThat(fx.queue(NAME)).hasSize(1);
        }
    }

    @Test
    void acquire_isNotReentrant_secondAcquireQueuesBehindTheFirst() {
        FencedLock lock = aliceLocks.lock(NAME);
        try (Hold held = lock.acquire(WAIT)) {
            assertThat(lock.tryAcquire()).isEmpty();
        }
    }

    @Test
    void acquire_waiting_isGrantedWhenTheHolderReleases() throws Exception {
        Hold first = aliceLocks.lock(NAME).acquire(WAIT);
        CompletableFuture<Hold> second = bobLocks.lock(NAME).acquireAsync(Duration.ofSeconds(20));
        WardenFixture.await("bob is queued", () -> fx.queueSize(NAME) == 2);
        assertThat(second).isNotDone();
        long firstToken = first.token();
        first.release();
        try (Hold hold = second.get(10, TimeUnit.SECONDS)) {
            assertThat(hold.token()).isGreaterThan(firstToken);
        }
    }

    @Test
    void acquireAsync_cancelled_removesTheQueuedNode() throws Exception {
        try (Hold held = aliceLocks.lock(NAME).acquire(WAIT)) {
            CompletableFuture<Hold> waiting = bobLocks.lock(NAME).acquireAsync(Duration.ofSeconds(30));
            WardenFixture.await("bob is queued", () -> fx.queueSize(NAME) == 2);
            assertThat(waiting.cancel(true)).isTrue();
            assertThatThrownBy(waiting::join).isInstanceOf(CancellationException.class);
            WardenFixture.await("bob's node is gone", () -> fx.queueSize(NAME) == 1);
        }
        WardenFixture.await("the queue is empty", () -> fx.queueSize(NAME) == 0);
    }

    @Test
    void acquire_interrupted_throwsAndRemovesTheQueuedNode() throws Exception {
        try (Hold held = aliceLocks.lock(NAME).acquire(WAIT)) {
            AtomicReference<Throwable> error = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    bobLocks.lock(NAME).acquire(Duration.ofSeconds(30));
                } catch (Throwable t) {
                    error.set(t);
                }
            });
            waiter.start();
            WardenFixture.await("bob is queued", () -> fx.queueSize(NAME) == 2);
            waiter.interrupt();
            waiter.join(10_000);
            assertThat(error.get()).isInstanceOf(WardenClientException.class).hasMessageContaining("interrupted");
            WardenFixture.await("bob's node is gone", () -> fx.queueSize(NAME) == 1);
        }
    }

    @Test
    void readLocks_shareAndExcludeTheWriter() throws Exception {
        FencedReadWriteLock a = aliceLocks.readWriteLock(NAME);
        FencedReadWriteLock b = bobLocks.readWriteLock(NAME);
        try (Hold r1 = a.readLock().acquire(WAIT); Hold r2 = b.readLock().acquire(WAIT)) {
            assertThat(r1.mode()).isEqualTo(LockMode.SHARED);
            assertThat(r2.token()).isGreaterThan(r1.token());
            assertThat(b.writeLock().tryAcquire()).isEmpty();
            assertThat(fx.queue(NAME)).allSatisfy(n -> assertThat(n).contains("-__READ__"));
        }
        try (Hold w = b.writeLock().acquire(WAIT)) {
            assertThat(a.readLock().tryAcquire()).isEmpty();
        }
    }

    @Test
    void release_twice_isSafe_andTheHoldIsUnusableAfter() {
        Hold hold = aliceLocks.lock(NAME).acquire(WAIT);
        hold.release();
        hold.close();
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::token).isInstanceOf(IllegalStateException.class).hasMessageContaining(NAME);
        assertThatThrownBy(hold::checkValid).isInstanceOf(IllegalStateException.class).hasMessageContaining(NAME);
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
    }

    @Test
    void release_fromAnotherThread_deletesTheNode() throws Exception {
        Hold hold = aliceLocks.lock(NAME).acquire(WAIT);
        Thread other = new Thread(hold::release);
        other.start();
        other.join(10_000);
        assertThat(fx.queue(NAME)).isEmpty();
        assertThat(bobLocks.lock(NAME).tryAcquire()).hasValueSatisfying(Hold::release);
    }

    @Test
    void names_areCheckedAsTheGatewayChecksThem() {
        for (String bad : List.of("payments", "Payments/x", "payments/_c_x", "payments/.x", "payments/a b",
                "payments/a/b/c/d/e/f/g/h/i", "payments//x")) {
            assertThatThrownBy(() -> aliceLocks.lock(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(aliceLocks.lock("payments/a/b/c/d/e/f/g/h").name()).isEqualTo("payments/a/b/c/d/e/f/g/h");
        assertThatThrownBy(() -> DirectLocks.of(alice, "warden")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void connectionSuspended_holdIsNotValid_untilReconnected() throws Exception {
        Hold hold = aliceLocks.lock(NAME).acquire(WAIT);
        fx.server.stop();
        WardenFixture.await("the hold is no longer valid", () -> !hold.isValid());
        assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class)
                .hasMessageContaining("SUSPENDED");
        fx.server.restart();
        // The session survived (within its timeout): the node, and so the lock, are still ours.
        WardenFixture.await("the hold is valid again", hold::isValid);
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
        hold.release();
        assertThat(fx.queue(NAME)).isEmpty();
    }

    /**
     * The local deadline is kept fresh by probes while a hold lives: a hold held for several
     * session timeouts on a healthy connection stays valid throughout.
     */
    @Test
    void hold_staysValidForSeveralSessionTimeouts_whileZooKeeperAnswers() throws Exception {
        CuratorFramework shortLived = curator(Duration.ofSeconds(2));
        try (DirectLocks locks = DirectLocks.of(shortLived)) {
            int timeoutMs = shortLived.getZookeeperClient().getZooKeeper().getSessionTimeout();
            Hold hold = locks.lock(NAME).acquire(WAIT);
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3L * timeoutMs);
            while (System.nanoTime() - end < 0) {
                assertThat(hold.isValid()).as("valid %d ms into a %d ms session", 3L * timeoutMs
                        - TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()), timeoutMs).isTrue();
                Thread.sleep(10);
            }
            hold.release();
            assertThat(fx.queue(NAME)).isEmpty();
        } finally {
            shortLived.close();
        }
    }

    @Test
    void sessionLost_completesLost_andReleaseReportsIt() throws Exception {
        CuratorFramework shortLived = curator(Duration.ofSeconds(2));
        try (DirectLocks locks = DirectLocks.of(shortLived)) {
            Hold hold = locks.lock(NAME).acquire(WAIT);
            long token = hold.token();
            shortLived.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
            hold.lost().toCompletableFuture().get(20, TimeUnit.SECONDS);
            assertThat(hold.isValid()).isFalse();
            assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining("lost");
            assertThatThrownBy(hold::release).isInstanceOf(LockOwnershipLostException.class);
            hold.release(); // only the first call reports it
            // The server expires the session and its node; then others get the lock.
            try (Hold next = bobLocks.lock(NAME).acquire(Duration.ofSeconds(20))) {
                assertThat(next.token()).isGreaterThan(token);
            }
        } finally {
            shortLived.close();
        }
    }

    @Test
    void nodeDeletedBySomeoneElse_completesLost() throws Exception {
        Hold hold = aliceLocks.lock(NAME).acquire(WAIT);
        fx.curator.delete().forPath(WardenFixture.lockPath(NAME) + "/" + fx.queue(NAME).get(0));
        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::release).isInstanceOf(LockOwnershipLostException.class);
    }

    /**
     * Not a timing assertion: how long after another client deleted a hold's node {@code lost()} completed (ZooKeeper's
     * watch event on its way to Curator's event thread), for the javadoc and README.
     */
    @Test
    void measure_lostAfterTheNodeWasDeletedElsewhere() throws Exception {
        List<Long> micros = new java.util.ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Hold hold = aliceLocks.lock(NAME).acquire(WAIT);
            CompletableFuture<Long> lostAt = hold.lost().toCompletableFuture().thenApply(v -> System.nanoTime());
            String node = WardenFixture.lockPath(NAME) + "/" + fx.queue(NAME).get(0);
            long before = System.nanoTime();
            fx.curator.delete().forPath(node);
            long after = System.nanoTime();
            micros.add(TimeUnit.NANOSECONDS.toMicros(lostAt.get(10, TimeUnit.SECONDS) - (before + after) / 2));
            try {
                hold.release();
            } catch (LockOwnershipLostException expected) {
                // lost
            }
        }
        micros.sort(null);
        System.out.printf("direct: node deleted elsewhere noticed after (µs, from the middle of the delete): median %d, "
                + "90th %d, max %d%n", micros.get(micros.size() / 2), micros.get(micros.size() * 9 / 10), micros.get(micros.size() - 1));
    }

    @Test
    void close_releasesHolds_andRefusesNewAcquires() throws Exception {
        Hold hold = aliceLocks.lock(NAME).acquire(WAIT);
        aliceLocks.close();
        assertThat(fx.queue(NAME)).isEmpty();
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(() -> aliceLocks.lock(NAME).acquire(WAIT)).isInstanceOf(IllegalStateException.class);
    }
}
