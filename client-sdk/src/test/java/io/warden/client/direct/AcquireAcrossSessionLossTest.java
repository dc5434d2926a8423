package io.warden.client.direct;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.client.Hold;
import io.warden.client.LockOwnershipLostException;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A direct-mode acquire that spans a LOST returned an already-lost hold whose node was never
 * deleted, so the lock stayed blocked for the rest of that ZooKeeper session's life. Curator's lock, finding its node
 * gone with the expired session, makes a new one in the new session and gets the lock with it; the hold was marked
 * lost only because a LOST had happened meanwhile, and {@code release()} of a lost hold deleted nothing. The grant is
 * now judged by its node's ephemeral owner against the current session, and release always tries the delete.
 */
class AcquireAcrossSessionLossTest {
    private static final String NAME = "payments/across-a-loss";

    private WardenFixture fx;
    private CuratorFramework alice;
    private CuratorFramework bob;
    private DirectLocks aliceLocks;
    private DirectLocks bobLocks;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        alice = curator();
        bob = curator();
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

    private CuratorFramework curator() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(fx.server.getConnectString())
                .sessionTimeoutMs(10_000).connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(50, 100)).build();
        c.start();
        assertThat(c.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        return c;
    }

    @Test
    void anAcquireThatSpansASessionLoss_andIsGrantedInTheNewSession_holdsValidly_andReleasesItsNode() throws Exception {
        Hold bobs = bobLocks.lock(NAME).acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> waiting = aliceLocks.lock(NAME).acquireAsync(Duration.ofSeconds(30));
        WardenFixture.await("alice is queued", () -> fx.queueSize(NAME) == 2);
        long lossesBefore = aliceLocks.losses();
        long oldSession = alice.getZookeeperClient().getZooKeeper().getSessionId();

        expireOnTheServer(alice.getZookeeperClient().getZooKeeper());

        WardenFixture.await("alice's Curator saw the session LOST", () -> aliceLocks.losses() > lossesBefore);
        WardenFixture.await("alice's Curator has a new session", () -> sessionId(alice) != oldSession && sessionId(alice) != 0);
        // (Curator's lock makes its new node when it next looks at the queue: at once, or when bob's node goes.)
        bobs.release();
        Hold hold = waiting.get(20, TimeUnit.SECONDS);

        String node = fx.queue(NAME).get(0);
        Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(NAME) + "/" + node);
        assertThat(stat.getEphemeralOwner()).as("the node is in alice's current session")
                .isEqualTo(alice.getZookeeperClient().getZooKeeper().getSessionId());
        assertThat(hold.token()).isEqualTo(stat.getCzxid());
        boolean valid = hold.isValid();
        boolean lost = hold.lost().toCompletableFuture().isDone();

        try {
            hold.close();
        } catch (LockOwnershipLostException reported) {
            // b1994d3 reported the hold lost here, and deleted nothing
        }
        WardenFixture.await("alice's node is gone after her release", Duration.ofSeconds(5), () -> fx.queueSize(NAME) == 0);
        try (Hold next = bobLocks.lock(NAME).acquire(Duration.ofSeconds(5))) {
            assertThat(next.token()).isGreaterThan(stat.getCzxid());
        }
        assertThat(valid).as("a grant in the current session is valid").isTrue();
        assertThat(lost).as("... and not lost").isFalse();
    }

    private static long sessionId(CuratorFramework c) {
        try {
            return c.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** Closes the ZooKeeper session of {@code zk} on the server, as an expiry does: its ephemeral nodes go. */
    private void expireOnTheServer(ZooKeeper zk) throws Exception {
        CompletableFuture<Void> connected = new CompletableFuture<>();
        ZooKeeper twin = new ZooKeeper(fx.server.getConnectString(), 10_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.complete(null);
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        connected.get(10, TimeUnit.SECONDS);
        twin.close();
    }
}
