package io.warden.service.lock;

import io.warden.service.api.LockName;
import io.warden.service.api.LockPage;
import io.warden.service.api.LockSummary;
import io.warden.service.api.Mode;
import io.warden.service.api.NamespaceStats;
import io.warden.service.api.WardenException;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.LockTree;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueListing;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import io.warden.service.time.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Lists live locks and per-namespace counts by walking {@code /locks} (a lock is live while its queue is not empty).
 * Reads after a {@code sync}, but across many nodes, so a listing is a recent view, not a snapshot.
 *
 * <p>{@link #namespaces()} walks every lock of the cell: concurrent callers share one walk, and its result is reused
 * for {@link #NAMESPACES_REUSE} after it completes (with a walk per call, eight callers in a loop slowed an acquire
 * from 10 ms to 800 ms). A failed walk is not reused.
 *
 * <p>A lock too large to list ({@link QueueListing}) is shown as such, with its entries and nothing else: a
 * {@link LockSummary#tooLarge}, a {@link ScannedLock} with {@code tooLargeEntries}, counted in
 * {@link NamespaceStats#tooLargeLocks()}. The rest of the listing is as usual.
 *
 * <p>Concurrency: {@code namespaces} and {@code namespacesDone} are guarded by {@code this}; everything else is
 * immutable.
 */
public final class LockLister {
    public static final int MAX_LIMIT = 1000;
    /** How long a completed namespaces walk is served again (on the gateway's clock). */
    public static final Duration NAMESPACES_REUSE = Duration.ofSeconds(1);
    private final Zk zk;
    private final LockEngine engine;
    private final QueueListing queues;
    private final Ticker ticker;
    /** The walk in flight or last completed; null before the first. Guarded by {@code this}. */
    private CompletableFuture<List<NamespaceStats>> namespaces;
    /** When {@code namespaces} completed (ticker nanos), valid once it is done. Guarded by {@code this}. */
    private long namespacesDone;

    public LockLister(Zk zk, LockEngine engine, Ticker ticker) {
        this.zk = zk;
        this.engine = engine;
        this.queues = engine.queues();
        this.ticker = ticker;
    }

    /** A live lock found: its queue, or (queue null) its entries when it is too large to list. */
    private record Found(String name, LockQueue queue, long pzxid, int tooLargeEntries) {
        static Found of(String name, QueueListing.QueueRead r) {
            return r.listed() ? new Found(name, LockQueue.of(r.children()), r.stat().getPzxid(), 0)
                    : new Found(name, null, r.stat().getPzxid(), r.entries());
        }

        boolean live() {
            return queue == null || !queue.isEmpty();
        }
    }

    /**
     * A lock's queue in order, with what each node says (for the console).
     *
     * @param pzxid           the zxid of the last change of the queue
     * @param tooLargeEntries 0 for a lock that was read; otherwise its entries, too many to list (then no nodes)
     */
    public record ScannedLock(String name, long pzxid, List<ScannedNode> nodes, int tooLargeEntries) {
        public ScannedLock {
            nodes = List.copyOf(nodes);
        }

        /** Whether it has anything to show: nodes, or entries too many to list. */
        boolean shown() {
            return !nodes.isEmpty() || tooLargeEntries > 0;
        }
    }

    /**
     * One queue node: {@code sessionId}, {@code requestId} are null (and {@code clientId} is "curator") for a direct-mode
     * client's node; {@code ctimeMs} is when it was created (ZooKeeper's ctime).
     */
    public record ScannedNode(String node, String sessionId, String clientId, String requestId, Mode mode, long token,
                              boolean holds, long ctimeMs) {
    }

    /** Every live lock with its whole queue, sorted by name; a recent view (read after a sync), not a snapshot. */
    public CompletableFuture<List<ScannedLock>> scan() {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return found(null).thenCompose(all -> {
            List<CompletableFuture<ScannedLock>> reads = new ArrayList<>(all.size());
            for (Found f : all) {
                reads.add(scanned(f));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(y -> {
                List<ScannedLock> out = new ArrayList<>(reads.size());
                for (CompletableFuture<ScannedLock> r : reads) {
                    if (r.join().shown()) {
                        out.add(r.join());
                    }
                }
                return out;
            });
        }).exceptionally(err -> {
            throw Zk.translate(err);
        });
    }

    /** One lock with its whole queue (or its entries, when too large to list), read after a sync; empty when its queue is empty. */
    public CompletableFuture<Optional<ScannedLock>> scan(LockName name) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String path = CellPaths.lock(name);
        return zk.sync(path).thenCompose(v -> queues.readOrCount(path)).thenCompose(r -> {
            Found f = Found.of(name.toString(), r);
            if (!f.live()) {
                return CompletableFuture.completedFuture(Optional.<ScannedLock>empty());
            }
            return scanned(f).thenApply(s -> s.shown() ? Optional.of(s) : Optional.<ScannedLock>empty());
        }).exceptionally(err -> {
            if (Zk.code(err) == Code.NONODE) {
                return Optional.empty();
            }
            throw Zk.translate(err);
        });
    }

    /** Reads the nodes of a found queue; a node deleted meanwhile is left out (the queue moved on). */
    private CompletableFuture<ScannedLock> scanned(Found f) {
        if (f.queue == null) {
            return CompletableFuture.completedFuture(new ScannedLock(f.name, f.pzxid, List.of(), f.tooLargeEntries));
        }
        return engine.reader().infos(CellPaths.lock(LockName.parse(f.name)), f.queue.entries()).thenApply(infos -> {
            List<ScannedNode> nodes = new ArrayList<>(infos.size());
            List<QueueEntry> entries = f.queue.entries();
            for (int i = 0; i < entries.size(); i++) {
                NodeInfo info = infos.get(i);
                if (info != null) {
                    nodes.add(new ScannedNode(entries.get(i).node(), info.sessionId(), info.clientId(), info.requestId(),
                            info.mode(), info.token(), f.queue.holds(i), info.ctimeMs()));
                }
            }
            return new ScannedLock(f.name, f.pzxid, nodes, 0);
        });
    }

    public CompletableFuture<LockPage> locks(String namespace, String prefix, int limit, String after) {
        try {
            if (namespace != null) {
                LockName.validateNamespace("namespace", namespace);
            }
            if (limit < 1 || limit > MAX_LIMIT) {
                throw WardenException.invalid("limit", "must be between 1 and " + MAX_LIMIT + ", got " + limit);
            }
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.sync(CellPaths.LOCKS).thenCompose(v -> LockTree.names(zk, namespace)).thenCompose(all -> {
            List<LockTree.Named> candidates = new ArrayList<>();
            for (LockTree.Named n : all) {
                String name = n.name().toString();
                String relative = namespace == null ? name : name.substring(namespace.length() + 1);
                if ((prefix == null || relative.startsWith(prefix)) && (after == null || name.compareTo(after) > 0)) {
                    candidates.add(n);
                }
            }
            candidates.sort(Comparator.comparing(n -> n.name().toString()));
            return page(candidates, 0, limit, new ArrayList<>());
        }).exceptionally(err -> {
            throw Zk.translate(err);
        });
    }

    /**
     * Reads the queues of {@code candidates} (sorted by name) from {@code from} on, a batch at a time, until
     * {@code limit} + 1 live locks are found or the candidates run out: a page costs about {@code limit} queue reads
     * whatever the size of the namespace (before, every lock's queue was read for every page).
     */
    private CompletableFuture<LockPage> page(List<LockTree.Named> candidates, int from, int limit, List<LockSummary> live) {
        if (live.size() > limit || from >= candidates.size()) {
            String next = live.size() > limit ? live.get(limit - 1).name() : null;
            return CompletableFuture.completedFuture(new LockPage(live.subList(0, Math.min(limit, live.size())), next, 0));
        }
        int to = Math.min(candidates.size(), from + limit + 1 - live.size());
        List<CompletableFuture<LockSummary>> reads = new ArrayList<>(to - from);
        for (LockTree.Named n : candidates.subList(from, to)) {
            reads.add(queues.readOrCount(n.lockPath()).handle((r, err) -> {
                if (err != null) {
                    if (Zk.code(err) == Code.NONODE) {
                        return null; // reaped meanwhile
                    }
                    throw Zk.translate(err);
                }
                if (!r.listed()) {
                    return LockSummary.tooLarge(n.name().toString(), r.entries());
                }
                LockQueue q = LockQueue.of(r.children());
                return q.isEmpty() ? null
                        : new LockSummary(n.name().toString(), q.mode(), q.holders().size(), q.waiters().size());
            }));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            for (CompletableFuture<LockSummary> r : reads) {
                if (r.join() != null) {
                    live.add(r.join());
                }
            }
            return page(candidates, to, limit, live);
        });
    }

    /**
     * Counts per namespace: one walk shared by concurrent callers, reused for {@link #NAMESPACES_REUSE} after it
     * completed, so a reply may be that much older than the call.
     */
    public CompletableFuture<List<NamespaceStats>> namespaces() {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<List<NamespaceStats>> walk;
        synchronized (this) {
            CompletableFuture<List<NamespaceStats>> last = namespaces;
            boolean reusable = last != null && (!last.isDone()
                    || (!last.isCompletedExceptionally() && ticker.read() - namespacesDone <= NAMESPACES_REUSE.toNanos()));
            if (reusable) {
                return last.copy(); // a caller's cancel or completion must not reach the shared walk
            }
            walk = new CompletableFuture<>();
            namespaces = walk;
        }
        // Started outside the lock: the walk may complete on this thread, and its completion takes the lock.
        CompletableFuture<List<NamespaceStats>> started;
        try {
            started = walkNamespaces();
        } catch (RuntimeException e) {
            started = CompletableFuture.failedFuture(e); // never leave the shared walk pending for ever
        }
        started.whenComplete((stats, err) -> {
            synchronized (this) {
                namespacesDone = ticker.read();
            }
            if (err != null) {
                walk.completeExceptionally(err);
            } else {
                walk.complete(List.copyOf(stats));
            }
        });
        return walk.copy();
    }

    private CompletableFuture<List<NamespaceStats>> walkNamespaces() {
        return zk.sync(CellPaths.LOCKS).thenCompose(v -> namespaces(null)).thenCompose(spaces -> {
            List<CompletableFuture<NamespaceStats>> stats = new ArrayList<>();
            for (String ns : spaces) {
                ConcurrentLinkedQueue<Found> found = new ConcurrentLinkedQueue<>();
                stats.add(walk(ns, found).thenCompose(x -> {
                    List<CompletableFuture<List<NodeInfo>>> infos = new ArrayList<>();
                    int holders = 0;
                    int waiters = 0;
                    int tooLarge = 0;
                    for (Found f : found) {
                        if (f.queue == null) {
                            tooLarge++;
                            continue;
                        }
                        holders += f.queue.holders().size();
                        waiters += f.queue.waiters().size();
                        infos.add(engine.reader().infos(CellPaths.lock(LockName.parse(f.name)), f.queue.entries()));
                    }
                    int h = holders;
                    int w = waiters;
                    int big = tooLarge;
                    return CompletableFuture.allOf(infos.toArray(CompletableFuture[]::new)).thenApply(y -> {
                        Set<String> sessions = new HashSet<>();
                        for (CompletableFuture<List<NodeInfo>> i : infos) {
                            for (NodeInfo info : i.join()) {
                                if (info != null && info.sessionId() != null) {
                                    sessions.add(info.sessionId());
                                }
                            }
                        }
                        return new NamespaceStats(ns, found.size(), h, w, sessions.size(), big);
                    });
                }));
            }
            return CompletableFuture.allOf(stats.toArray(CompletableFuture[]::new)).thenApply(x -> {
                List<NamespaceStats> out = new ArrayList<>();
                stats.forEach(s -> out.add(s.join()));
                out.sort(Comparator.comparing(NamespaceStats::namespace));
                return out;
            });
        }).exceptionally(err -> {
            throw Zk.translate(err);
        });
    }

    /** Every live lock in {@code namespace} (all namespaces when null), sorted by name, read after a sync. */
    private CompletableFuture<List<Found>> found(String namespace) {
        return zk.sync(CellPaths.LOCKS).thenCompose(v -> namespaces(namespace)).thenCompose(spaces -> {
            ConcurrentLinkedQueue<Found> found = new ConcurrentLinkedQueue<>();
            List<CompletableFuture<Void>> walks = new ArrayList<>();
            for (String ns : spaces) {
                walks.add(walk(ns, found));
            }
            return CompletableFuture.allOf(walks.toArray(CompletableFuture[]::new)).thenApply(x -> {
                List<Found> all = new ArrayList<>(found);
                all.sort(Comparator.comparing(Found::name));
                return all;
            });
        });
    }

    private CompletableFuture<List<String>> namespaces(String only) {
        if (only != null) {
            return CompletableFuture.completedFuture(List.of(only));
        }
        return zk.children(CellPaths.LOCKS).exceptionally(err -> {
            if (Zk.code(err) == Code.NONODE) {
                return List.of();
            }
            throw Zk.translate(err);
        });
    }

    /** Collects every live lock of {@code namespace} (all when null). */
    private CompletableFuture<Void> walk(String namespace, ConcurrentLinkedQueue<Found> found) {
        return LockTree.walk(zk, queues, namespace, (name, path, r) -> {
            Found f = Found.of(name.toString(), r);
            if (f.live()) {
                found.add(f);
            }
            return CompletableFuture.completedFuture(null);
        });
    }
}
