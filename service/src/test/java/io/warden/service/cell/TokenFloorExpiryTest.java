package io.warden.service.cell;

import io.warden.service.metrics.WardenMetrics;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A gateway's check of its cell (the rollback guard) reads the token floor first. When the gateway's ZooKeeper session
 * expired while that read was under way, the read was set aside for "the next one", but only the guard starts reads,
 * and it waited for this one: the gateway answered 503 "checking that its ZooKeeper cell has not lost state" for good
 * (a 30-minute soak saw a gateway never become ready again after an expiry during an election). The read must fail, so
 * that the guard tries again.
 */
class TokenFloorExpiryTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void aSessionExpiryWhileTheFloorIsRead_failsTheRead_insteadOfLeavingItUnanswered() throws Exception {
        try (ZkCutProxy proxy = new ZkCutProxy(fx.server.getPort());
             CuratorFramework client = CuratorFrameworkFactory.newClient(proxy.connectString(), 30_000, 15_000,
                     new RetryOneTime(100))) {
            client.start();
            client.blockUntilConnected();
            client.create().orSetData().creatingParentsIfNeeded().forPath(CellPaths.TOKEN_FLOOR);
            TokenFloor floor = new TokenFloor(new Zk(client, WardenMetrics.noop()), "/", () -> 0L);
            assertThat(floor.reload()).succeedsWithin(Duration.ofSeconds(10));

            // Curator reports the new session only once it has one: until then the client still holds the expired
            // handle, and a read sent through it fails at once with SESSIONEXPIRED.
            CountDownLatch newSession = new CountDownLatch(1);
            client.getConnectionStateListenable().addListener((c, state) -> {
                if (state == ConnectionState.RECONNECTED) {
                    newSession.countDown();
                }
            });
            proxy.holdNext(ZkCutProxy.GET_CHILDREN2, CellPaths.TOKEN_FLOOR); // the listing
            CompletableFuture<Void> reload = floor.reload();
            WardenFixture.await("the listing held on its way to ZooKeeper", proxy::holding);
            client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();

            // answered (not left waiting), so that the caller reads again
            assertThatThrownBy(() -> reload.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
            proxy.releaseHeld();
            assertThat(newSession.await(15, TimeUnit.SECONDS)).as("a new ZooKeeper session").isTrue();
            assertThat(floor.reload()).as("the next read, on the new session").succeedsWithin(Duration.ofSeconds(10));
            assertThat(floor.exact()).isTrue();
        }
    }
}
