package io.warden.service.zk;

import io.warden.service.api.WardenException;
import io.warden.service.metrics.WardenMetrics;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * The engine's ZooKeeper I/O: Curator background operations turned into {@link CompletableFuture}s, so no
 * request thread ever waits on ZooKeeper. Paths are relative to the cell's chroot (Curator's namespace).
 *
 * <p>Concurrency: futures complete on Curator's event thread. The reply listener ({@link #onReply}) is a volatile
 * field, set once at start and called first in every callback. Continuations must not block; they may start
 * more operations.
 *
 * <p>Errors: a ZooKeeper error completes the future with {@link KeeperException} (callers match on its code);
 * {@link #failFast()} turns a lost connection into {@link WardenException} UNAVAILABLE before anything is sent.
 *
 * <p>Group commit: {@link #multi} calls, and {@link #childrenAndStat} reads, that arrive while one of their kind is in
 * flight go to ZooKeeper together in the next request ({@link GroupCommit}, {@link GroupRead}; docs/design.md, "Group
 * commit"), and each is answered as if it had been sent alone. The other operations are sent as they come.
 */
public final class Zk {
    private final CuratorFramework client;
    private final WardenMetrics metrics;
    /**
     * Counts connection losses (SUSPENDED and LOST) and every operation that failed for its connection; see
     * {@link MultiFailure#maybeApplied()}. The operations are counted by the retry policy ({@link Retries}), on the
     * thread that decides whether Curator sends one again and before it is queued, so a retried operation's reply, or
     * the failure of one not retried, always sees the count moved. The state listener alone is not enough: Curator runs
     * it on a thread of its own, which may not have heard of a loss by the time a retried operation's reply comes back
     * (a release applied would be answered {@code released:false};
     * {@code LostReplyTest.release_whoseReplyIsLost_answersReleased_evenWhile*}).
     */
    private final java.util.concurrent.atomic.AtomicLong disconnects = new java.util.concurrent.atomic.AtomicLong();

    /**
     * How long ZooKeeper may leave this gateway's requests unanswered before {@link #failFast()} refuses new calls (a
     * frozen server, a black-holed link). ZooKeeper's client notices only after its read timeout, 2/3 of the session
     * timeout (6.7 s by default), and says "connected" until then; every call made meanwhile would hang. The sessions'
     * sync probe (every B/4, 1.25 s by default) keeps a request outstanding often enough for a freeze to show within
     * about B/4 + this. Requests already sent are not cut short: only the client's timeout or the connection loss ends
     * them, so a write that was applied is still seen as such ({@link MultiFailure#maybeApplied()}).
     */
    public static final long STALL_AFTER_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    /**
     * Send times (System.nanoTime) of the requests not yet answered, with how many were sent at that instant. Guarded
     * by {@code stall}. A request whose reply never comes (a bug, a client closing) cannot make the gateway look stalled
     * for long: any reply to a request sent later clears the verdict (see {@link #stalled()}).
     */
    private final java.util.TreeMap<Long, Integer> unanswered = new java.util.TreeMap<>();
    /** When the latest reply came (System.nanoTime). Guarded by {@code stall}. */
    private long lastReply = System.nanoTime();
    private final Object stall = new Object();

    /** The cell's name, in what a refusal says. */
    private final String cell;
    /** Writes ({@link #multi}) grouped into batches. */
    private final GroupCommit writes;
    /** Lock reads ({@link #childrenAndStat}) grouped into read-only batches. */
    private final GroupRead reads;
    /** One {@code sync} for each burst of callers of {@link #sharedSync}. */
    private final SharedSync syncs;

    /** With the default batching ({@link Batching#DEFAULT}). */
    public Zk(CuratorFramework client, WardenMetrics metrics) {
        this(client, metrics, Batching.DEFAULT);
    }

    public Zk(CuratorFramework client, WardenMetrics metrics, Batching batching) {
        this(client, metrics, batching, "default");
    }

    /** {@code cell}: the name of the cell this client serves, for what its refusals say (a gateway may serve several). */
    public Zk(CuratorFramework client, WardenMetrics metrics, Batching batching, String cell) {
        this.cell = cell;
        this.client = client;
        this.metrics = metrics;
        this.writes = new GroupCommit(this, batching, metrics, disconnects::get);
        this.reads = new GroupRead(this, batching, metrics);
        this.syncs = new SharedSync(this, "/");
        metrics.batchQueue("write", writes::queued);
        metrics.batchQueue("read", reads::queued);
        org.apache.curator.RetryPolicy retries = client.getZookeeperClient().getRetryPolicy();
        client.getZookeeperClient().setRetryPolicy(new Retries(retries));
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (!state.isConnected()) {
                disconnects.incrementAndGet();
            } else {
                heard(); // a (re)connection is news from ZooKeeper: requests sent before it are not a stall
            }
            metrics.connectionState(state);
        });
    }

    /** Told of the result code of every reply, on the thread that got it; see {@link #onReply}. */
    private volatile java.util.function.IntConsumer replyListener = rc -> { };

    /**
     * Sets what is told of every reply's result code, first thing on the thread that handles it (ZooKeeper's event
     * thread, in order with watch notifications): the watch feed learns from it, for free, that a transaction whose
     * notifications came before the reply is complete. It must not block.
     */
    public void onReply(java.util.function.IntConsumer listener) {
        replyListener = listener;
    }

    /** Told of the zxids each reply carries in its stats; see {@link #onZxid}. */
    private volatile java.util.function.LongConsumer zxidListener = z -> { };

    /**
     * Sets what is told of the highest zxid in every reply's stats (czxid, mzxid, pzxid: all committed), first thing on
     * the thread that handles the reply: the gateway's high-water mark of its cell. It must not block.
     */
    public void onZxid(java.util.function.LongConsumer listener) {
        zxidListener = listener;
    }

    private void sawStat(Stat stat) {
        if (stat != null) {
            zxidListener.accept(Math.max(stat.getMzxid(), Math.max(stat.getCzxid(), stat.getPzxid())));
        }
    }

    public CuratorFramework client() {
        return client;
    }

    /** Whether ZooKeeper's client is connected now (read from the client itself; state events arrive later). */
    public boolean connected() {
        boolean connected = client.getZookeeperClient().isConnected();
        if (!connected) {
            sawDisconnected = true;
        } else if (sawDisconnected) {
            // Connected again, maybe before the state listener hears of it: requests Curator kept through the outage
            // (it sends them again after reconnecting) must not make the gateway look stalled meanwhile.
            sawDisconnected = false;
            heard();
        }
        return connected;
    }

    /** Set when {@link #connected()} found the client disconnected, cleared when it finds it connected again. */
    private volatile boolean sawDisconnected;

    private void heard() {
        long now = System.nanoTime();
        synchronized (stall) {
            lastReply = now;
        }
    }

    /**
     * The id of the client's current ZooKeeper session, or 0 when it has none. Watches belong to a ZooKeeper session: a
     * watch set while this returned X is gone once it returns anything else.
     */
    public long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /**
     * Throws UNAVAILABLE at once when ZooKeeper is not connected, or has left requests unanswered for
     * {@link #STALL_AFTER_NANOS}: the API answers 503 quickly instead of hanging. Nothing has been sent when it throws.
     */
    public void failFast() {
        if (!connected()) {
            throw WardenException.unavailable("ZooKeeper of cell " + cell + " is not reachable from this gateway (no "
                    + "quorum or no connection); try again shortly", null);
        }
        if (stalled()) {
            throw WardenException.unavailable("ZooKeeper of cell " + cell + " has not answered this gateway for over "
                    + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(STALL_AFTER_NANOS) + " ms; try again shortly", null);
        }
    }

    /**
     * Whether a request sent more than {@link #STALL_AFTER_NANOS} ago is unanswered and no reply at all has come since
     * it was sent: ZooKeeper has stopped answering this gateway.
     */
    public boolean stalled() {
        long now = System.nanoTime();
        synchronized (stall) {
            Long sent = unanswered.floorKey(now - STALL_AFTER_NANOS); // the latest request sent before the cutoff
            return sent != null && sent - lastReply > 0;
        }
    }

    private long sent() {
        long now = System.nanoTime();
        synchronized (stall) {
            unanswered.merge(now, 1, Integer::sum);
        }
        return now;
    }

    /** The request sent at {@code sentAt} was never sent after all (the client refused it): no news either way. */
    private void neverSent(long sentAt) {
        synchronized (stall) {
            unanswered.computeIfPresent(sentAt, (k, n) -> n == 1 ? null : n - 1);
        }
    }

    /**
     * The request sent at {@code sentAt} is over, with result code {@code rc}. A CONNECTIONLOSS is made by the client
     * itself when it gives up on its connection: no news from ZooKeeper, so a gateway that was stalled stays so.
     */
    private void answered(long sentAt, int rc) {
        long now = System.nanoTime();
        synchronized (stall) {
            unanswered.computeIfPresent(sentAt, (k, n) -> n == 1 ? null : n - 1);
            if (rc != KeeperException.Code.CONNECTIONLOSS.intValue()) {
                lastReply = now;
            }
        }
    }

    public CompletableFuture<List<String>> children(String path) {
        return call("getChildren", (cb) -> client.getChildren().inBackground(cb).forPath(path), CuratorEvent::getChildren);
    }

    /** The children, or an empty list when the node does not exist. */
    public CompletableFuture<List<String>> childrenOrEmpty(String path) {
        return children(path).exceptionally(err -> {
            if (code(err) == KeeperException.Code.NONODE) {
                return List.of();
            }
            throw translate(err);
        });
    }

    /**
     * The children of every shard of {@code parent} ({@code parent/00} … {@code parent/ff}, see
     * {@link CellPaths#shards}), read in parallel and put together: each read is small; the whole list is in memory.
     */
    public CompletableFuture<List<String>> shardedChildren(String parent) {
        List<CompletableFuture<List<String>>> reads = new java.util.ArrayList<>(CellPaths.SESSION_SHARDS);
        for (String shard : CellPaths.shards()) {
            reads.add(childrenOrEmpty(parent + "/" + shard));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<String> all = new java.util.ArrayList<>();
            reads.forEach(r -> all.addAll(r.join()));
            return all;
        });
    }

    /**
     * Children and the parent's stat (its pzxid is the zxid of the last change to the children). Reads that arrive
     * while one is in flight go together in one read-only {@code multi} ({@link GroupRead}); each is sent no earlier
     * than it is made, so it sees every write whose reply came before.
     */
    public CompletableFuture<ChildrenAndStat> childrenAndStat(String path) {
        return reads.read(path);
    }

    /** {@link #childrenAndStat} in a request of its own, with Curator's retries; {@link GroupRead} meters it. */
    CompletableFuture<ChildrenAndStat> childrenAndStatAlone(String path) {
        return call("getChildren", false, (cb) -> client.getChildren().inBackground(cb).forPath(path),
                e -> new ChildrenAndStat(e.getChildren(), e.getStat()));
    }

    /**
     * One read-only {@code multi}: {@code getChildren} and {@code getData} of each path, in order. Sent on ZooKeeper's
     * own handle (Curator's transactions take writes only), so with no retry: the future fails, or completes with null
     * results, when the request failed as a whole; per-path failures are {@link org.apache.zookeeper.OpResult.ErrorResult}s.
     */
    CompletableFuture<List<org.apache.zookeeper.OpResult>> readMulti(List<String> paths) {
        CompletableFuture<List<org.apache.zookeeper.OpResult>> f = new CompletableFuture<>();
        long sentAt = sent();
        try {
            List<org.apache.zookeeper.Op> ops = new java.util.ArrayList<>(2 * paths.size());
            for (String path : paths) {
                String full = org.apache.curator.utils.ZKPaths.fixForNamespace(client.getNamespace(), path);
                ops.add(org.apache.zookeeper.Op.getChildren(full));
                ops.add(org.apache.zookeeper.Op.getData(full));
            }
            client.getZookeeperClient().getZooKeeper().multi(ops, (rc, p, ctx, results) -> {
                answered(sentAt, rc);
                replyListener.accept(rc);
                if (results != null) {
                    results.forEach(r -> sawStat(r instanceof org.apache.zookeeper.OpResult.GetDataResult d ? d.getStat() : null));
                }
                f.complete(results);
            }, null);
        } catch (Exception e) {
            neverSent(sentAt);
            f.completeExceptionally(e);
        }
        return f;
    }

    public CompletableFuture<DataAndStat> data(String path) {
        return call("getData", (cb) -> client.getData().inBackground(cb).forPath(path),
                e -> new DataAndStat(e.getData(), e.getStat()));
    }

    /**
     * Reads the data and leaves a one-shot watch on the node. A node that does not exist fails with NONODE and leaves
     * no watch (unlike {@code exists}, whose watch would wait for the node's creation), as Curator's
     * {@code LockInternals} relies on.
     */
    public CompletableFuture<DataAndStat> dataWatched(String path, Watcher watcher) {
        return call("getData", (cb) -> client.getData().usingWatcher(watcher).inBackground(cb).forPath(path),
                e -> new DataAndStat(e.getData(), e.getStat()));
    }

    /**
     * Reads the node's children and leaves a one-shot children watch on it (fired by a child's creation or deletion, or
     * the node's). A node that does not exist fails with NONODE and leaves no watch.
     */
    public CompletableFuture<ChildrenAndStat> childrenWatched(String path, Watcher watcher) {
        return call("getChildren", (cb) -> client.getChildren().usingWatcher(watcher).inBackground(cb).forPath(path),
                e -> new ChildrenAndStat(e.getChildren(), e.getStat()));
    }

    /** As {@link #removeDataWatches}, for the node's one-shot children watches. */
    public CompletableFuture<Void> removeChildrenWatches(String path) {
        return call("removeWatches", (cb) -> client.watchers().removeAll().ofType(Watcher.WatcherType.Children).locally()
                .inBackground(cb).forPath(path), e -> (Void) null).exceptionally(err -> {
            if (code(err) == KeeperException.Code.NOWATCHER) {
                return null;
            }
            throw translate(err);
        });
    }

    /**
     * Takes every one-shot data watch on the node off this client and off the server (ZooKeeper's
     * {@code removeAllWatches}; removing one watcher object only clears it on the client, and the server's watch stays
     * until the node changes). Local removal happens even when the server cannot be asked. Completes normally when
     * there was no watch to remove.
     */
    public CompletableFuture<Void> removeDataWatches(String path) {
        return call("removeWatches", (cb) -> client.watchers().removeAll().ofType(Watcher.WatcherType.Data).locally()
                .inBackground(cb).forPath(path), e -> (Void) null).exceptionally(err -> {
            if (code(err) == KeeperException.Code.NOWATCHER) {
                return null;
            }
            throw translate(err);
        });
    }

    /** The node's stat, or null when it does not exist. */
    public CompletableFuture<Stat> exists(String path) {
        return call("exists", (cb) -> client.checkExists().inBackground(cb).forPath(path), CuratorEvent::getStat);
    }

    /**
     * The node's stat, or null when it does not exist, leaving a one-shot watch either way (fired by the node's
     * creation, change or deletion).
     */
    public CompletableFuture<Stat> existsWatched(String path, Watcher watcher) {
        return call("exists", (cb) -> client.checkExists().usingWatcher(watcher).inBackground(cb).forPath(path),
                CuratorEvent::getStat);
    }

    public CompletableFuture<String> create(String path, byte[] data, CreateMode mode, boolean parentsAsContainers) {
        return call("create", (cb) -> {
            if (parentsAsContainers) {
                client.create().creatingParentContainersIfNeeded().withMode(mode).inBackground(cb).forPath(path, data);
            } else {
                client.create().withMode(mode).inBackground(cb).forPath(path, data);
            }
        }, CuratorEvent::getName);
    }

    public CompletableFuture<Stat> setData(String path, byte[] data, int version) {
        return call("setData", (cb) -> client.setData().withVersion(version).inBackground(cb).forPath(path, data), CuratorEvent::getStat);
    }

    public CompletableFuture<Void> delete(String path, int version) {
        return call("delete", (cb) -> client.delete().withVersion(version).inBackground(cb).forPath(path), e -> (Void) null);
    }

    /** Flushes the channel between this gateway's server and the leader, so the next read is linearizable. */
    public CompletableFuture<Void> sync(String path) {
        return call("sync", (cb) -> client.sync().inBackground(cb).forPath(path), e -> (Void) null);
    }

    /**
     * As {@link #sync}, but one {@code sync} serves every caller that asked before it was sent ({@link SharedSync}):
     * completes once a sync sent after this call has been answered, so a read made then is linearizable.
     */
    public CompletableFuture<Void> sharedSync() {
        return syncs.sync();
    }

    /**
     * A ZooKeeper {@code multi} of this call's operations: all or nothing. On failure the future fails with
     * {@link MultiFailure}, which says which of these operations failed and why. Calls that arrive while one is in
     * flight go to ZooKeeper together ({@link GroupCommit}); each is answered exactly as if it had been sent alone.
     */
    public CompletableFuture<List<CuratorTransactionResult>> multi(List<CuratorOp> ops) {
        return writes.multi(ops);
    }

    /** The reply to one {@code multi} request: its result code and per-operation results (null when none came). */
    record MultiReply(int rc, List<CuratorTransactionResult> results) {
    }

    /** Sends one {@code multi} request as is (Curator retries it after a connection loss); {@link GroupCommit} meters it. */
    CompletableFuture<MultiReply> sendMulti(List<CuratorOp> ops) {
        CompletableFuture<MultiReply> f = new CompletableFuture<>();
        long sentAt = sent();
        BackgroundCallback cb = (c, event) -> {
            answered(sentAt, event.getResultCode());
            replyListener.accept(event.getResultCode());
            if (event.getOpResults() != null) {
                event.getOpResults().forEach(r -> sawStat(r.getResultStat()));
            }
            f.complete(new MultiReply(event.getResultCode(), event.getOpResults()));
        };
        try {
            client.transaction().inBackground(cb).forOperations(ops);
        } catch (Exception e) {
            neverSent(sentAt);
            f.completeExceptionally(e);
        }
        return f;
    }

    /**
     * Sets a persistent recursive watch on {@code fullPath} (chroot included) through ZooKeeper's own handle {@code h}
     * (Curator has no asynchronous form of it); completes once the server has set it, or fails with its error.
     */
    public static CompletableFuture<Void> addPersistentRecursiveWatch(org.apache.zookeeper.ZooKeeper h, String fullPath,
                                                                     Watcher watcher) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        try {
            h.addWatch(fullPath, watcher, org.apache.zookeeper.AddWatchMode.PERSISTENT_RECURSIVE, (rc, p, ctx) -> {
                if (rc == KeeperException.Code.OK.intValue()) {
                    f.complete(null);
                } else {
                    f.completeExceptionally(KeeperException.create(KeeperException.Code.get(rc), p));
                }
            }, null);
        } catch (RuntimeException e) {
            f.completeExceptionally(e);
        }
        return f;
    }

    /** Builds transaction operations ({@code zk.ops().create()...}). */
    public org.apache.curator.framework.api.transaction.TransactionOp ops() {
        return client.transactionOp();
    }

    private interface Starter {
        void start(BackgroundCallback cb) throws Exception;
    }

    private <T> CompletableFuture<T> call(String op, Starter starter, Function<CuratorEvent, T> result) {
        return call(op, true, starter, result);
    }

    private <T> CompletableFuture<T> call(String op, boolean metered, Starter starter, Function<CuratorEvent, T> result) {
        long start = System.nanoTime();
        CompletableFuture<T> f = new CompletableFuture<>();
        long sentAt = sent();
        BackgroundCallback cb = (c, event) -> {
            int rc = event.getResultCode();
            answered(sentAt, rc);
            replyListener.accept(rc);
            sawStat(event.getStat());
            if (metered) {
                metrics.zkOperation(op, System.nanoTime() - start, rc);
            }
            if (rc == 0) {
                try {
                    f.complete(result.apply(event));
                } catch (RuntimeException e) {
                    f.completeExceptionally(e);
                }
            } else if (rc == KeeperException.Code.NONODE.intValue() && op.equals("exists")) {
                f.complete(null);
            } else {
                f.completeExceptionally(KeeperException.create(KeeperException.Code.get(rc), event.getPath()));
            }
        };
        try {
            starter.start(cb);
        } catch (Exception e) {
            neverSent(sentAt);
            f.completeExceptionally(e);
        }
        return f;
    }

    /** The KeeperException code of a failure (unwrapping CompletionException), or null when it is not one. */
    public static KeeperException.Code code(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof KeeperException ke) {
            return ke.code();
        }
        if (c instanceof MultiFailure mf) {
            return mf.code();
        }
        return null;
    }

    public static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof java.util.concurrent.ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /**
     * Whether {@code t} (or what it wraps) failed for the connection to ZooKeeper — lost, timed out, the session expired
     * or moved, a read-only server — rather than for what the request asked: trying again later may succeed.
     */
    public static boolean connectionTrouble(Throwable t) {
        KeeperException.Code code = code(unwrap(t));
        return code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.SESSIONEXPIRED
                || code == KeeperException.Code.OPERATIONTIMEOUT || code == KeeperException.Code.SESSIONMOVED
                || code == KeeperException.Code.NOTREADONLY;
    }

    /** Maps ZooKeeper trouble that the client cannot fix to UNAVAILABLE; passes WardenExceptions through. */
    public static RuntimeException translate(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof WardenException we) {
            return we;
        }
        if (connectionTrouble(c)) {
            return WardenException.unavailable("ZooKeeper did not answer (" + code(c) + "); try again shortly", c);
        }
        if (c instanceof RuntimeException re) {
            return re;
        }
        return new IllegalStateException(c);
    }

    /**
     * The client's retry policy, which Curator asks each time an operation fails for its connection (a loss, a timeout,
     * an expired or moved session). Each time is counted in {@link #disconnects}, before Curator sends the operation
     * again or gives up: either way a write in flight may have been applied ({@link MultiFailure#maybeApplied()}).
     *
     * <p>An operation is not sent again while ZooKeeper has stopped answering this gateway ({@link #stalled()}: a frozen
     * server, a black-holed link, noticed only at the client's read timeout). Curator decides a retry on ZooKeeper's
     * event thread and sends it on one of its own a moment later, judging the connection from a flag that event thread
     * sets only once it has run every callback the loss completed; when those take longer than the retry's back-off,
     * the operation goes to a client that is connecting to the same silent server and waits out the connection timeout
     * (the session timeout over the number of servers), once per retry: a call in flight as ZooKeeper froze hung for
     * over 30 s. Refused instead, it fails with CONNECTIONLOSS at the read timeout and its callers answer at once (a
     * 503, or a write's resolution). A connection that breaks without a stall (a server restarted, a reset link) is
     * retried as before.
     */
    private final class Retries implements org.apache.curator.RetryPolicy {
        private final org.apache.curator.RetryPolicy delegate;

        Retries(org.apache.curator.RetryPolicy delegate) {
            this.delegate = delegate;
        }

        @Override
        public boolean allowRetry(int retryCount, long elapsedTimeMs, org.apache.curator.RetrySleeper sleeper) {
            disconnects.incrementAndGet();
            return !stalled() && delegate.allowRetry(retryCount, elapsedTimeMs, sleeper);
        }

        @Override
        public boolean allowRetry(Throwable exception) {
            return delegate.allowRetry(exception);
        }
    }

    public record ChildrenAndStat(List<String> children, Stat stat) {
    }

    public record DataAndStat(byte[] data, Stat stat) {
    }

    /** A failed {@code multi}: the first error, and per-operation results (the failing one has a non-zero error). */
    public static final class MultiFailure extends RuntimeException {
        private final KeeperException.Code code;
        private final List<CuratorTransactionResult> results;
        private final boolean maybeApplied;

        MultiFailure(KeeperException.Code code, List<CuratorTransactionResult> results, boolean maybeApplied) {
            super("multi failed: " + code, null, false, false);
            this.code = code;
            this.results = results == null ? List.of() : results;
            this.maybeApplied = maybeApplied;
        }

        /**
         * True when the connection was lost, or Curator sent an operation again, while the multi was under way. A
         * failure such as NONODE may then be the answer to a second attempt after the first was applied (its reply was
         * lost). Conservative: any loss or retry in the meantime counts, so callers check what the first attempt did.
         */
        public boolean maybeApplied() {
            return maybeApplied;
        }

        /** Whether {@code t} is a multi failure that may hide an applied first attempt. */
        public static boolean maybeApplied(Throwable t) {
            return unwrap(t) instanceof MultiFailure mf && mf.maybeApplied;
        }

        public KeeperException.Code code() {
            return code;
        }

        /** Index of the operation that failed, or -1 when ZooKeeper did not say. */
        public int failedIndex() {
            for (int i = 0; i < results.size(); i++) {
                int err = results.get(i).getError();
                if (err != 0 && err != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                    return i;
                }
            }
            return -1;
        }
    }
}
