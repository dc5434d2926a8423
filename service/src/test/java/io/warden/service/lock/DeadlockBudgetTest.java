package io.warden.service.lock;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.DeadlockException;
import io.warden.service.api.OnDeadlock;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The wait-for graph costs no ZooKeeper request (docs/decisions/0013): the gateway's own count of ZooKeeper operations
 * (its {@code warden.zk.operation} metric, by operation) over the same steps is the same whether the steps make a cycle
 * or not, apart from the one {@code multi} that removes a victim when a member said FAIL. Each run has a ZooKeeper and
 * a gateway of its own; time is the fixture's manual clock, moved the same way in every run.
 */
class DeadlockBudgetTest {
    private static final long WAIT = 60_000;
    /** 20 steps of this: past the delay and the orphan grace (200 ms + 1 s), with room. */
    private static final Duration STEP = Duration.ofMillis(100);

    /**
     * The gateway's ZooKeeper requests so far, by operation (every caller's request, as metered). {@code removeWatches}
     * is left out: the gateway removes its watches {@code locally()}, on the client, with no request to the server (the
     * victim's call, once answered, drops its watch that way).
     */
    private static Map<String, Long> zkOperations(Gateway g) {
        Map<String, Long> out = new TreeMap<>();
        g.metrics().registry().find("warden.zk.operation").timers().stream()
                .filter(t -> !"removeWatches".equals(t.getId().getTag("op")))
                .forEach(t -> out.merge(t.getId().getTag("op"), t.count(), Long::sum));
        return out;
    }

    private static Map<String, Long> minus(Map<String, Long> after, Map<String, Long> before) {
        Map<String, Long> out = new TreeMap<>();
        after.forEach((op, n) -> {
            long d = n - before.getOrDefault(op, 0L);
            if (d != 0) {
                out.put(op, d);
            }
        });
        return out;
    }

    /**
     * Sessions a, b, c hold x, y, z; a waits for y; b waits for x (a cycle) or for z (a chain to c, who waits for
     * nothing). The graph is computed, the clock moves past the delay and the grace; then one more acquire, whose answer
     * comes after ZooKeeper answered every earlier request of this gateway (one connection, answered in order).
     * Returns the ZooKeeper operations of the gateway from a's wait to that answer.
     */
    private static Map<String, Long> run(boolean cycle, OnDeadlock onDeadlock) throws Exception {
        try (WardenFixture fx = WardenFixture.create()) {
            Gateway g = fx.gateway();
            Warden w = g.warden();
            assertThat(g.watches().awaitReady(Duration.ofSeconds(20))).as("the watch mirror read").isTrue();
            String a = session(w, "a", 600_000);
            String b = session(w, "b", 600_000);
            String c = session(w, "c", 600_000);
            join(w.acquire(exclusive(a, "budget/x", 0)));
            join(w.acquire(exclusive(b, "budget/y", 0)));
            join(w.acquire(exclusive(c, "budget/z", 0)));
            Map<String, Long> before = zkOperations(g);

            CompletableFuture<AcquireResult> aWaits = w.acquire(exclusive(a, "budget/y", WAIT).withOnDeadlock(onDeadlock));
            await("a queued", () -> fx.queueSize("budget/y") == 2);
            String bWaitsOn = cycle ? "budget/x" : "budget/z";
            CompletableFuture<AcquireResult> bWaits = w.acquire(exclusive(b, bWaitsOn, WAIT).withOnDeadlock(OnDeadlock.WAIT));
            await("b queued", () -> fx.queueSize(bWaitsOn) == 2);
            long last = fx.lastZxid();
            await("the graph computed at the last transaction", () -> g.watches().deadlocks().revision() >= last
                    && !g.watches().deadlocks().stale());
            assertThat(g.watches().deadlocks().deadlocks()).hasSize(cycle ? 1 : 0);

            // Past the delay and the grace, in steps: each step's timers (a session vouching probe sends a sync, and
            // skips it while one is in flight) are followed by a fence, so every run sends the same probes.
            for (int step = 0; step < 20; step++) {
                fx.clock.advance(STEP);
                fence(w, c, "budget/step-" + step);
            }
            if (cycle && onDeadlock == OnDeadlock.FAIL) {
                CompletionException failed = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
                        () -> aWaits.orTimeout(10, TimeUnit.SECONDS).join());
                assertThat(failed.getCause()).isInstanceOf(DeadlockException.class);
                await("the cycle gone from the graph", () -> g.watches().deadlocks().deadlocks().isEmpty());
            } else {
                assertThat(aWaits).isNotDone();
            }
            assertThat(bWaits).isNotDone();

            fence(w, c, "budget/fence");
            return minus(zkOperations(g), before);
        }
    }

    /**
     * An acquire of a free name: its answer comes after ZooKeeper answered every request this gateway sent before it
     * (one connection, answered in order), so the counts read after it are complete.
     */
    private static void fence(Warden w, String session, String name) {
        AcquireRequest fence = exclusive(session, name, 0);
        assertThat(join(w.acquire(fence)).status()).isEqualTo(AcquireResult.Status.GRANTED);
    }

    @Test
    void aCycleThatPersists_costsTheSameZooKeeperOperationsAsTheSameStepsWithoutIt() throws Exception {
        Map<String, Long> withoutCycle = run(false, OnDeadlock.WAIT);
        Map<String, Long> withCycle = run(true, OnDeadlock.WAIT);

        assertThat(withoutCycle).as("the steps do cost something: the counter is live").isNotEmpty();
        assertThat(withCycle).isEqualTo(withoutCycle);
    }

    @Test
    void aCycleWithAFailMember_costsExactlyOneMultiMore_theActingOne() throws Exception {
        Map<String, Long> withoutCycle = run(false, OnDeadlock.FAIL);
        Map<String, Long> withCycle = run(true, OnDeadlock.FAIL);

        Map<String, Long> expected = new TreeMap<>(withoutCycle);
        expected.merge("multi", 1L, Long::sum);
        assertThat(withCycle).isEqualTo(expected);
    }
}
