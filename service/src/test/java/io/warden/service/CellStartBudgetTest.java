package io.warden.service;

import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first gateway of a new cell makes its 2 x 256 shards in two transactions, not 512 separate creates: on a loaded
 * ensemble the separate creates took longer than the session timeout and the gateway gave up starting ("could not
 * start gateway: null"). Counted in ZooKeeper transactions (each write is one zxid): a budget, not a timing.
 */
class CellStartBudgetTest {
    private WardenFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void theFirstStartOfACell_makesItsShardsInAFewRequests() throws Exception {
        long before = zxid();
        fx.gateway();
        long spent = zxid() - before - 1;
        System.out.println("ZooKeeper transactions to start the first gateway of a cell: " + spent);
        assertThat(fx.curator.getChildren().forPath(CellPaths.SESSIONS)).hasSize(CellPaths.SESSION_SHARDS);
        assertThat(fx.curator.getChildren().forPath(CellPaths.LOCK_DELAY)).hasSize(CellPaths.SESSION_SHARDS);
        assertThat(spent).as("transactions to start a new cell's first gateway").isLessThan(64);
    }

    /** The ensemble's last transaction id, read as the id of a node made now (each write is one transaction). */
    private long zxid() throws Exception {
        org.apache.zookeeper.data.Stat stat = new org.apache.zookeeper.data.Stat();
        fx.curator.create().storingStatIn(stat).withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL)
                .forPath("/zxid-probe-");
        return stat.getCzxid();
    }

    private Gateway start(String dir) {
        try {
            return Gateway.start(fx.config().toBuilder()
                    .dataDir(java.nio.file.Files.createTempDirectory("warden-start-" + dir + "-")).build(), fx.clock);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void twoGatewaysStartingTogether_bothStart_andTheShardsAreMadeOnce() throws Exception {
        var a = java.util.concurrent.CompletableFuture.supplyAsync(() -> start("a"));
        var b = java.util.concurrent.CompletableFuture.supplyAsync(() -> start("b"));
        try (Gateway ga = a.get(); Gateway gb = b.get()) {
            assertThat(ga.warden()).isNotNull();
            assertThat(gb.warden()).isNotNull();
        }
        assertThat(fx.curator.getChildren().forPath(CellPaths.SESSIONS)).hasSize(CellPaths.SESSION_SHARDS);
    }
}
