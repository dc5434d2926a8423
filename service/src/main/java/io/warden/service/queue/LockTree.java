package io.warden.service.queue;

import io.warden.service.api.LockName;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The walk of {@code /locks} ({@code /locks/{namespace}/{shard}/{leaf}}, see {@link CellPaths#lock}), written once for
 * every reader of the whole tree: the listings, the console's scan and the watch mirror's rebuild. Each lock node's
 * children (its queue) and stat are read once, through {@link QueueListing}, and handed to the visitor; a lock too large
 * to list is handed over with its stat alone ({@link QueueListing.QueueRead#listed()} false), so one lock never stops
 * (nor disconnects) a walk. Nodes that are not where a lock of their name would be are passed over. No read returns more
 * than one shard's lock names or one lock's queue.
 *
 * <p>Thread-safety: stateless; the visitor is called on Curator's event thread, concurrently for different locks.
 */
public final class LockTree {
    /** Receives one lock node's queue; the walk completes when every returned future has. */
    @FunctionalInterface
    public interface Visitor {
        CompletableFuture<?> visit(LockName name, String lockPath, QueueListing.QueueRead queue);
    }

    private LockTree() {
    }

    /** Walks every lock of {@code namespace}, or of every namespace when it is null. */
    public static CompletableFuture<Void> walk(Zk zk, QueueListing queues, String namespace, Visitor visitor) {
        return lockNodes(zk, namespace, (name, lockPath) -> queues.readOrCount(lockPath).handle((cs, err) -> {
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    return CompletableFuture.completedFuture(null); // reaped meanwhile
                }
                throw Zk.translate(err);
            }
            return visitor.visit(name, lockPath, cs);
        }).thenCompose(f -> f));
    }

    /** A lock node found by {@link #names}: its name and path. */
    public record Named(LockName name, String lockPath) {
    }

    /**
     * Every lock node of {@code namespace} (all namespaces when null), by name only: one {@code getChildren} per
     * namespace and per shard (4,096 per namespace), none per lock. A node found may be empty (a free lock ZooKeeper
     * has not reaped yet).
     */
    public static CompletableFuture<List<Named>> names(Zk zk, String namespace) {
        ConcurrentLinkedQueue<Named> found = new ConcurrentLinkedQueue<>();
        return lockNodes(zk, namespace, (name, lockPath) -> {
            found.add(new Named(name, lockPath));
            return CompletableFuture.completedFuture(null);
        }).thenApply(v -> new ArrayList<>(found));
    }

    private interface NodeStep {
        CompletableFuture<?> apply(LockName name, String lockPath);
    }

    /** Lists namespaces, shards and leaves, and calls {@code step} for each leaf where a lock of its name would be. */
    private static CompletableFuture<Void> lockNodes(Zk zk, String namespace, NodeStep step) {
        CompletableFuture<List<String>> spaces = namespace != null ? CompletableFuture.completedFuture(List.of(namespace))
                : zk.childrenOrEmpty(CellPaths.LOCKS);
        return spaces.thenCompose(nss -> all(nss, ns -> {
            String nsPath = CellPaths.LOCKS + "/" + ns;
            return children(zk, nsPath).thenCompose(shards -> all(shards, shard -> {
                String shardPath = nsPath + "/" + shard;
                return children(zk, shardPath).thenCompose(leaves -> all(leaves, leaf -> {
                    String lockPath = shardPath + "/" + leaf;
                    LockName name = CellPaths.lockName(lockPath);
                    return name == null ? CompletableFuture.completedFuture(null) : step.apply(name, lockPath);
                }));
            }));
        }));
    }

    /** The children, or none when the node was reaped meanwhile. */
    private static CompletableFuture<List<String>> children(Zk zk, String path) {
        return zk.childrenOrEmpty(path);
    }

    private interface Step {
        CompletableFuture<?> apply(String child);
    }

    private static CompletableFuture<Void> all(List<String> children, Step step) {
        List<CompletableFuture<?>> work = new ArrayList<>(children.size());
        for (String child : children) {
            work.add(step.apply(child));
        }
        return CompletableFuture.allOf(work.toArray(CompletableFuture[]::new));
    }
}
