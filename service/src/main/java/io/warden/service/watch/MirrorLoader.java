package io.warden.service.watch;

import io.warden.service.lock.LockTree;
import io.warden.service.lock.QueueEntry;
import io.warden.service.lock.QueueListing;
import io.warden.service.lock.QueueNodeData;
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

/**
 * Reads the whole of {@code /locks} (every lock's queue and its nodes' data) and the lock-delay records, after a
 * {@code sync}: the starting point of the mirror. Not a snapshot: each lock's read carries the pzxid it reflects, and
 * the mirror replays newer notifications on top ({@link LockMirror}).
 *
 * <p>A lock too large to list ({@link QueueListing}) is read as its stat alone: its pzxid and how many entries it has
 * ({@link LockMirror.LockRead#unlisted()}); the read of the cell goes on, and the gateway keeps its ZooKeeper connection.
 *
 * <p>Thread-safety: stateless; futures complete on Curator's threads.
 */
final class MirrorLoader {
    private final Zk zk;
    private final QueueListing queues;

    MirrorLoader(Zk zk, QueueListing queues) {
        this.zk = zk;
        this.queues = queues;
    }

    CompletableFuture<LockMirror.Snapshot> load() {
        Map<String, LockMirror.LockRead> locks = new ConcurrentHashMap<>();
        return zk.sync(CellPaths.LOCKS)
                .thenCompose(v -> LockTree.walk(zk, queues, null, (name, path, r) -> {
                    long pzxid = r.stat().getPzxid();
                    if (!r.listed()) {
                        locks.put(name.toString(), new LockMirror.LockRead(pzxid, List.of(), r.entries()));
                        return CompletableFuture.completedFuture(null);
                    }
                    List<CompletableFuture<MirroredLock.Node>> reads = new ArrayList<>();
                    for (String child : r.children()) {
                        QueueEntry.parse(child).ifPresent(entry -> reads.add(node(path + "/" + child, entry)));
                    }
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
            return new MirroredLock.Node(entry, ds.stat().getCzxid(), data == null ? null : data.sessionId(),
                    data == null ? null : data.clientId());
        });
    }
}
