package io.warden.service.zk;

import io.warden.service.api.WardenException;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Lists a session node's children (its request records, tombstones and end markers) only when its
 * {@code Stat.numChildren} says the listing fits in half the gateway's packet limit ({@link PacketLimit#listable()}:
 * a record's name costs 40 bytes in a listing, a marker's 52, both under {@link PacketLimit#BYTES_PER_ENTRY}).
 *
 * <p>A listing over the limit costs the gateway its ZooKeeper connection, and the next read of the same session after
 * the reconnection costs it again (an adopted session's expiry, a prune at every end), so the gateway never recovers on
 * its own. Warden keeps a session's children well under the bound (at most {@code max-requests-per-session} live
 * requests, and ended ones pruned after a few dozen); a session over it was left so by something else (another
 * program writing under the session, a gateway that did not prune). Its listing then fails with
 * {@code RESOURCE_EXHAUSTED} naming the session and the count, and is logged (WARN); the rest of the cell is served.
 *
 * <p>Costs one {@code exists} before each listing. Thread-safety: stateless but for the immutable limit.
 */
public final class SessionListing {
    private static final Logger log = LoggerFactory.getLogger(SessionListing.class);

    private final Zk zk;
    private final PacketLimit limit;

    public SessionListing(Zk zk, PacketLimit limit) {
        this.zk = zk;
        this.limit = limit;
    }

    /**
     * The session node's children; fails with NONODE (a {@link KeeperException}) when the session record is gone, and
     * with {@code RESOURCE_EXHAUSTED} when it has more children than this gateway lists ({@code what}: what therefore
     * cannot be done, for the message).
     */
    public CompletableFuture<List<String>> children(String sessionId, String what) {
        String path = CellPaths.session(sessionId);
        return zk.exists(path).thenCompose(stat -> {
            if (stat == null) {
                return CompletableFuture.failedFuture(new KeeperException.NoNodeException(path));
            }
            if (stat.getNumChildren() > limit.listable()) {
                log.warn("session {} has {} children (request records, tombstones, end markers), more than this gateway "
                                + "lists in one ZooKeeper reply ({}: half its packet limit, zk-max-packet-bytes {}); it is not "
                                + "listed (a reply over the limit would cost the gateway its ZooKeeper connection): {}",
                        sessionId, stat.getNumChildren(), limit.listable(), limit.bytes(), what);
                return CompletableFuture.failedFuture(WardenException.exhausted("session " + sessionId + " has "
                        + stat.getNumChildren() + " request records and end markers, more than this gateway reads at once ("
                        + limit.listable() + "): " + what));
            }
            return zk.children(path);
        });
    }
}
