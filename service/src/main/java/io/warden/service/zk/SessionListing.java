package io.warden.service.zk;

import io.warden.service.api.WardenException;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Lists a session node's children (its request records, tombstones and end markers) only when its
 * {@code Stat.numChildren} says the listing fits in three quarters of the gateway's packet limit ({@link #maxChildren}:
 * a record's name costs 40 bytes in a listing, a marker's {@value #BYTES_PER_CHILD}); the last quarter is the margin
 * for children made between the count and the listing (a session's own concurrent requests).
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

    /** An end marker's name in a listing: a 4-byte length, {@code ~}, a 36-character uuid, {@code _}, 10 digits. */
    static final int BYTES_PER_CHILD = 52;

    private final Zk zk;
    private final PacketLimit limit;

    public SessionListing(Zk zk, PacketLimit limit) {
        this.zk = zk;
        this.limit = limit;
    }

    /**
     * The most children a session may have for this gateway to list it: 339 at a 24 KiB packet limit, 60,000 and more
     * at the default 4 MiB. A session keeps far fewer (its live requests, at most {@code max-requests-per-session}, and
     * about a hundred ended ones), so only children made by something else can pass it.
     */
    public int maxChildren() {
        return (int) ((limit.bytes() - (long) PacketLimit.REPLY_OVERHEAD) * 3 / 4 / BYTES_PER_CHILD);
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
            int max = maxChildren();
            if (stat.getNumChildren() > max) {
                log.warn("session {} has {} children (request records, tombstones, end markers), more than this gateway "
                                + "lists in one ZooKeeper reply ({}: three quarters of its packet limit, zk-max-packet-bytes {}); it is not "
                                + "listed (a reply over the limit would cost the gateway its ZooKeeper connection): {}",
                        sessionId, stat.getNumChildren(), max, limit.bytes(), what);
                return CompletableFuture.failedFuture(WardenException.exhausted("session " + sessionId + " has "
                        + stat.getNumChildren() + " request records and end markers, more than this gateway reads at once ("
                        + max + "): " + what));
            }
            return zk.children(path);
        });
    }
}
