package io.warden.service.watch;

import io.warden.service.queue.LockTree;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueListing;
import io.warden.service.queue.QueueNodeData;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads the whole of {@code /locks} (every lock's queue and its nodes' data) and the lock-delay records, after a
 * {@code sync}: the starting point of the mirror. Not a snapshot: each lock's read carries the pzxid it reflects, and
 * the mirror replays newer notifications on top ({@link LockMirror}).
 *
 * <p>A lock too large to list ({@link QueueListing}) is read as its stat alone: its pzxid and how many entries it has
 * ({@link LockMirror.LockRead#unlisted()}); the read of the cell goes on, and the gateway keeps its ZooKeeper connection.
 * The read stops, failing with {@link OverBudget}, as soon as what it has read would take the mirror past its bound of
 * {@code maxBytes} ({@link LockMirror#estimate}): the heap is never spent on a mirror that would not be kept.
 *
 * <p>Thread-safety: stateless between loads; a load's tally is an atomic; futures complete on Curator's threads.
 */
final class MirrorLoader {
    private final Zk zk;
    private final QueueListing queues;
    private final long maxBytes;
    /** A node's token from its czxid ({@link LockMirror#token}). */
    private final java.util.function.LongUnaryOperator tokens;

    /**
     * @param maxBytes the mirror's bound in estimated bytes, or 0 for none
     * @param tokens   a node's token from its czxid
     */
    MirrorLoader(Zk zk, QueueListing queues, long maxBytes, java.util.function.LongUnaryOperator tokens) {
        this.zk = zk;
        this.queues = queues;
        this.maxBytes = maxBytes;
        this.tokens = tokens;
    }

    /** The cell did not fit in the mirror's bound: {@code bytes} (estimated) read so far, past {@code maxBytes}. */
    static final class OverBudget extends RuntimeException {
        final long bytes;

        OverBudget(long bytes, long maxBytes) {
            super("the locks read so far would take about " + bytes + " bytes of heap in the watch mirror, more than its "
                    + "bound of " + maxBytes + " (watch-mirror-bytes)", null, false, false);
            this.bytes = bytes;
        }
    }

    CompletableFuture<LockMirror.Snapshot> load() {
        Map<String, LockMirror.LockRead> locks = new ConcurrentHashMap<>();
        AtomicLong bytes = new AtomicLong();
        return zk.sync(CellPaths.LOCKS)
                .thenCompose(v -> LockTree.walk(zk, queues, null, (name, path, r) -> {
                    long pzxid = r.stat().getPzxid();
                    if (!r.listed()) {
                        count(bytes, LockMirror.estimate(name.toString(), 0, 0));
                        locks.put(name.toString(), new LockMirror.LockRead(pzxid, List.of(), r.entries()));
                        return CompletableFuture.completedFuture(null);
                    }
                    List<CompletableFuture<MirroredLock.Node>> reads = new ArrayList<>();
                    for (String child : r.children()) {
                        QueueEntry.parse(child).ifPresent(entry -> reads.add(node(path + "/" + child, entry)));
                    }
                    // Counted before the nodes' data is read: a cell that does not fit stops here.
                    count(bytes, reads.isEmpty() ? LockMirror.READ_AT_BYTES
                            : LockMirror.estimate(name.toString(), reads.size(), reads.size()));
                    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenAccept(x -> {
                        List<MirroredLock.Node> nodes = new ArrayList<>();
                        for (CompletableFuture<MirroredLock.Node> n : reads) {
                            if (n.join() != null) {
                                nodes.add(n.join());
                            }
                        }
                        locks.put(name.toString(), new LockMirror.LockRead(pzxid, nodes, 0));
                    });
                }))
                .thenCompose(v -> zk.shardedChildren(CellPaths.LOCK_DELAY))
                .thenApply(delayed -> new LockMirror.Snapshot(Map.copyOf(locks), new HashSet<>(delayed)));
    }

    private void count(AtomicLong bytes, long more) {
        long now = bytes.addAndGet(more);
        if (maxBytes > 0 && now > maxBytes) {
            throw new OverBudget(now, maxBytes);
        }
    }

    /**
     * Deletes leftover expiry markers (their gateway stopped between the expiry and the marker's deletion). A marker is
     * needed only for the notification of its creation, which every watching gateway has had by then.
     */
    void sweepMarkers() {
        zk.childrenOrEmpty(CellPaths.EXPIRED).thenAccept(markers -> {
            for (String session : markers) {
                zk.delete(CellPaths.expiredMarker(session), -1).exceptionally(err -> null);
            }
        }).exceptionally(err -> null);
    }

    /** A queue node's token and data; null when it is gone (its deletion notification follows). */
    private CompletableFuture<MirroredLock.Node> node(String path, QueueEntry entry) {
        return zk.data(path).handle((ds, err) -> {
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    return null;
                }
                throw Zk.translate(err);
            }
            QueueNodeData data = Json.readOrNull(ds.data(), QueueNodeData.class);
            return new MirroredLock.Node(entry, tokens.applyAsLong(ds.stat().getCzxid()),
                    data == null ? null : data.sessionId(),
                    data == null ? null : data.clientId(), data != null && data.failsOnDeadlock());
        });
    }
}
