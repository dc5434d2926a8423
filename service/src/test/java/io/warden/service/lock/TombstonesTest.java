package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A request record deleted under a live queue node blocks the lock forever (release answers false,
 * close leaves the node). Pruning used to delete tombstones with version −1 after reading them: a prune working from an
 * old read could delete a record that a late duplicate had since made live again. Now tombstones are named by end
 * markers and deleted at their version, so a stale prune fails on a live record and leaves it alone.
 */
class TombstonesTest {
    private WardenFixture fx;
    private Warden w;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        Gateway gw = fx.gateway();
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private static AcquireRequest request(String session, String id) {
        return new AcquireRequest(session, LockName.parse("tomb/one"), Mode.EXCLUSIVE, 0, id, OnTimeout.CANCEL);
    }

    @Test
    void aPruneFromAStaleListing_neverDeletesARecordMadeLiveAgain_soCloseStillFreesTheLock() throws Exception {
        String s = session(w, "a", 60_000);
        for (int i = 0; i < Tombstones.KEPT + 10; i++) {
            AcquireResult r = join(w.acquire(request(s, "r" + i)));
            assertThat(w.release(s, LockName.parse("tomb/one"), r.token()).join()).isTrue();
        }
        List<String> stale = fx.curator.getChildren().forPath(CellPaths.session(s));
        Zk zk = new Zk(fx.curator, WardenMetrics.noop());
        Tombstones tombstones = new Tombstones(zk, new io.warden.service.zk.SessionListing(zk,
                new io.warden.service.zk.PacketLimit(io.warden.service.zk.PacketLimit.ZOOKEEPER_DEFAULT)));
        tombstones.prune(s, stale).join(); // the oldest are gone now, r0's among them
        assertThat(fx.curator.checkExists().forPath(CellPaths.sessionRequest(s, CellPaths.requestUuid(s, "r0")))).isNull();

        AcquireResult late = join(w.acquire(request(s, "r0"))); // a late duplicate, older than the kept tombstones
        assertThat(late.status()).isEqualTo(Status.GRANTED);
        tombstones.prune(s, stale).join(); // a second prune, from the listing it read before

        assertThat(fx.curator.checkExists().forPath(CellPaths.sessionRequest(s, CellPaths.requestUuid(s, "r0"))))
                .as("the live record survives the stale prune").isNotNull();
        assertThat(w.closeSession(s).join().released()).containsExactly("tomb/one");
        assertThat(w.lock(LockName.parse("tomb/one")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }

    /**
     * Whether to prune used to be decided from the new end marker's sequence number alone (every 64th number), and
     * a session whose numbers stepped over that window (other children made and deleted between its ends: concurrent
     * requests, records of refused acquires) was never pruned: its listing grew past the gateway's packet limit in the
     * 30-minute soak, and every read of it cost the gateway its ZooKeeper connection. Here a second client makes and
     * deletes a child before each request whose marker would land in the window.
     */
    @Test
    void endsWhoseMarkersNeverLandOnThePruneWindow_areStillPruned() throws Exception {
        String s = session(w, "a", 60_000);
        String path = CellPaths.session(s);
        int requests = 6 * Tombstones.PRUNE_EVERY + 5;
        // A request moves the markers' numbering (the session node's creates of children) by 2; 62 more creates (each
        // deleted at once) make it 64, so that every marker has the first one's number modulo 64, off the window.
        List<org.apache.curator.framework.api.transaction.CuratorOp> steps = new java.util.ArrayList<>();
        for (int i = 0; i < 2 * Tombstones.PRUNE_EVERY - 2; i++) {
            steps.add(fx.curator.transactionOp().create().forPath(path + "/step"));
            steps.add(fx.curator.transactionOp().delete().forPath(path + "/step"));
        }
        // The first marker's number: after this probe's, the record's and (in ZooKeeper's count) one more.
        String probe = fx.curator.create().withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL).forPath(path + "/probe-");
        fx.curator.delete().forPath(probe);
        long first = Long.parseLong(probe.substring(probe.lastIndexOf('-') + 1)) + 3;
        for (long n = first; Math.floorMod(n, 2 * Tombstones.PRUNE_EVERY) != Tombstones.PRUNE_EVERY; n++) {
            fx.curator.create().forPath(path + "/step");
            fx.curator.delete().forPath(path + "/step");
        }
        for (int i = 0; i < requests; i++) {
            AcquireResult r = join(w.acquire(request(s, "r" + i)));
            assertThat(w.release(s, LockName.parse("tomb/one"), r.token()).join()).isTrue();
            fx.curator.transaction().forOperations(steps);
        }
        int bound = 2 * (Tombstones.KEPT + Tombstones.PRUNE_EVERY + 1);
        WardenFixture.await("at most " + bound + " tombstones and markers", () -> children(s) <= bound);
        assertThat(children(s)).as("tombstones go with their markers").isEven().isGreaterThanOrEqualTo(2 * Tombstones.KEPT);
    }

    /**
     * A session with more ended requests than the gateway lists in one reply (left by a gateway that did not prune
     * them): pruning it must not cost the gateway its ZooKeeper connection, at every end, for good; nor may closing it.
     * It is refused, named, and the gateway serves everything else.
     */
    @Test
    void aSessionTooLargeToList_isNeverListed_andTheGatewayKeepsItsConnection() throws Exception {
        fx.close();
        fx = new WardenFixture();
        int packet = 20_000;
        Gateway gw = fx.gateway(fx.config().withZkMaxPacketBytes(packet).withMaxEntriesPerLock(100));
        w = gw.warden();
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger();
        gw.curator().getConnectionStateListenable().addListener((c, state) -> {
            if (state == org.apache.curator.framework.state.ConnectionState.SUSPENDED
                    || state == org.apache.curator.framework.state.ConnectionState.LOST) {
                lost.incrementAndGet();
            }
        });
        String s = session(w, "big", 60_000);
        String path = CellPaths.session(s);
        int pairs = 250; // 500 children of 40 and 52 bytes: a listing over the packet limit
        for (int made = 0; made < pairs; ) {
            List<org.apache.curator.framework.api.transaction.CuratorOp> ops = new java.util.ArrayList<>();
            for (int i = 0; i < 50 && made < pairs; i++, made++) {
                String uuid = java.util.UUID.randomUUID().toString();
                ops.add(fx.curator.transactionOp().create().forPath(path + "/" + uuid, new byte[0]));
                ops.add(fx.curator.transactionOp().create().withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL)
                        .forPath(path + "/" + Tombstones.MARKER + uuid + "_", new byte[0]));
            }
            fx.curator.transaction().forOperations(ops);
        }
        for (int i = 0; i < 2 * Tombstones.PRUNE_EVERY + 2; i++) {
            AcquireResult r = join(w.acquire(request(s, "r" + i)));
            assertThat(w.release(s, LockName.parse("tomb/one"), r.token()).join()).isTrue();
        }
        assertThatThrownBy(() -> w.closeSession(s).join()).satisfies(e -> assertThat(WardenFixture.code(e))
                .isEqualTo(io.warden.service.api.WardenException.ErrorCode.RESOURCE_EXHAUSTED));
        String other = session(w, "other", 60_000);
        AcquireResult r = join(w.acquire(request(other, "o")));
        assertThat(r.status()).isEqualTo(Status.GRANTED);
        assertThat(lost.get()).as("times the gateway lost its ZooKeeper connection").isZero();
    }

    private int children(String session) {
        try {
            return fx.curator.checkExists().forPath(CellPaths.session(session)).getNumChildren();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * At the small packet limit the proof suite runs its gateways with (so that a few hundred entries do what tens of
     * thousands do at the default), a busy session must still be listed to be pruned: the count before the listing once
     * refused sessions of about 190 children (64 tombstones kept, 32 more before a prune), far under what a listing of
     * them takes, and from then on they were never pruned (the 30-minute soak: semaphore sessions of 800 children).
     */
    @Test
    void atTheProofSuitesSmallPacketLimit_aBusySessionIsStillPruned() throws Exception {
        fx.close();
        fx = new WardenFixture();
        int packet = 24_576;
        w = fx.gateway(fx.config().withZkMaxPacketBytes(packet).withMaxEntriesPerLock(100)).warden();
        assertThat(new io.warden.service.zk.SessionListing(null, new io.warden.service.zk.PacketLimit(packet)).maxChildren())
                .as("room for the tombstones two gateways keep").isGreaterThan(2 * (Tombstones.KEPT + 2 * Tombstones.PRUNE_EVERY));
        String s = session(w, "sem", 60_000);
        for (int i = 0; i < 6 * Tombstones.PRUNE_EVERY + 5; i++) {
            AcquireResult r = join(w.acquire(SemaphoreTest.semaphore(s, "tomb/sem", 2, 0)));
            assertThat(r.status()).isEqualTo(Status.GRANTED);
            assertThat(w.release(s, LockName.parse("tomb/sem"), r.token()).join()).isTrue();
        }
        int bound = 2 * (Tombstones.KEPT + Tombstones.PRUNE_EVERY + 1);
        WardenFixture.await("at most " + bound + " tombstones and markers", () -> children(s) <= bound);
    }

    @Test
    void liveRequests_areCountedFromTheNamesAlone() {
        assertThat(Tombstones.live(List.of("a", "b", "~a_0000000003"))).isEqualTo(1);
        assertThat(Tombstones.live(List.of())).isZero();
        assertThat(Tombstones.uuidOf("~0f-aa_0000000012")).isEqualTo("0f-aa");
    }
}
