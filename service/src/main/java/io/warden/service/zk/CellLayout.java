package io.warden.service.zk;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Makes the nodes of a cell's layout that every gateway expects to be there (docs/design.md): the top nodes and the
 * 256 shards of {@code /sessions} and {@code /lockdelay}. Each gateway makes what is missing at its start; so does
 * {@code token-floor raise}, for a cell that lost everything (an ensemble whose servers all started empty), whose running
 * gateways serve it again after the raise without a restart.
 *
 * <p>Idempotent and safe to race: what exists is left alone. Blocking; not for ZooKeeper's event thread.
 */
public final class CellLayout {
    /** The top nodes, relative to the cell's chroot. */
    public static final List<String> TOP = List.of(CellPaths.LOCKS, CellPaths.SESSIONS, CellPaths.GATEWAYS,
            CellPaths.LOCK_DELAY, CellPaths.EXPIRED, CellPaths.AUDIT, CellPaths.PROBE, CellPaths.TOKEN_FLOOR,
            CellPaths.REVOCATIONS, CellPaths.CELLS);
    /** How many times a batch of shards is tried again after it met a shard another client made meanwhile. */
    private static final int SHARD_ATTEMPTS = 5;

    private CellLayout() {
    }

    /** Makes the missing top nodes (and the chroot above them). */
    public static void makeTop(CuratorFramework client) throws Exception {
        for (String path : TOP) {
            try {
                client.create().creatingParentsIfNeeded().forPath(path);
            } catch (KeeperException.NodeExistsException ignored) {
                // made by another gateway, an earlier run, or an attempt whose reply was lost
            }
        }
    }

    /**
     * Makes the missing shards of {@code /sessions} and {@code /lockdelay} (PERSISTENT: multis create below them), those
     * of a parent in one transaction (256 creates of about 40 bytes: one round trip and one log write, where 256
     * separate creates on a slow or loaded ensemble took longer than a session timeout). A transaction that meets a
     * shard another gateway made meanwhile fails as a whole; the list is read again and the rest made, a few times at
     * most.
     */
    public static void makeShards(CuratorFramework client) throws Exception {
        makeShards(client, ops -> client.transaction().forOperations(ops));
    }

    /** Commits one transaction of creates; throws {@link KeeperException.NodeExistsException} when one existed. */
    @FunctionalInterface
    public interface Commit {
        void run(List<CuratorOp> creates) throws Exception;
    }

    /** As above, each transaction committed by {@code commit} (a gateway bounds how long it waits for one). */
    public static void makeShards(CuratorFramework client, Commit commit) throws Exception {
        for (String parent : new String[]{CellPaths.SESSIONS, CellPaths.LOCK_DELAY}) {
            for (int attempt = 1; ; attempt++) {
                Set<String> present = new HashSet<>(client.getChildren().forPath(parent));
                List<CuratorOp> creates = new ArrayList<>();
                for (String shard : CellPaths.shards()) {
                    if (!present.contains(shard)) {
                        creates.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(parent + "/" + shard));
                    }
                }
                if (creates.isEmpty()) {
                    break;
                }
                try {
                    commit.run(creates);
                    break;
                } catch (KeeperException.NodeExistsException raced) {
                    if (attempt == SHARD_ATTEMPTS) {
                        throw new IllegalStateException("could not make the " + creates.size() + " missing shards of "
                                + parent + ": other clients kept making them meanwhile", raced);
                    }
                }
            }
        }
    }
}
