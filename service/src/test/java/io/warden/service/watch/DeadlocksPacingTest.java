package io.warden.service.watch;

import static io.warden.service.support.WardenFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.time.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The wait-for graph's share of the watch hub's thread: after a computation that took {@code d}, the next one starts no
 * sooner than {@code PAUSE_PER_COMPUTE_TIME × d} after it ended, however often the mirror changes. A computation takes
 * 100 ms more than it does here on the injected cost ticker (real time plus what the computation adds, no sleep); the
 * pause is real time on the hub's executor, which never runs a task early, so the bound is checked as an inequality of
 * the real times the computations ran.
 */
class DeadlocksPacingTest {
    private static final long COMPUTE = TimeUnit.MILLISECONDS.toNanos(100);

    private final ScheduledExecutorService hub = Executors.newSingleThreadScheduledExecutor();
    /** What the computations added to real time on the cost ticker. */
    private final AtomicLong added = new AtomicLong();
    /** Real times (System.nanoTime) at which each computation began and ended. */
    private final List<long[]> runs = new CopyOnWriteArrayList<>();
    private final Deadlocks deadlocks = new Deadlocks(hub, new ManualClock(), new LockMirror(), locks -> {
        long began = System.nanoTime();
        added.addAndGet(COMPUTE);
        runs.add(new long[] {began, System.nanoTime()});
        return DeadlockGraph.Result.NONE;
    }, () -> System.nanoTime() + added.get());

    @AfterEach
    void stop() {
        hub.shutdownNow();
    }

    @Test
    void aComputationThatTook100ms_isFollowedByAtLeast400msWithoutOne_thenTheNextRuns() {
        hub.execute(() -> deadlocks.changed(1));
        await("the first computation", () -> deadlocks.computations() == 1);

        hub.execute(() -> deadlocks.changed(2)); // the mirror changed again at once
        await("the next computation once the pause is over", () -> deadlocks.computations() == 2);

        long pause = runs.get(1)[0] - runs.get(0)[1];
        assertThat(pause).as("real time between the end of one computation and the start of the next")
                .isGreaterThanOrEqualTo(Deadlocks.PAUSE_PER_COMPUTE_TIME * COMPUTE);
    }

    @Test
    void withNoChangeSinceTheLastComputation_thePauseEndsWithNoComputation() throws Exception {
        hub.execute(() -> deadlocks.changed(1));
        await("the first computation", () -> deadlocks.computations() == 1);

        // A task the hub runs after the pause and the interval are over: whatever was due then has run.
        hub.schedule(() -> { }, Deadlocks.PAUSE_PER_COMPUTE_TIME * COMPUTE + Duration.ofMillis(100).toNanos(),
                TimeUnit.NANOSECONDS).get();

        assertThat(deadlocks.computations()).isEqualTo(1);
    }
}
