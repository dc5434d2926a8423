package io.warden.service.watch;

import io.warden.service.api.LockName;
import io.warden.service.lock.QueueEntry;
import io.warden.service.lock.QueueNodeData;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Feeds the {@link LockMirror} from ZooKeeper: one persistent recursive watch each on {@code /locks},
 * {@code /expired}, {@code /lockdelay} and {@code /sessions}, set on ZooKeeper's own handle (Curator's watcher wrapper
 * drops the events' zxids), whose notifications are applied in zxid order.
 *
 * <p>No read per acquire: an acquire's {@code multi} creates the request record {@code /sessions/{sh}/{sid}/{uuid}}
 * before the queue node {@code _c_{uuid}-...}, so the record's notification names the node's session; the client id
 * is read once per session. Only a queue node with no such record (a plain Curator client's) is read.
 *
 * <p>Order: notifications arrive in zxid order on ZooKeeper's event thread. Each becomes a step in one chain of
 * futures: a step that needs a read waits for it (reads start at once and run in parallel; the steps still apply one
 * after the other, in arrival order, on the hub's thread).
 *
 * <p>Rebuilds: at start and after every reconnection (events while disconnected are lost; after a ZooKeeper session
 * loss the handle and its watches are new) the feed sets the watches again, reads everything ({@link MirrorLoader}),
 * replaces the mirror and then writes a barrier: the data of {@code /locks}. Once the notification of that write has
 * been applied, the mirror is exact as of the last zxid applied: the hub is {@link WatchHub#ready ready}. Between the
 * read and the barrier, changes update the mirror silently.
 *
 * <p>Disconnections: publishing stops at the disconnection itself, not at the rebuild. After a short disconnection
 * the ZooKeeper client sets the persistent watches again by itself but does not replay the notifications of the gap,
 * so notifications that arrive after the reconnection and before the rebuild's read would make events from a mirror
 * that lacks the gap's changes, with revisions past them: a client resuming from one of those would miss the gap
 * silently. So the {@code Disconnected} (or {@code Expired}) event, which ZooKeeper delivers to these watches in order
 * with the notifications, becomes a step of the chain that unsettles the mirror; everything after it is applied
 * silently until the rebuild settles it again, and then every watch gets a RESYNC.
 *
 * <p>Concurrency: every field below {@code stopped} is confined to the hub's thread ({@code hub}); ZooKeeper's and
 * Curator's threads only hand work to it. Order: ZooKeeper's event thread hands notifications and connection events
 * over in the order it got them, and the hub's executor keeps it.
 */
final class LockFeed {
    private static final Logger log = LoggerFactory.getLogger(LockFeed.class);
    private static final Duration RETRY = Duration.ofSeconds(1);
    private static final String LOCKS_PREFIX = CellPaths.LOCKS + "/";
    private static final String EXPIRED_PREFIX = CellPaths.EXPIRED + "/";
    private static final String LOCK_DELAY_PREFIX = CellPaths.LOCK_DELAY + "/";
    private static final String SESSIONS_PREFIX = CellPaths.SESSIONS + "/";
    /** More request records awaiting their queue node than this means notifications were missed: forget them. */
    private static final int MAX_PENDING_RECORDS = 10_000;
    private static final int MAX_CLIENT_IDS = 200_000;

    private final Zk zk;
    private final String chroot;
    private final Clock clock;
    private final Executor hub;
    private final WatchHub target;
    private final LockMirror mirror;
    private final MirrorLoader loader;
    private final String gatewayId;
    private final Watcher watcher = this::notified;
    private final ConnectionStateListener reconnects = (c, state) -> {
        if (state == ConnectionState.RECONNECTED) {
            onHub(this::rebuild);
        }
    };
    private final AtomicBoolean stopped = new AtomicBoolean();

    /** The last step; every new step runs after it. */
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    /** Counts rebuilds; work of an older rebuild is dropped. */
    private int generation;
    /** Whether the mirror is exact as of {@link #lastZxid} and events are published. */
    private boolean settled;
    /** Counts disconnections; a barrier written before the latest one settles nothing. */
    private int epoch;
    /** The zxid of the barrier write that will settle the mirror, or -1. */
    private long barrier = -1;
    /** The highest zxid of any notification applied. */
    private long lastZxid;
    /**
     * Request records created by the latest transactions, by request uuid: the session id and the zxid. An acquire
     * creates its record and its queue node in one {@code multi}, and the record's notification comes first, so the
     * queue node's session is known without reading the node (issue 9: no read per acquire). An entry is taken by its
     * queue node's notification; bounded by {@link #MAX_PENDING_RECORDS}, and cleared by every rebuild. Written on
     * ZooKeeper's event thread (so the four notifications a pair causes below /sessions cost no hand-off to the hub),
     * read on the hub's: the record's put happens before the hand-off of its queue node's notification.
     */
    private final Map<String, PendingRecord> pendingRecords = new java.util.concurrent.ConcurrentHashMap<>();
    /**
     * Client ids of sessions, read once per session (not per acquire) from the session record. Written on ZooKeeper's
     * event thread, read on the hub's, so concurrent; an entry goes with its session record's deletion, and at most
     * {@link #MAX_CLIENT_IDS} are kept (least recently used evicted: a miss costs one read).
     */
    private final Map<String, String> clientIds = com.github.benmanes.caffeine.cache.Caffeine.newBuilder()
            .maximumSize(MAX_CLIENT_IDS).<String, String>build().asMap();
    private boolean warnedNoZxid;

    LockFeed(Zk zk, String chroot, Clock clock, Executor hub, WatchHub target, LockMirror mirror, String gatewayId) {
        this.zk = zk;
        this.chroot = "/".equals(chroot) ? "" : chroot;
        this.clock = clock;
        this.hub = hub;
        this.target = target;
        this.mirror = mirror;
        this.loader = new MirrorLoader(zk);
        this.gatewayId = gatewayId;
    }

    void start() {
        zk.client().getConnectionStateListenable().addListener(reconnects);
        onHub(this::rebuild);
    }

    void stop() {
        if (stopped.compareAndSet(false, true)) {
            zk.client().getConnectionStateListenable().removeListener(reconnects);
        }
    }

    // ------------------------------------------------------------------ rebuild

    /** On the hub's thread: set the watches, then read everything (the watches are in place before the read). */
    private void rebuild() {
        if (stopped.get()) {
            return;
        }
        int gen = ++generation;
        ZooKeeper handle;
        try {
            handle = zk.client().getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            retryLater(gen, e);
            return;
        }
        List<CompletableFuture<Void>> watches = new ArrayList<>();
        for (String path : new String[]{CellPaths.LOCKS, CellPaths.EXPIRED, CellPaths.LOCK_DELAY, CellPaths.SESSIONS}) {
            watches.add(addWatch(handle, chroot + path));
        }
        // The last addWatch reply arrives on ZooKeeper's event thread before any notification of that watch, so the
        // read's step below is chained before every notification the read might not reflect.
        CompletableFuture.allOf(watches.toArray(CompletableFuture[]::new)).whenComplete((v, err) -> onHub(() -> {
            if (gen != generation || stopped.get()) {
                return;
            }
            if (err != null) {
                retryLater(gen, err);
                return;
            }
            CompletableFuture<LockMirror.Snapshot> read = loader.load();
            tail = tail.thenCompose(x -> read).handleAsync((snapshot, e) -> {
                install(gen, snapshot, e);
                return null;
            }, hub);
        }));
    }

    private CompletableFuture<Void> addWatch(ZooKeeper handle, String path) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        try {
            handle.addWatch(path, watcher, AddWatchMode.PERSISTENT_RECURSIVE, (rc, p, ctx) -> {
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

    /** On the hub's thread, in chain order: the read is in; replace the mirror and write the barrier. */
    private void install(int gen, LockMirror.Snapshot snapshot, Throwable err) {
        if (gen != generation || stopped.get()) {
            return;
        }
        if (err != null) {
            retryLater(gen, err);
            return;
        }
        mirror.load(snapshot);
        pendingRecords.clear();
        loader.sweepMarkers();
        settled = false;
        barrier = -1;
        target.rebuilding();
        int ep = epoch;
        zk.setData(CellPaths.LOCKS, Json.write(Map.of("watch_barrier", gatewayId)), -1).whenComplete((stat, e) -> onHub(() -> {
            if (gen != generation || ep != epoch || stopped.get()) {
                return; // a newer rebuild, or a disconnection since: the rebuild after it settles the mirror
            }
            if (e != null) {
                retryLater(gen, e);
                return;
            }
            barrier = stat.getMzxid();
            // After the steps already chained, which include the barrier's own notification in all but odd cases.
            tail = tail.thenRunAsync(this::maybeSettle, hub);
        }));
        log.debug("watch mirror read: {} live locks; waiting for the barrier", mirror.lockCount());
    }

    private void maybeSettle() {
        if (settled || barrier < 0 || lastZxid < barrier) {
            return;
        }
        settled = true;
        barrier = -1;
        mirror.settled();
        log.info("watch mirror of /locks is current at revision {} ({} live locks)", lastZxid, mirror.lockCount());
        target.ready(lastZxid);
    }

    private void retryLater(int gen, Throwable err) {
        log.info("could not (re)build the watch mirror ({}); retrying", Zk.unwrap(err).toString());
        clock.schedule(RETRY, () -> onHub(() -> {
            if (gen == generation && !stopped.get()) {
                rebuild();
            }
        }));
    }

    // ------------------------------------------------------------------ notifications

    /** On ZooKeeper's event thread: hand the notification (or disconnection) to the hub's thread, keeping the order. */
    private void notified(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None) {
            Watcher.Event.KeeperState state = event.getState();
            if (state == Watcher.Event.KeeperState.Disconnected || state == Watcher.Event.KeeperState.Expired) {
                onHub(this::chainDisconnection);
            }
        } else if (event.getPath() != null) {
            String path = event.getPath().startsWith(chroot) ? event.getPath().substring(chroot.length()) : event.getPath();
            if (path.startsWith(SESSIONS_PREFIX)) {
                noteSession(path, event.getType(), event.getZxid());
            } else {
                onHub(() -> chain(event));
            }
        }
    }

    /**
     * On the hub's thread: a step after every notification that came before the disconnection, and before every one
     * that comes after it. From there on the mirror may miss changes (their notifications are not replayed): stop
     * publishing until the rebuild that the reconnection starts settles it again ({@code RECONNECTED}; that rebuild's
     * read is chained after this step).
     */
    private void chainDisconnection() {
        if (stopped.get()) {
            return;
        }
        tail = tail.thenRunAsync(() -> {
            epoch++;
            barrier = -1;
            if (settled) {
                settled = false;
                target.rebuilding();
                log.info("watch mirror of /locks: disconnected from ZooKeeper at revision {}; events wait for the rebuild", lastZxid);
            }
        }, hub);
    }

    /** On the hub's thread: chain the notification's step; a created queue node's data is read now, applied in order. */
    private void chain(WatchedEvent event) {
        if (stopped.get()) {
            return;
        }
        long zxid = event.getZxid();
        if (zxid <= 0 && !warnedNoZxid) {
            warnedNoZxid = true;
            log.warn("ZooKeeper reports no zxid with watch events (it needs a 3.9 server): watch revisions are not reliable");
        }
        String path = event.getPath().startsWith(chroot) ? event.getPath().substring(chroot.length()) : event.getPath();
        Watcher.Event.EventType type = event.getType();
        QueueNode queueNode = QueueNode.of(path);
        CompletableFuture<QueueNodeData> read = queueNode != null && type == Watcher.Event.EventType.NodeCreated
                ? nodeData(path, queueNode, zxid) : CompletableFuture.completedFuture(null);
        tail = tail.thenCompose(x -> read).handleAsync((data, err) -> {
            try {
                apply(path, type, zxid, queueNode, data);
            } catch (RuntimeException e) {
                log.warn("watch: could not apply {} {} at zxid {}", type, path, zxid, e);
            }
            return null;
        }, hub);
    }

    /**
     * On ZooKeeper's event thread: a notification below {@code /sessions}. A request record's creation says whose queue node
     * the same transaction creates; a session record's deletion ends its cached client id.
     */
    private void noteSession(String path, Watcher.Event.EventType type, long zxid) {
        String[] parts = path.split("/", -1); // "", "sessions", shard, session id, [child]
        if (parts.length == 5 && type == Watcher.Event.EventType.NodeCreated && !parts[4].startsWith("~")) {
            if (pendingRecords.size() >= MAX_PENDING_RECORDS) {
                pendingRecords.clear();
            }
            pendingRecords.put(parts[4], new PendingRecord(parts[3], zxid));
        } else if (parts.length == 4 && type == Watcher.Event.EventType.NodeDeleted) {
            clientIds.remove(parts[3]);
        }
    }

    private record PendingRecord(String sessionId, long zxid) {
    }

    /**
     * What a created queue node says, without reading it when its request record came in the same transaction (the
     * session from the record's path, the client id cached per session; the request id is not needed by the mirror's
     * holders and is left out). A node with no such record (a plain Curator client's, or one whose record's notification
     * was missed) is read.
     */
    private CompletableFuture<QueueNodeData> nodeData(String path, QueueNode queueNode, long zxid) {
        PendingRecord rec = queueNode.entry.id() == null ? null : pendingRecords.remove(queueNode.entry.id());
        if (rec != null && rec.zxid == zxid) {
            String sessionId = rec.sessionId;
            String client = clientIds.get(sessionId);
            if (client != null) {
                return CompletableFuture.completedFuture(new QueueNodeData(sessionId, client, null, queueNode.entry.mode()));
            }
            return zk.data(CellPaths.session(sessionId)).handle((ds, err) -> {
                io.warden.service.session.SessionRecord r = err == null
                        ? Json.readOrNull(ds.data(), io.warden.service.session.SessionRecord.class) : null;
                if (r != null) {
                    clientIds.put(sessionId, r.clientId());
                }
                return new QueueNodeData(sessionId, r == null ? null : r.clientId(), null, queueNode.entry.mode());
            });
        }
        return zk.data(path).handle((ds, err) -> ds == null ? null // gone already: its deletion follows; or trouble
                : Json.readOrNull(ds.data(), QueueNodeData.class));
    }

    private void apply(String path, Watcher.Event.EventType type, long zxid, QueueNode queueNode, QueueNodeData nodeData) {
        lastZxid = Math.max(lastZxid, zxid);
        boolean created = type == Watcher.Event.EventType.NodeCreated;
        boolean deleted = type == Watcher.Event.EventType.NodeDeleted;
        List<WatchEvent> events = List.of();
        if (queueNode != null && created) {
            // A notification of a node's creation carries the creating transaction's zxid: the node's czxid, its token.
            events = mirror.created(queueNode.lock, queueNode.entry, zxid, zxid, nodeData);
        } else if (queueNode != null && deleted) {
            events = mirror.deleted(queueNode.lock, queueNode.entry.node(), zxid);
        } else if (created && path.startsWith(EXPIRED_PREFIX)) {
            mirror.expiring(path.substring(EXPIRED_PREFIX.length()), zxid);
        } else if (path.startsWith(LOCK_DELAY_PREFIX) && CellPaths.sessionIdOf(path) != null
                && path.equals(CellPaths.lockDelay(CellPaths.sessionIdOf(path)))) {
            String session = CellPaths.sessionIdOf(path);
            if (created) {
                mirror.lockDelayCreated(session);
            } else if (deleted) {
                mirror.lockDelayDeleted(session);
            }
        }
        if (settled) {
            if (!events.isEmpty()) {
                target.publish(events);
            }
        } else {
            maybeSettle();
        }
    }

    private void onHub(Runnable task) {
        try {
            hub.execute(task);
        } catch (RejectedExecutionException e) {
            // the hub is closed
        }
    }

    /** A queue node's path split into its lock name and entry; null for any other path. */
    private record QueueNode(String lock, QueueEntry entry) {
        static QueueNode of(String path) {
            if (!path.startsWith(LOCKS_PREFIX)) {
                return null;
            }
            int slash = path.lastIndexOf('/');
            LockName name = CellPaths.lockName(path.substring(0, slash));
            if (name == null) {
                return null;
            }
            return QueueEntry.parse(path.substring(slash + 1)).map(e -> new QueueNode(name.toString(), e)).orElse(null);
        }
    }
}
