package io.warden.service.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.metrics.WardenMetrics;
import io.warden.service.support.ZkCutProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;

/**
 * A request in flight when ZooKeeper froze ends at the client's read timeout, not after a wait per retry. Curator decides
 * a retry on ZooKeeper's event thread and sends it a back-off later, judging the connection from a flag that the same
 * event thread sets only after it has run every callback the loss completed. When those take longer than the back-off
 * (here one callback holds the thread 2 s, as a burst of continuations can), the retry went to a client connecting to
 * the frozen server and waited out the connection timeout, once per retry: a call hung for over 30 s.
 */
class StalledRetryTest {
    /** Read timeout 6 s (2/3 of it); connection timeout 9 s (one server). */
    private static final int SESSION_TIMEOUT_MS = 9_000;

    @Test
    void aRequestInFlightAsZooKeeperFroze_failsAtTheReadTimeout_notAfterAConnectionAttemptPerRetry() throws Exception {
        frozenWhileInFlight(false);
    }

    /**
     * A batched read sent before it fails first when the connection is lost (ZooKeeper's own client, no retry): its
     * CONNECTIONLOSS is no reply from ZooKeeper, so the gateway is still stalled when Curator asks whether to retry.
     */
    @Test
    void aReadBatchFailingFirst_doesNotMakeTheGatewayLookAnsweredToTheRetryDecision() throws Exception {
        frozenWhileInFlight(true);
    }

    private void frozenWhileInFlight(boolean readBatchFirst) throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkCutProxy proxy = new ZkCutProxy(server.getPort());
             CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(proxy.connectString())
                     .sessionTimeoutMs(SESSION_TIMEOUT_MS).connectionTimeoutMs(1_500)
                     .retryPolicy(new BoundedExponentialBackoffRetry(100, 1000, 3)).build()) {
            curator.start();
            assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
            Zk zk = new Zk(curator, WardenMetrics.noop());
            zk.sync("/").get(10, TimeUnit.SECONDS);

            proxy.blackhole();
            long frozeAt = System.nanoTime();
            CompletableFuture<?> readBatch = readBatchFirst ? zk.readMulti(java.util.List.of("/")) : null;
            CompletableFuture<Void> inFlight = zk.sync("/");
            // A request of ZooKeeper's own client (Curator does not retry it) whose callback, run on the event thread
            // when the connection is lost, holds that thread: Curator hears of the loss only after it.
            CompletableFuture<Void> slowCallbackRan = new CompletableFuture<>();
            curator.getZookeeperClient().getZooKeeper().sync("/", (rc, path, ctx) -> {
                sleep(Duration.ofSeconds(2));
                slowCallbackRan.complete(null);
            }, null);

            assertThatThrownBy(() -> inFlight.get(60, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(KeeperException.ConnectionLossException.class);
            long ms = Duration.ofNanos(System.nanoTime() - frozeAt).toMillis();
            slowCallbackRan.get(30, TimeUnit.SECONDS);
            if (readBatch != null) {
                assertThat(readBatch).isDone();
            }
            // The read timeout (6 s) and the held callback (2 s) at most, with room for a slow machine; a retry sent to
            // the connecting client would add the connection timeout (9 s) at least.
            assertThat(ms).as("the request ended %d ms after ZooKeeper froze", ms).isLessThan(12_000);
            proxy.heal();
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
