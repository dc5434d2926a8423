package io.warden.service.support;

import io.warden.service.Gateway;
import io.warden.service.config.CellAddress;
import io.warden.service.config.WardenConfig;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A gateway that serves two cells, each a real ZooKeeper server: the default one (the {@link WardenFixture}'s, with its
 * manual clock) and {@code b}, which serves the namespace {@code pay}; a Curator client on each cell's chroot.
 */
public final class TwoCellFixture implements AutoCloseable {
    public final WardenFixture fx;
    public final TestingServer cellB;
    /** A client of cell b's ensemble, on its chroot {@code /warden}. */
    public final CuratorFramework zkB;
    public final Gateway gateway;

    public TwoCellFixture() throws Exception {
        fx = new WardenFixture();
        cellB = new TestingServer(true);
        zkB = chrootClient(cellB);
        WardenConfig config = fx.config().toBuilder()
                .cells(List.of(new CellAddress("b", cellB.getConnectString(), null)))
                .routes(Map.of("pay", "b")).build();
        gateway = fx.gateway(config);
    }

    /** A started, connected client of {@code server} on the chroot {@code /warden}. */
    public static CuratorFramework chrootClient(TestingServer server) throws InterruptedException {
        CuratorFramework zk = CuratorFrameworkFactory.builder().connectString(server.getConnectString())
                .namespace("warden").retryPolicy(new RetryOneTime(100)).build();
        zk.start();
        zk.blockUntilConnected(10, TimeUnit.SECONDS);
        return zk;
    }

    /** The number of entries in lock {@code name}'s queue in the cell {@code zk} is a client of (0 when it has no node). */
    public static int queueSize(CuratorFramework zk, String name) throws Exception {
        String path = WardenFixture.lockPath(name);
        return zk.checkExists().forPath(path) == null ? 0 : zk.getChildren().forPath(path).size();
    }

    @Override
    public void close() throws Exception {
        fx.close();
        zkB.close();
        cellB.close();
    }
}
