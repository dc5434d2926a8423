package io.warden.service.session;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.CloseResult;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.SessionGrant;
import io.warden.service.api.SessionView;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Sessions, TTLs on the injected clock, expiry, lock-delay, takeover and adoption (contract §2.3, §2.9, §2.10). */
class SessionTest {
    private WardenFixture fx;
    private Gateway gw;
    private Warden w;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gw = fx.gateway();
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private boolean exists(String sessionId) {
        try {
            return fx.curator.checkExists().forPath(CellPaths.session(sessionId)) != null;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void open_clampsTheTtlToTheConfiguredRange_andSaysWhatWasGranted() {
        SessionGrant low = w.openSession("c", 1, 0).join();
        SessionGrant high = w.openSession("c", 10_000_000, 0).join();
        SessionGrant mid = w.openSession("c", 15_000, 250).join();
        assertThat(low.ttlMs()).isEqualTo(2_000);
        assertThat(high.ttlMs()).isEqualTo(120_000);
        assertThat(mid.ttlMs()).isEqualTo(15_000);
        assertThat(mid.keepaliveIntervalMs()).isEqualTo(5_000);
        assertThat(mid.sessionId()).matches("[0-9a-f]{32}");
        assertThat(mid.lockDelayMs()).isEqualTo(250);
    }

    @Test
    void expiry_neverBeforeTheTtl_thenReleasesHoldsAndPromotesWaiters() {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "pay/e", 0)));
        CompletableFuture<AcquireResult> waiter = w.acquire(exclusive(b, "pay/e", 60_000));
        await("waiting", () -> gw.pendingAcquires() == 1);

        fx.clock.advance(Duration.ofMillis(9_999));
        assertThat(exists(a)).as("not expired one ms before its TTL").isTrue();
        assertThat(waiter).isNotDone();

        fx.clock.advance(Duration.ofMillis(1));
        await("expired", () -> !exists(a));
        AcquireResult promoted = join(waiter);
        assertThat(promoted.status()).isEqualTo(Status.GRANTED);
        assertThat(promoted.token()).isGreaterThan(held.token());
        assertThatThrownBy(() -> w.keepalive(a, null).join())
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
    }

    @Test
    void aShortenedTtl_expiresTheSessionAtTheNewDeadline_notTheOldOne() {
        String a = session(w, "a", 60_000);
        fx.clock.advance(Duration.ofMillis(1_000));
        assertThat(w.keepalive(a, 2_000L).join()).isEqualTo(2_000);

        fx.clock.advance(Duration.ofMillis(1_999));
        assertThat(exists(a)).as("not expired before its new TTL").isTrue();
        assertThat(w.session(a).join().ttlMsRemaining()).isEqualTo(1);
        fx.clock.advance(Duration.ofMillis(1));
        await("expired at the new TTL, not 60 s after the last keepalive", () -> !exists(a));
    }

    @Test
    void keepalive_resetsTheTtl_withoutWritingToZooKeeper() throws Exception {
        String a = session(w, "a", 10_000);
        int version = fx.curator.checkExists().forPath(CellPaths.session(a)).getVersion();
        for (int i = 0; i < 5; i++) {
            fx.clock.advance(Duration.ofMillis(8_000));
            assertThat(w.keepalive(a, null).join()).isEqualTo(10_000);
        }
        assertThat(exists(a)).isTrue();
        assertThat(fx.curator.checkExists().forPath(CellPaths.session(a)).getVersion()).as("heartbeats never write").isEqualTo(version);
        fx.clock.advance(Duration.ofMillis(10_000));
        await("expired", () -> !exists(a));
    }

    @Test
    void expiry_whileWaiting_answersTheHeldCallWithSessionNotFound_andRemovesTheRequest() throws Exception {
        String a = session(w, "a", 60_000);
        String b = session(w, "b", 5_000);
        join(w.acquire(exclusive(a, "pay/q", 0)));
        CompletableFuture<AcquireResult> waiter = w.acquire(exclusive(b, "pay/q", 60_000));
        await("waiting", () -> gw.pendingAcquires() == 1);

        fx.clock.advance(Duration.ofMillis(5_000));

        assertThatThrownBy(() -> join(waiter)).satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
        assertThat(fx.queue("pay/q")).hasSize(1);
    }

    @Test
    void lockDelay_keepsTheHoldBlockingAfterExpiry_notAfterACleanClose() {
        String a = w.openSession("a", 5_000, 3_000).join().sessionId();
        String b = session(w, "b", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "pay/ld", 0)));

        fx.clock.advance(Duration.ofMillis(5_000));
        await("expired", () -> !exists(a));
        LockView view = w.lock(LockName.parse("pay/ld")).join();
        assertThat(view.holders()).singleElement().satisfies(h -> {
            assertThat(h.token()).isEqualTo(held.token());
            assertThat(h.expired()).isTrue();
        });
        assertThat(join(w.acquire(exclusive(b, "pay/ld", 0))).status()).isEqualTo(Status.TIMED_OUT);

        fx.clock.advance(Duration.ofMillis(3_000));
        await("lock-delay over", () -> fx.queueSize("pay/ld") == 0);
        assertThat(join(w.acquire(exclusive(b, "pay/ld", 0))).status()).isEqualTo(Status.GRANTED);

        String c = w.openSession("c", 5_000, 3_000).join().sessionId();
        join(w.acquire(exclusive(c, "pay/ld2", 0)));
        CloseResult closed = w.closeSession(c).join();
        assertThat(closed.released()).containsExactly("pay/ld2");
        assertThat(w.lock(LockName.parse("pay/ld2")).join().mode()).as("no lock-delay on a clean close").isEqualTo(LockView.LockMode.FREE);
    }

    @Test
    void close_releasesHoldsAndCancelsWaits_andTheSessionIsGone() {
        String a = session(w, "a", 60_000);
        String b = session(w, "b", 60_000);
        join(w.acquire(exclusive(a, "pay/c1", 0)));
        join(w.acquire(exclusive(b, "pay/c2", 0)));
        CompletableFuture<AcquireResult> waiting = w.acquire(exclusive(a, "pay/c2", 60_000));
        await("waiting", () -> gw.pendingAcquires() == 1);

        SessionView view = w.session(a).join();
        assertThat(view.holds()).extracting(SessionView.Hold::name).containsExactly("pay/c1");
        assertThat(view.waiting()).extracting(SessionView.Wait::name).containsExactly("pay/c2");

        CloseResult closed = w.closeSession(a).join();
        assertThat(closed.released()).containsExactly("pay/c1");
        assertThat(closed.cancelled()).containsExactly("pay/c2");
        assertThatThrownBy(() -> join(waiting)).satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
        assertThat(exists(a)).isFalse();
        assertThatThrownBy(() -> w.session(a).join()).satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
    }

    @Test
    void keepaliveAtAnotherGateway_takesTheSessionOver_andTheFirstStopsTracking() {
        Gateway other = fx.gateway();
        String a = session(w, "a", 10_000);
        join(w.acquire(exclusive(a, "pay/t", 0)));
        assertThat(gw.tracksSession(a)).isTrue();

        assertThat(other.warden().keepalive(a, null).join()).isEqualTo(10_000);

        assertThat(other.tracksSession(a)).isTrue();
        await("first gateway lets go", () -> !gw.tracksSession(a));
        fx.clock.advance(Duration.ofMillis(8_000));
        other.warden().keepalive(a, null).join();
        fx.clock.advance(Duration.ofMillis(8_000));
        assertThat(exists(a)).as("kept alive at the new gateway past the first TTL").isTrue();
        assertThat(w.session(a).join().holds()).hasSize(1);
    }

    @Test
    void adoption_aVanishedGatewaysSessionsAreAdoptedWithAFreshTtl_keepingEveryHold() {
        Gateway survivor = fx.gateway();
        await("a leader", () -> gw.isLeader() || survivor.isLeader());
        Gateway doomed = gw.isLeader() ? survivor : gw;
        Gateway leader = doomed == gw ? survivor : gw;
        String a = session(doomed.warden(), "a", 10_000);
        AcquireResult held = join(doomed.warden().acquire(exclusive(a, "pay/adopt", 0)));

        doomed.close();

        await("adopted", () -> leader.tracksSession(a));
        // TTL + B (B = half the ZooKeeper session timeout: 2 s here): the vanished gateway may have acknowledged a
        // keepalive up to B before it could no longer vouch.
        fx.clock.advance(Duration.ofMillis(11_999));
        assertThat(exists(a)).isTrue();
        assertThat(leader.warden().check(LockName.parse("pay/adopt"), held.token()).join().current()).isTrue();
        fx.clock.advance(Duration.ofMillis(1));
        await("expired by the adopter when nobody keeps it alive", () -> !exists(a));
    }

    @Test
    void noQuorum_answersUnavailableQuickly_andRecovers() throws Exception {
        String a = session(w, "a", 60_000);
        fx.server.stop();
        await("disconnected", () -> !w.ready());
        long start = System.nanoTime();
        assertThatThrownBy(() -> w.acquire(exclusive(a, "pay/u", 0)).join())
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.UNAVAILABLE));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
        assertThatThrownBy(() -> w.keepalive(a, null).join()).as("no keepalive acknowledged without ZooKeeper (§2.3)")
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.UNAVAILABLE));

        fx.server.restart();
        await("reconnected", w::ready);
        assertThat(join(w.acquire(exclusive(a, "pay/u", 0))).status()).isEqualTo(Status.GRANTED);
    }

    @Test
    void restartUnderTheSameGatewayId_takesBackTheSessionsOfItsEarlierRun() throws Exception {
        String id = "0123456789abcdef0123456789abcdef";
        fx.curator.create().forPath(CellPaths.session(id),
                "{\"client_id\":\"old\",\"ttl_ms\":10000,\"lock_delay_ms\":0,\"gateway\":\"gw-fixed\"}".getBytes());

        Gateway again = fx.gateway(fx.config().toBuilder().gatewayId("gw-fixed").build());

        // Without taking it back nobody would track it: the leader sees a live gateway of that id. (The leader may
        // still race to adopt it while gw-fixed registers; either way exactly one gateway ends up tracking it.)
        await("tracked", () -> again.tracksSession(id) != gw.tracksSession(id));
        fx.clock.advance(Duration.ofMillis(12_000)); // TTL + B
        await("expired by its tracker", () -> !exists(id));
    }
}
