package io.warden.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.client.WardenClient;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a ShedLock provider test kit checks (ShedLock publishes none; these follow its own
 * {@code AbstractLockProviderIntegrationTest} and {@code AbstractExtensibleLockProviderIntegrationTest}), against a
 * real gateway on a real ZooKeeper. Two nodes, each a client with its own session and provider; every test uses fresh
 * lock names, so the cell is shared by the class.
 */
class WardenLockProviderTest {
    private static WardenCell cell;
    private static WardenClient nodeA;
    private static WardenClient nodeB;
    private static WardenLockProvider a;
    private static WardenLockProvider b;

    private String name;

    @BeforeAll
    static void startCell() {
        cell = new WardenCell();
        nodeA = cell.client("node-a", Duration.ofSeconds(5));
        nodeB = cell.client("node-b", Duration.ofSeconds(5));
        a = new WardenLockProvider(nodeA);
        b = new WardenLockProvider(nodeB);
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

    static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    static LockConfiguration config(String name) {
        return config(name, Duration.ofMinutes(5), Duration.ZERO);
    }

    private String warden(String shedLockName) {
        return a.wardenName(shedLockName);
    }

    private void assertLockedBy(WardenClient node, String shedLockName) {
        assertThat(cell.holderSession(warden(shedLockName))).as("holder of %s", shedLockName).isEqualTo(node.sessionId());
    }

    private void assertUnlocked(String shedLockName) {
        assertThat(cell.holders(warden(shedLockName))).as("holders of %s", shedLockName).isZero();
    }

    @Test
    void lock_thenUnlock_holdsTheWardenLockThenFreesIt() {
        Optional<SimpleLock> lock = a.lock(config(name));
        assertThat(lock).isPresent();
        assertThat(warden(name)).isEqualTo("shedlock/" + name);
        assertLockedBy(nodeA, name);

        lock.get().unlock();

        assertUnlocked(name);
    }

    @Test
    void lock_heldElsewhere_isEmpty_onEveryNode() {
        SimpleLock lock = a.lock(config(name)).orElseThrow();

        assertThat(b.lock(config(name))).as("another node").isEmpty();
        assertThat(a.lock(config(name))).as("the same node").isEmpty();
        assertLockedBy(nodeA, name);

        lock.unlock();
    }

    @Test
    void independentNames_areLockedTogether() {
        SimpleLock first = a.lock(config(name)).orElseThrow();
        SimpleLock second = a.lock(config(name + "-2")).orElseThrow();
        SimpleLock third = b.lock(config(name + "-3")).orElseThrow();

        assertLockedBy(nodeA, name);
        assertLockedBy(nodeA, name + "-2");
        assertLockedBy(nodeB, name + "-3");
        first.unlock();
        second.unlock();
        third.unlock();
    }

    @Test
    void relock_rightAfterUnlock_succeeds_everyTime() {
        for (int i = 0; i < 10; i++) {
            Optional<SimpleLock> lock = (i % 2 == 0 ? a : b).lock(config(name));
            assertThat(lock).as("round %d", i).isPresent();
            assertThat((i % 2 == 0 ? b : a).lock(config(name))).as("round %d, the other node", i).isEmpty();
            lock.get().unlock();
        }
    }

    @Test
    void lockAtMostFor_endsTheHold_withoutUnlock() {
        long start = System.nanoTime();
        SimpleLock lock = a.lock(config(name, Duration.ofMillis(400), Duration.ZERO)).orElseThrow();
        long token = a.holdOf(name).orElseThrow().token();
        assertThat(b.lock(config(name))).as("held at first").isEmpty();

        WardenCell.await("lockAtMostFor released the hold", () -> cell.holders(warden(name)) == 0);
        long heldMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(heldMs).as("held for lockAtMostFor").isGreaterThanOrEqualTo(400);
        assertThat(a.holdOf(name)).as("the provider forgot it").isEmpty();
        SimpleLock next = b.lock(config(name)).orElseThrow();
        assertThat(b.holdOf(name).orElseThrow().token()).isGreaterThan(token);
        next.unlock();
        lock.unlock(); // stale: does nothing, throws nothing
    }

    @Test
    void lockAtLeastFor_keepsTheHoldAfterAnEarlyUnlock_untilItPasses() {
        long start = System.nanoTime();
        SimpleLock lock = a.lock(config(name, Duration.ofSeconds(20), Duration.ofMillis(1500))).orElseThrow();

        lock.unlock();

        assertThat(b.lock(config(name))).as("still held after the unlock").isEmpty();
        assertLockedBy(nodeA, name);
        SimpleLock[] next = new SimpleLock[1];
        WardenCell.await("the other node gets the lock", () -> (next[0] = b.lock(config(name)).orElse(null)) != null);
        long freeAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(freeAfterMs).as("kept for lockAtLeastFor").isGreaterThanOrEqualTo(1500);
        next[0].unlock();
    }

    @Test
    void unlock_afterLockAtLeastFor_releasesAtOnce() {
        SimpleLock lock = a.lock(config(name, Duration.ofSeconds(20), Duration.ofMillis(100))).orElseThrow();
        sleep(200);

        lock.unlock();

        assertUnlocked(name);
    }

    @Test
    void extend_keepsTheHold_pastTheFirstLockAtMostFor() {
        SimpleLock lock = a.lock(config(name, Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
        long token = a.holdOf(name).orElseThrow().token();

        SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        SimpleLock again = extended.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        sleep(1500);

        assertLockedBy(nodeA, name);
        assertThat(a.holdOf(name).orElseThrow().token()).as("the same hold").isEqualTo(token);
        again.unlock();
        assertUnlocked(name);
    }

    @Test
    void extend_withLockAtLeastFor_keepsTheHoldAfterUnlock() {
        SimpleLock lock = a.lock(config(name, Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();

        SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)).orElseThrow();
        extended.unlock();

        assertLockedBy(nodeA, name);
        assertThat(b.lock(config(name))).isEmpty();
    }

    @Test
    void aLock_isUsedOnce_asShedLockExpects() {
        SimpleLock unlocked = a.lock(config(name, Duration.ofSeconds(2), Duration.ZERO)).orElseThrow();
        unlocked.unlock();
        assertUnlocked(name);
        assertThatThrownBy(() -> unlocked.extend(Duration.ofSeconds(10), Duration.ZERO))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(name);
        assertThatThrownBy(unlocked::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining(name);

        SimpleLock extendedOnce = a.lock(config(name, Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        SimpleLock current = extendedOnce.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        assertThatThrownBy(() -> extendedOnce.extend(Duration.ofSeconds(10), Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(extendedOnce::unlock).isInstanceOf(IllegalStateException.class);
        assertLockedBy(nodeA, name);
        current.unlock();
        assertUnlocked(name);
    }

    @Test
    void staleLock_cannotBeExtended_evenBeforeTheTimerReleasedIt() {
        SimpleLock lock = a.lock(config(name, Duration.ofMillis(2), Duration.ZERO)).orElseThrow();
        sleep(4);

        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();

        WardenCell.await("the stale hold is released", () -> cell.holders(warden(name)) == 0);
    }

    @Test
    void staleLock_unlock_leavesTheNextHolderAlone() {
        SimpleLock stale = a.lock(config(name, Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
        WardenCell.await("lockAtMostFor released the hold", () -> cell.holders(warden(name)) == 0);
        SimpleLock next = b.lock(config(name)).orElseThrow();
        long nextToken = b.holdOf(name).orElseThrow().token();

        stale.unlock();

        assertLockedBy(nodeB, name);
        assertThat(cell.lock(warden(name)).path("holders").get(0).path("token").asLong()).isEqualTo(nextToken);
        assertThat(a.lock(config(name))).isEmpty();
        next.unlock();
    }

    @Test
    void staleLock_extend_isEmpty_andLeavesTheNextHolderAlone() {
        SimpleLock stale = a.lock(config(name, Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
        WardenCell.await("lockAtMostFor released the hold", () -> cell.holders(warden(name)) == 0);
        SimpleLock next = b.lock(config(name)).orElseThrow();

        assertThat(stale.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();

        assertLockedBy(nodeB, name);
        next.unlock();
    }

    @Test
    void close_releasesEveryHold_alsoThoseKeptForLockAtLeastFor() {
        WardenClient node = cell.client("node-c", Duration.ofSeconds(5));
        WardenLockProvider provider = new WardenLockProvider(node);
        SimpleLock running = provider.lock(config(name)).orElseThrow();
        provider.lock(config(name + "-2", Duration.ofSeconds(20), Duration.ofSeconds(15))).orElseThrow().unlock();
        assertLockedBy(node, name + "-2");

        provider.close();

        assertUnlocked(name);
        assertUnlocked(name + "-2");
        assertThatThrownBy(() -> provider.lock(config(name))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        running.unlock(); // after close: nothing left to release, nothing thrown
    }

    @Test
    void badNames_areRefused_namingThem() {
        assertThatThrownBy(() -> a.lock(config("nightly report"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'nightly report'");
        assertThatThrownBy(() -> a.lock(config("_hidden"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'_hidden'");
        assertThatThrownBy(() -> new WardenLockProvider(nodeA, "Jobs")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("namespace 'Jobs'");
        try (WardenLockProvider batch = new WardenLockProvider(nodeA, "batch")) {
            assertThat(batch.wardenName("reports/nightly")).isEqualTo("batch/reports/nightly");
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
