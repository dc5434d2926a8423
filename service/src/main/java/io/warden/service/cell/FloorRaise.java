package io.warden.service.cell;

import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.TransactionOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Raises a cell's token floor so that every token the cell gives from now on is above a given one (as
 * {@code token-floor raise --above} does, {@link FloorCommand}), from a running gateway: how a namespace that moves in
 * keeps its tokens growing. Never lowers the floor; raises nothing when the cell's tokens are above it already.
 */
public final class FloorRaise {
    private FloorRaise() {
    }

    /**
     * The one transaction that raises the floor to {@code target}: the child {@code /token-floor/floor-{target}}
     * first (gateways learn the raise from its notification, and the data change after it names a raise they already
     * know), then {@code data} as the data of {@code /token-floor} (for people). Fails NODEEXISTS when that raise was
     * made already.
     */
    static List<CuratorOp> ops(TransactionOp ops, long target, Map<String, Object> data) throws Exception {
        return List.of(ops.create().withMode(CreateMode.PERSISTENT)
                        .forPath(CellPaths.TOKEN_FLOOR + "/" + CellPaths.floorNode(target)),
                ops.setData().forPath(CellPaths.TOKEN_FLOOR, Json.write(data)));
    }

    /** The token a node made now in the cell would have: the cell's newest zxid (a write's) through its floor. */
    public static CompletableFuture<Long> tokenNow(Zk zk, Tokens tokens) {
        return zk.setData(CellPaths.PROBE, new byte[0], -1).thenApply(stat -> tokens.of(stat.getMzxid()));
    }

    /**
     * Makes every token of the cell from now on greater than {@code above}. Completes with the floor raised to, or -1 when
     * nothing had to be raised. The raise is a child of {@code /token-floor}: every gateway of the cell learns it from
     * its notification before any later reply ({@link TokenFloor}), so no token of a later node misses it.
     */
    public static CompletableFuture<Long> above(Zk zk, Tokens tokens, long above, String why) {
        return zk.setData(CellPaths.PROBE, new byte[0], -1).thenCompose(stat -> {
            long zxid = stat.getMzxid();
            long floorNow = tokens.of(zxid) - zxid;
            if (zxid + 1 + floorNow > above) {
                return CompletableFuture.completedFuture(-1L); // every later node's token is above it already
            }
            long target = above - zxid;
            if (target > FloorHistory.MAX_FLOOR) {
                throw io.warden.service.api.WardenException.exhausted("raising the token floor above " + above
                        + " needs a floor above " + FloorHistory.MAX_FLOOR);
            }
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("floor", target);
            data.put("above", above);
            data.put("why", why);
            data.put("at_ms", System.currentTimeMillis());
            try {
                return zk.multi(ops(zk.ops(), target, data)).handle((r, err) -> {
                            if (err != null && Zk.code(err) != Code.NODEEXISTS) {
                                throw Zk.translate(err);
                            }
                            return target;
                        });
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        });
    }
}
