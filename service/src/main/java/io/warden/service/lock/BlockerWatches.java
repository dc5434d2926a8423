package io.warden.service.lock;

import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueNodeData;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The watches that held acquire calls keep on their blockers ({@link LockQueue#blocker}): one ZooKeeper data watch and
 * one watcher object per blocker node, shared by every call on this gateway that waits for that node, and taken off the
 * client and the server ({@link Zk#removeDataWatches}) as soon as the last of those calls is answered or moves on to
 * another node. (A watcher per call that nothing took off when the call ended would stay until the blocker changed,
 * with the server's watch under it.)
 *
 * <p>When a watched node is deleted or changes, every call waiting for it is woken ({@code wake}: the engine reads the
 * queue again). A call waits for one node at a time; watching another node leaves the first.
 *
 * <p>A semaphore request that waits for a count ({@link io.warden.service.queue.LockQueue#waitsForCount}) has no one
 * node to wait for: any entry ahead of it may go first. It waits on its lock's queue instead ({@link #watchQueue}): one
 * children watch per lock, shared as a node's is, and when it fires every call waiting on that queue is woken at once
 * ({@code wakeQueue}), so the engine reads the queue once for all of them, not once per waiter.
 *
 * <p>A node that a call has waited for {@link #ORPHAN_CHECK_INTERVAL} and still waits for is looked at: a Warden queue
 * node whose request record is gone (no Warden write leaves one: a request's node and record are made together, and
 * ended or expired together; only a hand in ZooKeeper does) would block its lock for good, since no release, close or
 * expiry finds a request without its record. Such a node is treated as ended: deleted, logged and counted
 * ({@code warden_orphan_entries_removed_total}), which wakes its waiters. Nodes of plain Curator clients carry no
 * Warden data and are left alone. This costs one {@code exists} per waited-for node per interval, nothing on a handoff.
 *
 * <p>Concurrency: owns {@link #byPath} and {@link #byCall}, both guarded by {@code this}. The ZooKeeper requests that
 * set and remove a node's watch are sent while holding it: the gateway has one ZooKeeper connection, which keeps its
 * requests in order, so the removal of a node's watches is never overtaken by a later call's watch on that node (the
 * removal would take that watch off too). Only the sending happens under the lock; answers, watch events and wake-ups
 * run without it. A call is registered only while {@code waiting} says it still waits, and the engine makes every call
 * {@link #leave} once it is answered, so nothing of a finished call stays. Bounded by the held calls: one entry per
 * call, and one per node that some call waits for.
 *
 * @param <C> the call ({@link HeldCall}), compared by identity
 */
final class BlockerWatches<C> {
    private static final Logger log = LoggerFactory.getLogger(BlockerWatches.class);

    /** How long a node is waited for before its request record is looked at, and again after every look. */
    static final Duration ORPHAN_CHECK_INTERVAL = Duration.ofSeconds(30);

    private final Zk zk;
    private final Clock clock;
    private final WardenMetrics metrics;
    private final Predicate<C> waiting;
    private final Consumer<C> wake;
    private final Consumer<List<C>> wakeQueue;
    /** The watched nodes, by path, and the watched queues, by {@link #queueKey}. Guarded by {@code this}. */
    private final Map<String, Blocker> byPath = new HashMap<>();
    /** The node each registered call waits for. Guarded by {@code this}. */
    private final Map<C, Blocker> byCall = new HashMap<>();

    /**
     * @param wake      wakes one call whose node went or changed
     * @param wakeQueue wakes the calls waiting on one lock's queue, together
     */
    BlockerWatches(Zk zk, Clock clock, WardenMetrics metrics, Predicate<C> waiting, Consumer<C> wake,
                   Consumer<List<C>> wakeQueue) {
        this.zk = zk;
        this.clock = clock;
        this.metrics = metrics;
        this.waiting = waiting;
        this.wake = wake;
        this.wakeQueue = wakeQueue;
    }

    /** The key of a lock's queue watch: the lock path with a trailing slash, which no node path has. */
    private static String queueKey(String lockPath) {
        return lockPath + "/";
    }

    /**
     * Makes {@code call} wait for the node at {@code path} and (re)sets the node's watch with {@code getData}, which
     * leaves no watch on a node that is gone. Completes with true when the watch is set, false when the node is already
     * gone (the call is then not registered: read the queue again); does nothing, and completes with true, for a call
     * that no longer waits.
     */
    CompletableFuture<Boolean> watch(String path, C call) {
        Blocker blocker;
        CompletableFuture<Zk.DataAndStat> read;
        synchronized (this) {
            if (!waiting.test(call)) {
                return CompletableFuture.completedFuture(true);
            }
            blocker = register(path, false, call);
            read = zk.dataWatched(path, blocker); // sent under the lock: see the class comment
        }
        return read.handle((ds, err) -> {
            if (err == null) {
                scheduleOrphanCheck(blocker, ds.data());
                return true;
            }
            synchronized (this) {
                if (byCall.get(call) == blocker) {
                    leaveLocked(call, blocker);
                }
            }
            if (Zk.code(err) == Code.NONODE) {
                return false;
            }
            throw Zk.translate(err);
        });
    }

    /**
     * Makes {@code call} wait on the queue of the lock at {@code lockPath} (any change to its children wakes it). The
     * queue's children watch is set by the first call that waits on it, with one {@code getChildren}; later calls join it
     * and send nothing, so a handoff among many waiters costs one request, not one per waiter. The watch covers the
     * changes after the cversion its {@code getChildren} read (the lock node's cversion counts every create and delete of
     * a child, so it only grows); a call that read the queue at an older {@code cversion} may have missed a change in
     * between, so it is woken at once — and all such calls of one queue together ({@code wakeQueue}), so that a burst of
     * arrivals costs one more read of the queue, not one per waiter. Does nothing for a call that no longer waits.
     */
    void watchQueue(String lockPath, C call, int cversion) {
        List<C> stale = List.of();
        synchronized (this) {
            if (!waiting.test(call)) {
                return;
            }
            Blocker blocker = register(queueKey(lockPath), true, call);
            blocker.readAt.put(call, cversion);
            if (blocker.armedAt == null) {
                // Sent under the lock: see the class comment.
                CompletableFuture<Integer> armed = zk.childrenWatched(lockPath, blocker)
                        .thenApply(cs -> cs.stat().getCversion());
                blocker.armedAt = armed;
                armed.whenComplete((at, err) -> settle(blocker, at, err));
            } else if (blocker.settled) {
                stale = staleLocked(blocker);
            }
        }
        if (!stale.isEmpty()) {
            wakeQueue.accept(stale);
        }
    }

    /** The queue's watch is set (at cversion {@code armedAt}) or could not be: wakes the calls it does not cover. */
    private void settle(Blocker blocker, Integer armedAt, Throwable err) {
        List<C> stale;
        synchronized (this) {
            blocker.settled = true;
            blocker.armedCversion = err == null ? armedAt : Integer.MAX_VALUE; // failed: every call reads again
            stale = staleLocked(blocker);
        }
        if (err != null && Zk.code(err) != Code.NONODE) {
            log.debug("could not watch the queue {}: {}", blocker.path, Zk.unwrap(err).toString());
        }
        if (!stale.isEmpty()) {
            wakeQueue.accept(stale); // they read the queue again (a lock node gone, or a failure, is theirs to answer)
        }
    }

    /** The calls of a settled queue watch that read the queue before it was set: taken off it, to be woken. */
    private List<C> staleLocked(Blocker blocker) {
        List<C> stale = new java.util.ArrayList<>();
        for (Map.Entry<C, Integer> e : blocker.readAt.entrySet()) {
            if (e.getValue() < blocker.armedCversion && byCall.get(e.getKey()) == blocker) {
                stale.add(e.getKey());
            }
        }
        for (C call : stale) {
            leaveLocked(call, blocker);
        }
        return stale;
    }

    /** Registers {@code call} as waiting on {@code key} (a node, or a queue), leaving what it waited on before. */
    private Blocker register(String key, boolean queue, C call) {
        Blocker before = byCall.get(call);
        if (before != null && !before.path.equals(key)) {
            leaveLocked(call, before);
        }
        Blocker blocker = byPath.computeIfAbsent(key, k -> new Blocker(k, queue));
        blocker.calls.add(call);
        byCall.put(call, blocker);
        return blocker;
    }

    /** The call waits no more (answered): it leaves its node, whose watch goes when nobody else waits for it. */
    void leave(C call) {
        synchronized (this) {
            Blocker blocker = byCall.get(call);
            if (blocker != null) {
                leaveLocked(call, blocker);
            }
        }
    }

    private void leaveLocked(C call, Blocker blocker) {
        byCall.remove(call);
        blocker.calls.remove(call);
        blocker.readAt.remove(call);
        if (blocker.calls.isEmpty() && byPath.get(blocker.path) == blocker) {
            byPath.remove(blocker.path);
            blocker.stopChecking();
            CompletableFuture<Void> removal = blocker.queue
                    ? zk.removeChildrenWatches(blocker.path.substring(0, blocker.path.length() - 1))
                    : zk.removeDataWatches(blocker.path);
            removal.whenComplete((v, err) -> {
                if (err != null) {
                    log.debug("could not remove the watches on {}: {}", blocker.path, Zk.unwrap(err).toString());
                }
            });
        }
    }

    /** Starts the periodic look at a Warden node's request record, once per watched node. */
    private void scheduleOrphanCheck(Blocker blocker, byte[] data) {
        synchronized (this) {
            if (byPath.get(blocker.path) != blocker || blocker.record != null) {
                return;
            }
            String node = blocker.path.substring(blocker.path.lastIndexOf('/') + 1);
            QueueNodeData nodeData = Json.readOrNull(data, QueueNodeData.class);
            String uuid = QueueEntry.parse(node).map(QueueEntry::id).orElse(null);
            if (nodeData == null || nodeData.sessionId() == null || uuid == null) {
                return; // not a Warden request (a plain Curator client's node, say): nothing to look for
            }
            blocker.sessionId = nodeData.sessionId();
            blocker.record = CellPaths.sessionRequest(nodeData.sessionId(), uuid);
            blocker.check = clock.schedule(ORPHAN_CHECK_INTERVAL, () -> checkOrphan(blocker));
        }
    }

    private void checkOrphan(Blocker blocker) {
        synchronized (this) {
            if (byPath.get(blocker.path) != blocker) {
                return;
            }
        }
        zk.exists(blocker.record).thenCompose(stat -> {
            if (stat != null) {
                return java.util.concurrent.CompletableFuture.completedFuture(false);
            }
            // No record: the delete fails harmlessly (NONODE) when the node went meanwhile with it (an expiry).
            return zk.delete(blocker.path, -1).thenApply(v -> true);
        }).whenComplete((removed, err) -> {
            if (err == null && removed) {
                metrics.orphanEntryRemoved();
                log.warn("removed queue node {} of session {}: its request record {} is gone (deleted by hand?), so no "
                        + "release, close or expiry could end it, and it blocked the lock", blocker.path,
                        blocker.sessionId, blocker.record);
                return;
            }
            if (err != null && Zk.code(err) != Code.NONODE) {
                log.debug("could not look at the request record of {}: {}", blocker.path, Zk.unwrap(err).toString());
            }
            synchronized (this) {
                if (byPath.get(blocker.path) == blocker && (err == null || Zk.code(err) != Code.NONODE)) {
                    blocker.check = clock.schedule(ORPHAN_CHECK_INTERVAL, () -> checkOrphan(blocker));
                }
            }
        });
    }

    /**
     * One watched node, or one watched queue: the watcher ZooKeeper calls, and the calls waiting (guarded by the
     * registry).
     */
    private final class Blocker implements Watcher {
        /** The node's path, or the queue's {@link #queueKey}. */
        final String path;
        /** A lock's queue (a children watch), not a node (a data watch). */
        final boolean queue;
        final Set<C> calls = new HashSet<>();
        /** The node's request record and session, once known from its data; null for a node that is not Warden's. */
        String record;
        String sessionId;
        /** The next look at the record, while the node is watched. */
        Clock.Cancellable check;
        /** A queue's: its watch being set (sent by the first call that waited on it). */
        CompletableFuture<Integer> armedAt;
        /** A queue's: whether the reply to {@link #armedAt} was looked at; then {@link #armedCversion} is known. */
        boolean settled;
        /** A queue's: the cversion its watch was set at ({@code Integer.MAX_VALUE} when it could not be set). */
        int armedCversion;
        /** A queue's: the cversion at which each of its calls read the queue. */
        final Map<C, Integer> readAt = new HashMap<>();

        Blocker(String path, boolean queue) {
            this.path = path;
            this.queue = queue;
        }

        @Override
        public void process(WatchedEvent event) {
            switch (event.getType()) {
                case NodeDeleted, NodeDataChanged, NodeCreated, NodeChildrenChanged -> wakeAll();
                default -> {
                    // None (connection state: the engine looks at every call again on RECONNECTED), or the
                    // DataWatchRemoved or ChildWatchRemoved that our own removal sends to the last watcher.
                }
            }
        }

        private void wakeAll() {
            List<C> woken;
            synchronized (BlockerWatches.this) {
                if (byPath.get(path) != this) {
                    return; // left by its last call; a newer watcher for this node (if any) has its own calls
                }
                byPath.remove(path); // ZooKeeper's watch fired: it is gone on the server and the client
                stopChecking();
                woken = List.copyOf(calls);
                for (C call : woken) {
                    byCall.remove(call);
                }
                calls.clear();
                readAt.clear();
            }
            if (queue) {
                wakeQueue.accept(woken);
            } else {
                woken.forEach(wake);
            }
        }
        void stopChecking() {
            if (check != null) {
                check.cancel();
                check = null;
            }
        }
    }
}
