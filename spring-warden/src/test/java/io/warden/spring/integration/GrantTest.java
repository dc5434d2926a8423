package io.warden.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.client.Hold;
import io.warden.client.LockMode;
import io.warden.client.LockOwnershipLostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A grant's TTL, renewal and release without a gateway or a clock: the timer is a list of tasks the test runs itself,
 * the hold a fake that counts its releases. (The same behaviours against a real gateway: WardenLockRegistryTest.)
 */
class GrantTest {
    private final ManualTimer timer = new ManualTimer();
    private final FakeHold hold = new FakeHold();

    @Test
    void ttlRunsOut_releasesTheHoldOnce_andTheOwnersReleaseThrows() {
        Grant grant = new Grant(hold, Duration.ofSeconds(30), timer);
        assertThat(timer.tasks).hasSize(1);
        assertThat(timer.tasks.get(0).delayNanos).isEqualTo(Duration.ofSeconds(30).toNanos());

        timer.tasks.get(0).run();
        assertThat(hold.releases).isEqualTo(1);
        assertThatThrownBy(grant::release).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("jobs/report").hasMessageContaining("token 42")
                .hasMessageContaining("TTL of 30000 ms");
        assertThat(hold.releases).isEqualTo(1);
    }

    @Test
    void renew_schedulesANewExpiry_andAnOldExpiryThatRunsLateDoesNothing() {
        Grant grant = new Grant(hold, Duration.ofSeconds(30), timer);
        TimedTask first = timer.tasks.get(0);
        assertThat(grant.renew(Duration.ofSeconds(10))).isTrue();
        assertThat(first.cancelled).isTrue();
        TimedTask second = timer.tasks.get(1);
        assertThat(second.delayNanos).isEqualTo(Duration.ofSeconds(10).toNanos());

        first.run(); // it had already started when it was cancelled, and got the monitor after the renewal
        assertThat(hold.releases).as("an expiry of before the renewal").isZero();

        grant.release();
        assertThat(hold.releases).isEqualTo(1);
        assertThat(second.cancelled).isTrue();
        second.run();
        assertThat(hold.releases).as("an expiry after the owner's release").isEqualTo(1);
    }

    @Test
    void renew_ofAHoldNoLongerValid_orAfterTheTtlRanOut_fails() {
        Grant grant = new Grant(hold, Duration.ofSeconds(30), timer);
        hold.valid = false;
        assertThat(grant.renew(Duration.ofSeconds(30))).isFalse();
        hold.valid = true;
        timer.tasks.get(0).run();
        assertThat(grant.renew(Duration.ofSeconds(30))).isFalse();
    }

    @Test
    void isOver_onlyOnceItEnded_orItsHoldWasLost_notWhileTheHoldIsMerelyNotValid() {
        Grant expiring = new Grant(hold, Duration.ofSeconds(30), timer);
        hold.valid = false;
        assertThat(expiring.isOver()).as("not valid now, may be valid again").isFalse();
        hold.valid = true;
        timer.tasks.get(0).run();
        assertThat(expiring.isOver()).isTrue();

        FakeHold other = new FakeHold();
        Grant losing = new Grant(other, Duration.ofSeconds(30), timer);
        assertThat(losing.isOver()).isFalse();
        other.lostFuture.complete(null);
        assertThat(losing.isOver()).isTrue();
    }

    @Test
    void release_ofALostHold_throwsConcurrentModification_withTheLossAsCause() {
        Grant grant = new Grant(hold, Duration.ofSeconds(30), timer);
        hold.lostWhy = "its session expired";
        assertThatThrownBy(grant::release).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("jobs/report").hasCauseInstanceOf(LockOwnershipLostException.class);
    }

    @Test
    void release_byAnInterruptedOwner_releasesWithTheFlagCleared_andSetsItAgain() {
        Grant grant = new Grant(hold, Duration.ofSeconds(30), timer);
        Thread.currentThread().interrupt();
        try {
            grant.release();
            assertThat(hold.interruptedDuringRelease).isFalse();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void abandon_releasesTheHold_andTheOwnersReleaseThenThrows() {
        Grant grant = new Grant(hold, Duration.ofSeconds(30), timer);
        grant.abandon();
        assertThat(hold.releases).isEqualTo(1);
        assertThatThrownBy(grant::release).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("registry was closed");
    }

    /** A hold of {@code jobs/report} with token 42 that counts its releases. Used by one test thread. */
    private static final class FakeHold implements Hold {
        int releases;
        boolean valid = true;
        String lostWhy;
        boolean interruptedDuringRelease;
        final CompletableFuture<Void> lostFuture = new CompletableFuture<>();

        @Override
        public String name() {
            return "jobs/report";
        }

        @Override
        public LockMode mode() {
            return LockMode.EXCLUSIVE;
        }

        @Override
        public long token() {
            return 42;
        }

        @Override
        public boolean isValid() {
            return valid && lostWhy == null;
        }

        @Override
        public void checkValid() {
        }

        @Override
        public CompletionStage<Void> lost() {
            return lostFuture;
        }

        @Override
        public void release() {
            interruptedDuringRelease = Thread.currentThread().isInterrupted();
            releases++;
            if (lostWhy != null && releases == 1) {
                throw new LockOwnershipLostException(name(), token(), lostWhy);
            }
        }

        @Override
        public void close() {
            release();
        }
    }

    /** One scheduled task: run by the test when it chooses (whether or not it was cancelled). */
    private static final class TimedTask implements ScheduledFuture<Object> {
        final Runnable task;
        final long delayNanos;
        boolean cancelled;

        TimedTask(Runnable task, long delayNanos) {
            this.task = task;
            this.delayNanos = delayNanos;
        }

        void run() {
            task.run();
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return cancelled;
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }
    }

    /** A timer that only records what is scheduled on it. */
    private static final class ManualTimer extends AbstractExecutorService implements ScheduledExecutorService {
        final List<TimedTask> tasks = new ArrayList<>();

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            TimedTask t = new TimedTask(command, unit.toNanos(delay));
            tasks.add(t);
            return t;
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void shutdown() {
        }

        @Override
        public List<Runnable> shutdownNow() {
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }

        @Override
        public void execute(Runnable command) {
            command.run();
        }
    }
}
