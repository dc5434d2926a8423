package io.warden.service.lock;

import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueNodeData;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException;

import java.util.concurrent.CompletableFuture;

/**
 * Reads queue nodes' data and tokens (czxid plus the cell's token floor, which never changes for an existing node),
 * remembering them. A queue node's path is unique forever (its name carries a
 * UUID) and its data never changes, so a cached entry can be stale only in that the node is gone — and callers look up
 * only nodes they have just seen among a lock's children.
 *
 * <p>Concurrency: a concurrent map keeping at most {@link #MAX_ENTRIES} entries, least recently used evicted first (a
 * miss costs one read). Each entry is a queue node's path and data, a few hundred bytes: about 15 MB at most.
 */
final class NodeInfoCache {
    static final int MAX_ENTRIES = 50_000;
    private final Zk zk;
    private final io.warden.service.cell.Tokens tokens;
    private final java.util.Map<String, NodeInfo> cache = Hints.bounded(MAX_ENTRIES);

    NodeInfoCache(Zk zk, io.warden.service.cell.Tokens tokens) {
        this.zk = zk;
        this.tokens = tokens;
    }

    /** Forgets every node (the cell went back: a path may come again, made at another zxid). */
    void clear() {
        cache.clear();
    }

    void put(NodeInfo info) {
        cache.put(info.path(), info);
    }

    void forget(String path) {
        cache.remove(path);
    }

    /** The node's info, or null when the node no longer exists. */
    CompletableFuture<NodeInfo> get(String lockPath, QueueEntry entry) {
        String path = lockPath + "/" + entry.node();
        NodeInfo cached = cache.get(path);
        if (cached != null) {
            return CompletableFuture.completedFuture(cached);
        }
        return zk.data(path).handle((ds, err) -> {
            if (err != null) {
                if (Zk.code(err) == KeeperException.Code.NONODE) {
                    return null;
                }
                throw Zk.translate(err);
            }
            NodeInfo info = new NodeInfo(path, tokens.of(ds.stat().getCzxid()), entry.mode(),
                    Json.readOrNull(ds.data(), QueueNodeData.class),
                    ds.stat().getCtime());
            put(info);
            return info;
        });
    }
}
