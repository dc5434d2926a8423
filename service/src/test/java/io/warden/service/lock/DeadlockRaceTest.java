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
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnDeadlock;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.support.DelayLink;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * What keeps a deadlock's breaking safe when gateways disagree (docs/decisions/0013): the one conditional {@code multi}.
 * A gateway that hears of changes late (its link to ZooKeeper delays what comes back: its mirror is stale, its
 * requests are not) acts on a cycle that is already gone, and writes nothing; two gateways that act on one cycle at once
 * remove its victim exactly once.
 */
class DeadlockRaceTest {
    private static final long WAIT = 60_000;
    /** Past the delay and the grace a gateway that does not hold the victim's call waits (1 s). */
    private static final Duration PAST_GRACE = Gateway.DEADLOCK_DELAY.plus(Duration.ofMillis(1_100));
    /** How late the delayed links bring ZooKeeper's answers and notifications back. */
    private static final Duration LATE = Duration.ofSeconds(2);

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    /** The gateway's {@code multi}s that ZooKeeper answered {@code ok} (or, with {@code ok} false, refused). */
    private static double multis(Gateway g, boolean ok) {
        return g.metrics().registry().find("warden.zk.operation").tag("op", "multi").timers().stream()
                .filter(t -> "ok".equals(t.getId().getTag("result")) == ok).mapToDouble(t -> t.count()).sum();
    }

    private static void awaitCycle(Gateway g, boolean present) {
        try {
            await("gateway " + g.gatewayId() + (present ? " shows the cycle" : " shows no cycle"), Duration.ofSeconds(20),
                    () -> g.watches().deadlocks().deadlocks().size() == (present ? 1 : 0));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; its report: " + g.watches().deadlocks(), e);
        }
    }

    @Test
    void aGatewayWithAStaleMirror_actsOnACycleThatIsGone_andItsMultiWritesNothing() throws Exception {
        Gateway g1 = fx.gateway();
        try (DelayLink link = new DelayLink(fx.server.getPort(), Duration.ZERO, Duration.ZERO)) {
            Gateway g2 = fx.gateway(fx.config().withZkConnect(link.connectString()));
            try {
                Warden w = g1.warden();
                String a = session(w, "a", 600_000);
                String b = session(w, "b", 600_000);
                long ax = join(w.acquire(exclusive(a, "dl/x", 0))).token();
                join(w.acquire(exclusive(b, "dl/y", 0)));
                CompletableFuture<AcquireResult> aWaits = w.acquire(exclusive(a, "dl/y", WAIT));
                await("a queued", () -> fx.queueSize("dl/y") == 2);
                // b's call is held on g1; g2 does not hold it, so g2 acts on its own after the grace.
                CompletableFuture<AcquireResult> bWaits = w.acquire(exclusive(b, "dl/x", WAIT).withOnDeadlock(OnDeadlock.FAIL));
                awaitCycle(g1, true);
                awaitCycle(g2, true);

                link.delay(Duration.ZERO, LATE); // g2 hears of what follows late: its mirror keeps the cycle
                assertThat(w.release(a, LockName.parse("dl/x"), ax).join()).isTrue(); // the cycle is gone
                AcquireResult granted = join(bWaits);
                assertThat(granted.status()).isEqualTo(AcquireResult.Status.GRANTED);
                awaitCycle(g1, false);
                assertThat(g2.watches().deadlocks().deadlocks()).as("g2's stale mirror still has it").hasSize(1);

                double refusedBefore = multis(g2, false);
                double committedBefore = multis(g2, true);
                fx.clock.advance(PAST_GRACE); // g2 acts on what it sees
                await("g2's multi answered", Duration.ofSeconds(20), () -> multis(g2, false) > refusedBefore);
                assertThat(multis(g2, true)).as("g2 committed nothing").isEqualTo(committedBefore);

                // Nothing was written: b holds x (its grant stands), a still waits for y behind b.
                assertThat(fx.queueSize("dl/x")).isEqualTo(1);
                assertThat(fx.queueSize("dl/y")).isEqualTo(2);
                assertThat(aWaits).isNotDone();
                assertThat(w.release(b, LockName.parse("dl/x"), granted.token()).join()).isTrue();
                link.delay(Duration.ZERO, Duration.ZERO);
                awaitCycle(g2, false);
            } finally {
                g2.close(); // before the link goes, or it waits out its ZooKeeper session
            }
        }
    }

    @Test
    void twoGatewaysActingOnOneCycleAtOnce_removeItsVictimExactlyOnce() throws Exception {
        try (DelayLink link1 = new DelayLink(fx.server.getPort(), Duration.ZERO, Duration.ZERO);
             DelayLink link2 = new DelayLink(fx.server.getPort(), Duration.ZERO, Duration.ZERO)) {
            Gateway g1 = fx.gateway(fx.config().withZkConnect(link1.connectString()));
            Gateway g2 = fx.gateway(fx.config().withZkConnect(link2.connectString()));
            try {
                Warden w1 = g1.warden();
                Warden w2 = g2.warden();
                String a = session(w1, "a", 600_000);
                String b = session(w2, "b", 600_000);
                join(w1.acquire(exclusive(a, "dl/x", 0)));
                join(w2.acquire(exclusive(b, "dl/y", 0)));
                CompletableFuture<AcquireResult> aWaits = w1.acquire(exclusive(a, "dl/y", WAIT));
                await("a queued", () -> fx.queueSize("dl/y") == 2);
                // b's call: KEEP with a short wait, so it answers QUEUED and is held nowhere: both gateways act on it.
                AcquireRequest bRequest = new AcquireRequest(b, LockName.parse("dl/x"), Mode.EXCLUSIVE, 100,
                        UUID.randomUUID().toString(), OnTimeout.KEEP, true, 0, OnDeadlock.FAIL);
                CompletableFuture<AcquireResult> bCall = w2.acquire(bRequest);
                await("b's call held, its timer set", () -> g2.pendingAcquires() == 1);
                fx.clock.advance(Duration.ofMillis(150));
                assertThat(join(bCall).status()).isEqualTo(AcquireResult.Status.QUEUED);
                awaitCycle(g1, true);
                awaitCycle(g2, true);

                // Neither hears of the other's multi before it sends its own: both act, ZooKeeper orders them.
                link1.delay(Duration.ZERO, LATE);
                link2.delay(Duration.ZERO, LATE);
                double ok = multis(g1, true) + multis(g2, true);
                double refused = multis(g1, false) + multis(g2, false);
                fx.clock.advance(PAST_GRACE);
                await("both gateways' multis answered", Duration.ofSeconds(20),
                        () -> multis(g1, true) + multis(g2, true) + multis(g1, false) + multis(g2, false) - ok - refused == 2);
                assertThat(multis(g1, true) + multis(g2, true) - ok).as("multis committed").isEqualTo(1);
                assertThat(multis(g1, false) + multis(g2, false) - refused).as("multis refused").isEqualTo(1);

                link1.delay(Duration.ZERO, Duration.ZERO);
                link2.delay(Duration.ZERO, Duration.ZERO);
                assertThat(fx.queueSize("dl/x")).as("only b's waiting entry went").isEqualTo(1);
                assertThat(fx.queueSize("dl/y")).isEqualTo(2);
                assertThat(aWaits).isNotDone();
                for (Warden w : java.util.List.of(w1, w2)) {
                    try {
                        w.acquire(bRequest).join();
                        throw new AssertionError("the victim's repeat was answered");
                    } catch (CompletionException e) {
                        assertThat(e.getCause()).isInstanceOf(DeadlockException.class);
                    }
                }
            } finally {
                g1.close();
                g2.close();
            }
        }
    }
}
