package io.warden.service.lock;

import io.warden.service.api.CheckResult;
import io.warden.service.api.Holder;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Waiter;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueListing;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Linearizable reads of locks (guarantee 6 of docs/guarantees.md): {@code sync} the lock's path so this gateway's
 * ZooKeeper server has applied every write committed before the call, then read the queue and its nodes.
 *
 * <p>A lock too large to list ({@link QueueListing}) is not read: both reads fail with
 * {@link io.warden.service.api.LockTooLargeException} (429, naming the lock and its entries).
 *
 * <p>Thread-safety: stateless apart from the shared {@link NodeInfoCache}; safe from any thread.
 */
public final class LockReader {
    private final Zk zk;
    private final NodeInfoCache nodes;
    private final QueueListing queues;

    LockReader(Zk zk, NodeInfoCache nodes, QueueListing queues) {
        this.zk = zk;
        this.nodes = nodes;
        this.queues = queues;
    }

    /** A linearizable view of the lock: {@code sync}, then the queue and its nodes. */
    public CompletableFuture<LockView> lock(LockName name) {
        String lockPath = CellPaths.lock(name);
        return syncedQueue(lockPath, "its holders and waiters cannot be shown").thenCompose(cs -> {
            LockQueue q = LockQueue.of(cs.children());
            return infos(lockPath, q.entries()).thenCompose(infos -> expiredSessions(infos, q.holders().size()).thenApply(expired -> {
                List<Holder> holders = new ArrayList<>();
                List<Waiter> waiters = new ArrayList<>();
                int holding = q.holders().size();
                for (int i = 0; i < infos.size(); i++) {
                    NodeInfo info = infos.get(i);
                    if (info == null) {
                        continue;
                    }
                    if (i < holding) {
                        holders.add(new Holder(info.sessionId(), info.clientId(), info.mode(), info.token(),
                                info.sessionId() != null && expired.contains(info.sessionId()), info.principal()));
                    } else {
                        waiters.add(new Waiter(info.sessionId(), info.clientId(), info.mode(), info.requestId(), i,
                                info.principal()));
                    }
                }
                LockView.LockMode mode = holders.isEmpty() ? LockView.LockMode.FREE : q.mode();
                return new LockView(name.toString(), mode, holders, waiters, cs.stat() == null ? 0 : cs.stat().getPzxid())
                        .withPermits(q.isEmpty() ? 0 : q.entries().get(0).permits());
            }));
        });
    }

    /** Linearizable: does {@code token} belong to a current holder, and what is the latest holder token. */
    public CompletableFuture<CheckResult> check(LockName name, long token) {
        String lockPath = CellPaths.lock(name);
        return syncedQueue(lockPath, "whether a token is current cannot be checked").thenCompose(cs -> {
            LockQueue q = LockQueue.of(cs.children());
            return infos(lockPath, q.holders()).thenApply(infos -> {
                Long latest = null;
                boolean current = false;
                for (NodeInfo info : infos) {
                    if (info == null) {
                        continue;
                    }
                    current |= info.token() == token;
                    latest = latest == null ? info.token() : Math.max(latest, info.token());
                }
                return new CheckResult(current, latest, cs.stat() == null ? 0 : cs.stat().getPzxid());
            });
        });
    }

    /**
     * Linearizable: the node of the holder whose token is {@code token}, or null when no holder of the lock has it
     * (released, expired, still waiting, or never made). Reads the holders' infos only (the cache answers most): the
     * cost does not grow with the waiters.
     */
    CompletableFuture<NodeInfo> holder(LockName name, long token) {
        String lockPath = CellPaths.lock(name);
        return syncedQueue(lockPath, "its holds cannot be found").thenCompose(cs -> {
            LockQueue q = LockQueue.of(cs.children());
            return infos(lockPath, q.holders()).thenApply(infos -> {
                for (NodeInfo info : infos) {
                    if (info != null && info.token() == token) {
                        return info;
                    }
                }
                return null;
            });
        });
    }

    /**
     * {@code sync}, then the lock's children: a read that reflects every write committed before the call. A lock node
     * that does not exist reads as an empty queue (with a null stat); one too large to list fails (what: what cannot
     * be done).
     */
    private CompletableFuture<Zk.ChildrenAndStat> syncedQueue(String lockPath, String what) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.sync(lockPath).thenCompose(v -> queues.read(lockPath, what)).handle((cs, err) -> {
            if (err == null) {
                return cs;
            }
            if (Zk.code(err) == Code.NONODE) {
                return new Zk.ChildrenAndStat(List.of(), null);
            }
            throw Zk.translate(err);
        });
    }

    /** The holders of a queue, as the API shows them. */
    CompletableFuture<List<Holder>> holders(String lockPath, LockQueue q) {
        return infos(lockPath, q.holders()).thenApply(infos -> {
            List<Holder> holders = new ArrayList<>();
            for (NodeInfo info : infos) {
                if (info != null) {
                    holders.add(new Holder(info.sessionId(), info.clientId(), info.mode(), info.token(), false,
                            info.principal()));
                }
            }
            return holders;
        });
    }

    /** Infos of the entries, in order; null for an entry whose node vanished meanwhile. Reads run in parallel. */
    CompletableFuture<List<NodeInfo>> infos(String lockPath, List<QueueEntry> entries) {
        List<CompletableFuture<NodeInfo>> reads = new ArrayList<>(entries.size());
        for (QueueEntry e : entries) {
            reads.add(nodes.get(lockPath, e));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<NodeInfo> out = new ArrayList<>(reads.size());
            for (CompletableFuture<NodeInfo> r : reads) {
                out.add(r.join());
            }
            return out;
        });
    }

    /** Sessions among the first {@code holders} infos whose record is gone: holds kept by lock-delay. */
    private CompletableFuture<Set<String>> expiredSessions(List<NodeInfo> infos, int holders) {
        Set<String> sessions = new HashSet<>();
        for (int i = 0; i < Math.min(holders, infos.size()); i++) {
            if (infos.get(i) != null && infos.get(i).sessionId() != null) {
                sessions.add(infos.get(i).sessionId());
            }
        }
        Set<String> expired = ConcurrentHashMap.newKeySet();
        List<CompletableFuture<Void>> checks = new ArrayList<>();
        for (String s : sessions) {
            checks.add(zk.exists(CellPaths.session(s)).thenAccept(stat -> {
                if (stat == null) {
                    expired.add(s);
                }
            }));
        }
        return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new)).thenApply(v -> expired);
    }
}
