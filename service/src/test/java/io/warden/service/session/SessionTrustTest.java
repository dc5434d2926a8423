package io.warden.service.session;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.WardenException;
import io.warden.service.config.WardenConfig;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import io.warden.service.support.ZkCutProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sessions under contract §2.3: one-sided partitions, lost replies and races.
 * Each test failed on the engine before its fix; the story is in its comment. Faults are real: a TCP proxy between one
 * gateway and ZooKeeper that black-holes, partitions or drops replies ({@link ZkCutProxy}), and ZooKeeper session
 * expiry injected into a gateway's own client. Time is the fixture's manual clock.
 */
class SessionTrustTest {
    private static final long TTL = 10_000;
    private WardenFixture fx;
    private ZkCutProxy proxy;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        proxy = new ZkCutProxy(fx.server.getPort());
    }

    @AfterEach
    void tearDown() throws Exception {
        proxy.heal(); // so a black-holed gateway's ZooKeeper client can say goodbye instead of timing out
        fx.close();
        proxy.close();
    }

    private boolean exists(String sessionId) {
        try {
            return fx.curator.checkExists().forPath(CellPaths.session(sessionId)) != null;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private WardenConfig viaProxy(WardenConfig c) {
        return c.withZkConnect(proxy.connectString());
    }

    private static void settle() {
        try {
            Thread.sleep(100); // lets ZooKeeper I/O started by a clock step finish; time itself is the manual clock's
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Found by the proof suite (ProofSoakIT, seed 20261202, ten minutes of every nemesis). A session expired
     * while its client still held a lock; ten seconds later the client's release reached the gateway that had granted
     * it, whose hint named the queue node, so the release went straight to its multi. That multi's connection dropped
     * (a fault elsewhere) and Curator sent it again; the second attempt's NONODE was taken for the first attempt's
     * success ("we saw the node a moment ago"), and the release answered released:true for a grant the expiry had
     * ended long before. Only the request's own tombstone says that a release removed the node.
     */
    @Test
    void aReleaseSentAgainAfterAConnectionLoss_ofAGrantEndedElsewhere_isNotReported_released() {
        Gateway g1 = fx.gateway(viaProxy(fx.config()));
        Gateway g2 = fx.gateway();
        String s = session(g1.warden(), "alice", TTL);
        AcquireResult held = join(g1.warden().acquire(exclusive(s, "release/lost", 0)));
        assertThat(held.status()).isEqualTo(Status.GRANTED);
        // the session ends at another gateway (as its expiry there would), removing the grant with it
        g2.warden().closeSession(s).join();
        assertThat(exists(s)).isFalse();

        proxy.cutAfterNext(ZkCutProxy.MULTI, 1, s);
        Boolean released;
        try {
            released = g1.warden().release(s, LockName.parse("release/lost"), held.token()).join();
        } catch (java.util.concurrent.CompletionException e) {
            assertThat(code(e)).as("a release of a gone session").isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND);
            released = false;
        }
        assertThat(proxy.hasCut()).as("the release's multi lost its connection").isTrue();
        assertThat(released).as("released, for a grant the session's end had removed").isFalse();
    }

    /**
     * Found by the proof suite (JepsenIT, random seed 4167334835, a ZooKeeper leader isolated while clients
     * kept their sessions alive through a load balancer). G1's expiry of a session started just as G2 took it over, so
     * it failed on the record's version; before it re-read the record, a keepalive at G1 took the session back, under
     * a new tracking with a fresh TTL + B. The re-read found G1 named as the owner, took the new version and expired
     * the session 0.2 s after acknowledging that keepalive: 2.3 s before its TTL could have run out. An expiry belongs
     * to the tracking it started in; once that ended, the tracking that replaced it decides.
     */
    @Test
    void aStaleExpiry_ofATrackingThatEnded_neverExpiresTheSessionTakenBackUnderANewOne() throws Exception {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        String s = session(g1.warden(), "alice", TTL);
        Tracker tracker = g1.sessionManager().tracker();
        TrackedSession stale = tracker.get(s);
        assertThat(stale).isNotNull();

        assertThat(g2.warden().keepalive(s, null).join()).as("G2 takes the session over").isEqualTo(TTL);
        await("G1 notices the takeover", () -> tracker.get(s) == null);
        assertThat(g1.warden().keepalive(s, null).join()).as("G1 takes it back").isEqualTo(TTL);
        TrackedSession fresh = tracker.get(s);
        assertThat(fresh).isNotNull().isNotSameAs(stale);

        // The stale tracking's expiry, as if it had been under way all along (its version is the one before G2's).
        CompletableFuture<Boolean> expiring = new CompletableFuture<>();
        synchronized (stale) {
            stale.expiring = expiring;
        }
        tracker.expiry().run(stale);
        assertThat(expiring.get(10, TimeUnit.SECONDS)).as("the stale expiry expired the session").isFalse();

        assertThat(exists(s)).as("the session G1 took back with a fresh TTL").isTrue();
        assertThat(tracker.get(s)).isSameAs(fresh);
        assertThat(g1.warden().keepalive(s, null).join()).isEqualTo(TTL);
    }

    /**
     * G1 tracks the session and is then cut off from ZooKeeper (black-holed: its sockets stay open, so for
     * a while it does not know). One keepalive lands at G2, which takes the session over. Later keepalives go to G1
     * again. Before the fix G1 answered them from memory, and G2 expired the session at takeover + TTL, seconds before
     * TTL had passed since the last acknowledged keepalive. Now: every expiry comes at least TTL after the last
     * keepalive any gateway acknowledged. (G1's ZooKeeper session timeout is long, as in a real partition that outlasts
     * no timeout yet; both gateways share the manual clock.)
     */
    @Test
    void keepalivesAtAGatewayCutOffFromZooKeeper_neverLetATakeoverElsewhereExpireTheSessionEarly() {
        WardenConfig slow = fx.config().withZkSessionTimeout(Duration.ofSeconds(30));
        Gateway g1 = fx.gateway(viaProxy(slow));
        Gateway g2 = fx.gateway(slow);
        String s = session(g1.warden(), "alice", TTL);
        long start = fx.clock.read();

        proxy.blackhole();
        assertThat(g2.warden().keepalive(s, null).join()).as("one keepalive lands at G2: a takeover").isEqualTo(TTL);

        long lastAck = start;
        CompletableFuture<Long> pending = null;
        long expiredBy = -1;
        for (int step = 0; step < 120 && expiredBy < 0; step++) {
            fx.clock.advance(Duration.ofMillis(500));
            settle();
            if (pending == null || pending.isDone()) {
                if (pending != null && !pending.isCompletedExceptionally()) {
                    lastAck = fx.clock.read(); // (answered within the last step; the latest it can have been is now)
                }
                pending = g1.warden().keepalive(s, null);
                settle();
                if (pending.isDone() && !pending.isCompletedExceptionally()) {
                    lastAck = fx.clock.read();
                    pending = null;
                }
            }
            if (!exists(s)) {
                expiredBy = fx.clock.read();
            }
        }
        assertThat(expiredBy).as("the session expires in the end (nobody reaches a gateway that can vouch)").isPositive();
        assertThat(Duration.ofNanos(expiredBy - lastAck).toMillis())
                .as("expired no earlier than TTL after the last acknowledged keepalive (%d ms after the start)",
                        Duration.ofNanos(lastAck - start).toMillis())
                .isGreaterThanOrEqualTo(TTL);
    }

    /**
     * Across restarts: a gateway restarted under a fixed --gateway-id while its old run is only partitioned (its
     * ZooKeeper session still alive) takes its sessions back. Before the fix the record named only the gateway id, so
     * when the old run reconnected it saw its own id and went on tracking: two trackers of one session. Now the record
     * names the incarnation too, and the old run lets go.
     */
    @Test
    void restartUnderAFixedGatewayId_whileTheOldRunIsOnlyPartitioned_leavesOneTracker() {
        WardenConfig fixed = fx.config().withZkSessionTimeout(Duration.ofSeconds(30)).toBuilder().gatewayId("gw-fixed").build();
        Gateway old = fx.gateway(viaProxy(fixed));
        String s = session(old.warden(), "alice", TTL);
        assertThat(old.tracksSession(s)).isTrue();

        proxy.blackhole();
        Gateway again = fx.gateway(fixed);
        await("the new run tracks it", () -> again.tracksSession(s));

        proxy.heal();
        await("the old run lets go once it hears from ZooKeeper again", () -> !old.tracksSession(s));
        assertThat(again.tracksSession(s)).isTrue();
    }

    /**
     * Refused keepalives: a gateway that cannot reach ZooKeeper refuses keepalives (503: the client goes elsewhere), and
     * a session whose keepalives were refused must not expire for it (contract §2.10). Before the fix the gateway
     * acknowledged keepalives while disconnected, and after a short disconnection (same ZooKeeper session, no LOST) it
     * expired sessions whose TTL had run out meanwhile. Now: 503 while disconnected, a fresh TTL once it can vouch again.
     */
    @Test
    void keepalivesRefusedDuringADisconnection_thenAFreshTtl_soAnElectionNeverKillsASession() {
        Gateway g = fx.gateway(viaProxy(fx.config()));
        String s = session(g.warden(), "alice", TTL);

        proxy.partition();
        await("disconnected", () -> !g.warden().ready());
        assertThat(g.warden().keepalive(s, null).handle((ttl, e) -> code(e)).join())
                .as("no keepalive acknowledged by a gateway that cannot vouch").isEqualTo(WardenException.ErrorCode.UNAVAILABLE);
        fx.clock.advance(Duration.ofMillis(TTL + 2_000));
        settle();
        proxy.heal();
        await("reconnected", () -> g.warden().ready());
        fx.clock.advance(Duration.ofMillis(1_000));
        settle();
        fx.clock.advance(Duration.ofMillis(TTL - 2_000));
        settle();
        assertThat(exists(s)).as("a fresh TTL from when the gateway could vouch again").isTrue();
        assertThat(g.warden().keepalive(s, null).join()).isEqualTo(TTL);
    }

    /**
     * A keepalive that changes the TTL does ZooKeeper I/O; before the fix the expiry could start during that
     * I/O, and the keepalive was acknowledged ({@code ttl_ms_remaining=20000}) for a session that was then expired.
     * Acknowledging and expiring now exclude each other: whichever comes first decides.
     */
    @Test
    void aTtlChangingKeepaliveRacingTheExpiry_isNeverAcknowledgedForASessionThatThenExpires() {
        Gateway g = fx.gateway();
        for (int round = 0; round < 5; round++) {
            String s = session(g.warden(), "alice", TTL);
            fx.clock.advance(Duration.ofMillis(TTL - 10));
            if (round % 2 == 0) {
                settle(); // the gateway is fresh: the keepalive is accepted at once, then its TTL change is written
            }
            CompletableFuture<Long> ack = g.warden().keepalive(s, 20_000L);
            fx.clock.advance(Duration.ofMillis(20)); // the deadline passes while the keepalive's I/O is under way
            WardenException.ErrorCode outcome = ack.handle((ttl, e) -> e == null ? null : code(e)).orTimeout(20, TimeUnit.SECONDS).join();
            settle();
            settle();
            if (outcome == null) {
                assertThat(exists(s)).as("round %d: acknowledged, so alive", round).isTrue();
                assertThat(g.warden().keepalive(s, null).join()).isEqualTo(20_000);
            } else {
                assertThat(outcome).isIn(WardenException.ErrorCode.SESSION_NOT_FOUND, WardenException.ErrorCode.UNAVAILABLE);
                await("round " + round + ": not acknowledged, so the expiry stands", () -> !exists(s));
            }
            g.warden().closeSession(s).exceptionally(e -> null).join();
        }
    }

    /**
     * The gateway stops tracking the session within 5 s of clock time, far less than its 60 s TTL (at the TTL, the failed
     * expiry would tell it anyway): until then two gateways track one session.
     */
    private void assertNoticedWellBeforeTheTtl(Gateway g, String s) throws InterruptedException {
        for (int i = 0; i < 50 && g.tracksSession(s); i++) {
            fx.clock.advance(Duration.ofMillis(100));
            Thread.sleep(50);
        }
        assertThat(g.tracksSession(s)).as("the old tracker noticed the takeover").isFalse();
    }

    /** Makes the record unreadable (a read answers NOAUTH: an error with no disconnection), or readable again. */
    private void recordReadable(String sessionId, boolean readable) throws Exception {
        int perms = readable ? ZooDefs.Perms.ALL : ZooDefs.Perms.ALL & ~ZooDefs.Perms.READ;
        fx.curator.setACL().withACL(List.of(new ACL(perms, ZooDefs.Ids.ANYONE_ID_UNSAFE))).forPath(CellPaths.session(sessionId));
    }

    /**
     * A watch that failed to re-arm. The tracker watches the session record to learn of a takeover. When a
     * change fired the watch and the read that re-arms it failed, the watch was never set again, so a later takeover
     * went unnoticed and the gateway went on tracking the session. Now it re-arms until it succeeds, and vouches for
     * nothing meanwhile.
     */
    @Test
    void aRecordWatchThatFailedToRearm_isRearmed_soATakeoverElsewhereIsNoticed() throws Exception {
        Gateway g1 = fx.gateway(viaProxy(fx.config()));
        Gateway g2 = fx.gateway();
        String s = session(g1.warden(), "alice", 60_000);
        byte[] record = fx.curator.getData().forPath(CellPaths.session(s));

        proxy.delayRequests(500); // G1 hears the notification at once; its re-read reaches the server late...
        fx.curator.setData().forPath(CellPaths.session(s), record); // fires G1's watch
        recordReadable(s, false); // ...and fails (NOAUTH)
        Thread.sleep(1_500);
        proxy.delayRequests(0);
        fx.clock.advance(Duration.ofMillis(1_000));
        recordReadable(s, true);

        g2.warden().keepalive(s, null).join();
        assertNoticedWellBeforeTheTtl(g1, s);
    }

    /**
     * Revalidation after a ZooKeeper session loss. The gateway's watches die with its ZooKeeper session; it
     * re-reads every record it tracks. Before the fix it marked itself valid again when those reads finished, whether
     * they had worked or not, so a session whose re-read failed was tracked without a watch, and a takeover elsewhere
     * went unnoticed. Now each tracked session knows in which ZooKeeper session its watch was set, and one set in an
     * earlier ZooKeeper session vouches for nothing until it is read again.
     */
    @Test
    void afterAZooKeeperSessionLoss_aFailedRevalidationStillNoticesATakeoverElsewhere() throws Exception {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        String s = session(g1.warden(), "alice", 60_000);

        recordReadable(s, false);
        g1.curator().getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
        await("G1 is back", () -> g1.warden().ready());
        Thread.sleep(1_000); // its revalidation reads fail (NOAUTH)
        fx.clock.advance(Duration.ofMillis(1_000));
        recordReadable(s, true);

        g2.warden().keepalive(s, null).join();
        assertNoticedWellBeforeTheTtl(g1, s);
    }

    /**
     * The leader adopts a vanished gateway's session with a compare-and-set of its record. When that write
     * was applied but its reply lost, Curator sent it again, got BADVERSION, and the adoption was dropped: the record
     * named the leader, which did not track it, so the session and its holds lived forever. Adoption is now
     * idempotent: on any doubt it re-reads the record and tracks the session when the record names this gateway.
     */
    @Test
    void adoptionWhoseReplyWasLost_stillTracksTheSession_whichThenExpires() {
        Gateway leader = fx.gateway(viaProxy(fx.config()));
        await("leader", leader::isLeader);
        Gateway doomed = fx.gateway();
        String s = session(doomed.warden(), "alice", TTL);
        AcquireResult held = join(doomed.warden().acquire(exclusive(s, "adopt/lost", 0)));
        assertThat(held.status()).isEqualTo(Status.GRANTED);

        proxy.cutAfterNext(ZkCutProxy.SET_DATA, 1, s);
        doomed.close();

        await("the adoption's reply was lost", proxy::hasCut);
        await("adopted all the same", () -> leader.tracksSession(s));
        await("expired by the adopter when nobody keeps it alive", () -> {
            fx.clock.advance(Duration.ofMillis(1_000));
            return !exists(s);
        });
        assertThat(leader.warden().lock(LockName.parse("adopt/lost")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }

    /** Lock-delays: the same lost reply on the adoption of a lock-delay left the lock blocked forever. */
    @Test
    void lockDelayAdoptionWhoseReplyWasLost_stillEndsTheDelay() throws Exception {
        Gateway leader = fx.gateway(viaProxy(fx.config()));
        await("leader", leader::isLeader);
        Gateway doomed = fx.gateway();
        String s = doomed.warden().openSession("alice", TTL, 5_000).join().sessionId();
        join(doomed.warden().acquire(exclusive(s, "adopt/delay", 0)));
        fx.clock.advance(Duration.ofMillis(TTL));
        await("expired into a lock-delay", () -> !exists(s));
        await("lock-delay recorded", () -> {
            try {
                return fx.curator.checkExists().forPath(CellPaths.lockDelay(s)) != null;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });

        proxy.cutAfterNext(ZkCutProxy.SET_DATA, 1, CellPaths.lockDelay(s));
        doomed.close();
        await("the adoption's reply was lost", proxy::hasCut);
        await("the lock is free once the adopted delay is over", () -> {
            fx.clock.advance(Duration.ofMillis(1_000));
            return fx.queueSize("adopt/delay") == 0;
        });
    }
}
