package io.warden.service.queue;

import io.warden.service.api.LockName;
import io.warden.service.api.LockTooLargeException;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.PacketLimit;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Every read of a lock's queue ({@code getChildren} of its node) goes through here, so that no lock can cost the gateway
 * its ZooKeeper connection. ZooKeeper's client drops the connection on a reply over its packet limit ({@link PacketLimit},
 * {@code zk-max-packet-bytes}), and the gateway would meet the same reply again after reconnecting: one lock with too
 * many entries once cut gateways off from ZooKeeper in a loop. So a lock is listed only when its node's
 * {@code numChildren} says the listing fits in half the limit ({@link PacketLimit#listable()}); otherwise the read fails
 * with {@link LockTooLargeException} (429), and every reader serves that lock degraded while the rest of the cell goes
 * on.
 *
 * <p>Knowing the count costs an {@code exists} before the listing, unless {@link QueueSizes} (the watch mirror) knows the
 * lock has fewer than half of {@link #listable()} entries: then it is listed at once, as before. The mirror does not
 * claim to know while that many notifications wait for its thread (a burst of creates while it is behind), so its count
 * is short by fewer than half of {@link #listable()} plus what ZooKeeper has not delivered yet; a lock would have to
 * grow by more than that again (about 25,000 entries at the default 4 MiB limit) within that delivery for the reply to
 * exceed the limit.
 *
 * <p>The first time a lock is found too large it is logged (WARN, with its name, its entries and the limit) and reported
 * in {@code warden_lock_too_large_entries{lock}}; once it is listed again, that is logged at INFO and the gauge goes.
 *
 * <p>Concurrency: safe from any thread; continuations run on Curator's event thread. {@code tooLarge} is a concurrent map
 * of at most {@link #MAX_REPORTED} locks (least recently used evicted: an evicted lock is logged again if met again).
 * {@code sizes} is set once at start ({@link #useSizes}), before requests are served.
 */
public final class QueueListing {
    private static final Logger log = LoggerFactory.getLogger(QueueListing.class);
    /** Locks remembered as too large (for logging once and the gauge). */
    static final int MAX_REPORTED = 1_000;

    private final Zk zk;
    private final PacketLimit limit;
    private final WardenMetrics metrics;
    private final Map<String, Integer> tooLarge = com.github.benmanes.caffeine.cache.Caffeine.newBuilder()
            .maximumSize(MAX_REPORTED).<String, Integer>build().asMap();
    private volatile QueueSizes sizes = QueueSizes.UNKNOWN;

    public QueueListing(Zk zk, PacketLimit limit, WardenMetrics metrics) {
        this.zk = zk;
        this.limit = limit;
        this.metrics = metrics;
    }

    /** Where the gateway learns queue sizes without a read (the watch mirror); until set, every listing reads a stat first. */
    public void useSizes(QueueSizes sizes) {
        this.sizes = sizes;
    }

    public QueueSizes sizes() {
        return sizes;
    }

    /** The most entries a lock may have for this gateway to list it. */
    public int listable() {
        return limit.listable();
    }

    public PacketLimit limit() {
        return limit;
    }

    /**
     * The lock's queue: children and stat. Fails with {@link LockTooLargeException} when it has more than
     * {@link #listable()} entries ({@code what} completes its detail: what cannot be done), and with NONODE (a
     * {@link KeeperException}) when the lock node does not exist.
     */
    public CompletableFuture<Zk.ChildrenAndStat> read(String lockPath, String what) {
        return readOrCount(lockPath).thenApply(r -> {
            if (!r.listed()) {
                throw tooLarge(r, what);
            }
            return new Zk.ChildrenAndStat(r.children(), r.stat());
        });
    }

    /** As {@link #read}, the children only. */
    public CompletableFuture<List<String>> children(String lockPath, String what) {
        return read(lockPath, what).thenApply(Zk.ChildrenAndStat::children);
    }

    /** As {@link #children}, with no children for a lock node that does not exist. */
    public CompletableFuture<List<String>> childrenOrEmpty(String lockPath, String what) {
        return children(lockPath, what).exceptionally(err -> {
            if (Zk.code(err) == KeeperException.Code.NONODE) {
                return List.of();
            }
            throw Zk.translate(err);
        });
    }

    /**
     * The lock's queue, or, when it is too large to list, its node's stat alone ({@link QueueRead#listed()} false):
     * for readers that show a too-large lock as such (listings, the console, the watch mirror). NONODE as {@link #read}.
     */
    public CompletableFuture<QueueRead> readOrCount(String lockPath) {
        String name = nameOf(lockPath);
        int max = limit.listable();
        if (!sizes.mayHave(name, max / 2)) {
            return list(name, lockPath);
        }
        return zk.exists(lockPath).thenCompose(stat -> {
            if (stat == null) {
                return CompletableFuture.failedFuture(KeeperException.create(KeeperException.Code.NONODE, lockPath));
            }
            if (stat.getNumChildren() > max) {
                refused(name, stat.getNumChildren());
                return CompletableFuture.completedFuture(new QueueRead(name, null, stat, stat.getNumChildren()));
            }
            return list(name, lockPath);
        });
    }

    /** The exception for a read that found the lock too large; {@code what} says what cannot be done. */
    public LockTooLargeException tooLarge(QueueRead r, String what) {
        return new LockTooLargeException(r.name(), r.entries(), limit.listable(), limit.bytes(), what);
    }

    private CompletableFuture<QueueRead> list(String name, String lockPath) {
        return zk.childrenAndStat(lockPath).thenApply(cs -> {
            listed(name, cs.children().size());
            return new QueueRead(name, cs.children(), cs.stat(), cs.children().size());
        });
    }

    private void refused(String name, int entries) {
        metrics.lockTooLarge(name, entries);
        if (tooLarge.put(name, entries) == null) {
            log.warn("lock {} is too large to read: {} entries in its queue, a listing of about {} bytes, more than half of "
                            + "this gateway's ZooKeeper packet limit ({} bytes, zk-max-packet-bytes); it is not read (a "
                            + "reply over the limit would cost the gateway its ZooKeeper connection): reads of it answer "
                            + "429 and it is shown as too large until it has at most {} entries. Warden admits at most "
                            + "max-entries-per-lock entries per lock; the others were made by other ZooKeeper clients on "
                            + "its node", name, entries, PacketLimit.listingBytes(entries), limit.bytes(), limit.listable());
        }
    }

    private void listed(String name, int entries) {
        if (!tooLarge.isEmpty() && tooLarge.remove(name) != null) {
            metrics.lockListable(name);
            log.info("lock {} can be read again ({} entries in its queue)", name, entries);
        }
    }

    private static String nameOf(String lockPath) {
        LockName name = CellPaths.lockName(lockPath);
        return name != null ? name.toString() : lockPath;
    }

    /**
     * One read of a lock's queue: its children and its node's stat; or, for a lock too large to list, {@code children}
     * null and the stat of an {@code exists}. {@code entries}: the children listed, or the node's child count.
     */
    public record QueueRead(String name, List<String> children, Stat stat, int entries) {
        public boolean listed() {
            return children != null;
        }
    }
}
