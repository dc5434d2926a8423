package io.warden.service.watch;

import io.warden.service.api.LockName;
import io.warden.service.queue.QueueEntry;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Feeds the {@link LockMirror} from ZooKeeper: one persistent recursive watch each on {@code /locks}, {@code /expired},
 * {@code /lockdelay} and {@code /sessions}, set on ZooKeeper's own handle (Curator's watcher wrapper drops the events'
 * zxids), whose notifications are gathered into whole transactions ({@link Transaction}) and applied in zxid order.
 *
 * <p><b>One transaction at a time</b>. ZooKeeper sends a transaction's notifications one by one; a {@code multi} that
 * closes a session with 1,000 holds is 1,000 of them. They are gathered, and the mirror changes and the hub publishes
 * only when the transaction is complete, so a watch never starts (nor gets a RESYNC) in the middle of one, and every
 * stream gets a transaction's events together. A transaction is complete when a notification of a later zxid arrives
 * (ZooKeeper delivers them in zxid order), or when a reply to a request this gateway sent after the transaction's first
 * notification arrives: the server applies a transaction (and queues all of its notifications to this connection)
 * before it serves a request that arrived later (no read runs beside a write), and the client hands replies and
 * notifications to the event thread in the order they came. Every reply through {@link Zk} is such a signal
 * ({@link #replied}), so the gateway's own transactions complete at once; one that has been the newest for
 * {@link #FLUSH_DELAY} (another gateway's or client's, with nothing after it) gets a probe, an {@code exists} of
 * {@code /locks}, whose reply completes it. A busy cell needs no probes; a quiet one costs at most one read per
 * {@code FLUSH_DELAY} per gateway. The timing only decides when a complete transaction is published, never what it
 * contains.
 *
 * <p><b>No reads</b>: a transaction's events depend on its notifications' paths and zxid only (see
 * {@link Transaction}), never on a read at notification time, so every gateway publishes the same events for the same
 * revisions. A queue node created without a request record in its transaction (a plain Curator client's) has no
 * session.
 *
 * <p><b>Bounded hand-off</b>. ZooKeeper's event thread hands the relevant notifications to the hub's thread and never
 * blocks; at most {@code maxPending} wait there. Past that the hub has fallen behind: further notifications are dropped
 * (so memory does not grow) and, once the hub reaches the point where it fell behind, it rebuilds the mirror from a
 * full read and every watch gets a RESYNC, as after a disconnection.
 *
 * <p><b>Rebuilds</b>: at start and after every reconnection (events while disconnected are lost; after a ZooKeeper
 * session loss the handle and its watches are new) the feed sets the watches again, reads everything
 * ({@link MirrorLoader}), replaces the mirror, replays the transactions that completed while the read was under way
 * (each lock ignores changes its read already reflects), and then writes a barrier: the data of {@code /locks}. Once
 * the transaction of that write has been applied, the mirror is exact as of the last zxid applied: the hub is
 * {@link WatchHub#ready ready}. Until then changes update the mirror silently.
 *
 * <p><b>Disconnections</b>: publishing stops at the disconnection itself, not at the rebuild. After a short disconnection
 * the ZooKeeper client sets the persistent watches again by itself but does not replay the notifications of the gap, so
 * the {@code Disconnected} (or {@code Expired}) event, which ZooKeeper delivers in order with the notifications,
 * unsettles the mirror and drops the transaction under way (it may be incomplete); everything after it is applied
 * silently until the rebuild settles it again, and then every watch gets a RESYNC.
 *
 * <p><b>Locks too large to read</b> are loaded as counts ({@link MirrorLoader}, {@link LockMirror}): the read of the
 * cell completes, and the gateway keeps its ZooKeeper connection. When such a lock's queue becomes exact again, the
 * watches that cover it get a RESYNC and the history starts again ({@link WatchHub#resyncCovering}).
 *
 * <p><b>The bound</b> ({@code watch-mirror-bytes}): a read of the cell that would take the mirror past it stops
 * ({@link MirrorLoader.OverBudget}); a mirror that grows past it is dropped. Either way the mirror stays empty and
 * unsettled (watches wait, with heartbeats; nothing is published; the engine's size hints say "unknown") and the read is
 * tried again every {@link #OVER_BUDGET_RETRY}, logged once per episode (WARN) and when it fits again (INFO).
 *
 * <p>Concurrency: every field from {@code handle} down is confined to the hub's thread ({@code hub}, one thread), except
 * {@code awaitingReply}, which only ZooKeeper's event thread touches; ZooKeeper's and Curator's threads only hand work
 * to the hub, in the order ZooKeeper delivered it (the executor keeps it). {@code pending}, {@code overflowed} and the
 * counters are atomics shared between the event thread and the hub's. What bounds the rest: one open transaction, and
 * the transactions completed during a rebuild's read (dropped with a rebuild past {@code maxPending} notifications).
 */
final class LockFeed {
    private static final Logger log = LoggerFactory.getLogger(LockFeed.class);
    private static final Duration RETRY = Duration.ofSeconds(1);
    /** How soon a mirror over its bound tries again: each try reads the whole cell. */
    static final Duration OVER_BUDGET_RETRY = Duration.ofSeconds(30);
    /** How long a transaction stays the newest before a probe completes it (real time: see the class comment). */
    static final Duration FLUSH_DELAY = Duration.ofMillis(5);
    /** Notifications the hub's thread may have waiting (about 100 bytes each) before it counts as fallen behind. */
    static final int DEFAULT_MAX_PENDING = 100_000;
    private static final String LOCKS_PREFIX = CellPaths.LOCKS + "/";
    private static final String EXPIRED_PREFIX = CellPaths.EXPIRED + "/";
    private static final String LOCK_DELAY_PREFIX = CellPaths.LOCK_DELAY + "/";
    private static final String SESSIONS_PREFIX = CellPaths.SESSIONS + "/";

    private final Zk zk;
    private final String chroot;
    private final Clock clock;
    private final ScheduledExecutorService hub;
    private final WatchHub target;
    private final LockMirror mirror;
    private final MirrorLoader loader;
    /** The mirror's bound in estimated bytes (watch-mirror-bytes); 0 for none. */
    private final long maxBytes;
    /** The mirror's estimated heap as of the hub's last change to it, for the gauge (any thread reads it). */
    private volatile long mirrorBytes;
    private final String gatewayId;
    private final int maxPending;
    private final Watcher watcher = this::notified;
    private final ConnectionStateListener reconnects = (c, state) -> {
        if (state == ConnectionState.RECONNECTED) {
            onHub(this::rebuild);
        }
    };
    private final AtomicBoolean stopped = new AtomicBoolean();
    /**
     * What a rebuild waits for: the cell's guard says the cell may be served (after a reconnection it has read the
     * token floor again and checked that the cell did not lose state). Set before {@link #start}.
     */
    private volatile java.util.function.Supplier<CompletableFuture<Void>> rebuildWhen =
            () -> CompletableFuture.completedFuture(null);
    /** Told, on ZooKeeper's event thread, of every notification's zxid: the gateway's high-water mark. */
    private volatile java.util.function.LongConsumer zxidSeen = z -> { };
    /** Notifications handed to the hub's thread and not yet taken. */
    private final AtomicInteger pending = new AtomicInteger();
    /** Set by ZooKeeper's event thread when {@link #pending} passed the bound; cleared by the hub when it catches up. */
    private final AtomicBoolean overflowed = new AtomicBoolean();
    /** The most notifications that were ever waiting at once (tests and metrics). */
    private final AtomicInteger mostPending = new AtomicInteger();
    /** Times the hub fell behind (tests and metrics). */
    private final AtomicInteger fallBehinds = new AtomicInteger();
    /** Notifications dropped because the hub had fallen behind (tests and metrics). */
    private final AtomicLong dropped = new AtomicLong();
    /** Probes sent (tests and metrics). */
    private final AtomicInteger probes = new AtomicInteger();

    /** The handle the watches are set on. */
    private ZooKeeper handle;
    /** Counts rebuilds; work of an older rebuild is dropped. */
    private int generation;
    /** Whether the mirror is exact as of {@link #lastZxid} and events are published. */
    private boolean settled;
    /** Counts disconnections; a barrier or probe sent before the latest one completes nothing. */
    private int epoch;
    /** The zxid of the barrier write that will settle the mirror, or -1. */
    private long barrier = -1;
    /** The zxid of the last transaction applied. */
    private long lastZxid;
    /** The transaction whose notifications are arriving; null between transactions. */
    private Transaction open;
    /** Transactions completed while a rebuild's read is under way (applied after it); null otherwise. */
    private List<Transaction> replay;
    /** Notifications in {@link #replay}. */
    private int replayNotes;
    /**
     * Set by ZooKeeper's event thread when it hands over a notification, cleared by it when a reply follows: only
     * that thread touches it (volatile for the listener's sake only).
     */
    private volatile boolean awaitingReply;
    private boolean flushTimerSet;
    private long flushTimerZxid;
    private boolean probing;
    private boolean warnedNoZxid;
    /** Set while the mirror is dropped for passing its bound: transactions are not applied until a read fits again. */
    private boolean overBudget;

    LockFeed(Zk zk, String chroot, Clock clock, ScheduledExecutorService hub, WatchHub target, LockMirror mirror,
             String gatewayId, int maxPending, io.warden.service.queue.QueueListing queues, long maxBytes) {
        this.zk = zk;
        this.chroot = "/".equals(chroot) ? "" : chroot;
        this.clock = clock;
        this.hub = hub;
        this.target = target;
        this.mirror = mirror;
        this.maxBytes = maxBytes;
        this.loader = new MirrorLoader(zk, queues, maxBytes, mirror::token);
        this.gatewayId = gatewayId;
        this.maxPending = maxPending;
    }

    /** See {@link #rebuildWhen} and {@link #zxidSeen}; before {@link #start}. */
    void guardedBy(java.util.function.Supplier<CompletableFuture<Void>> rebuildWhen,
                   java.util.function.LongConsumer zxidSeen) {
        this.rebuildWhen = rebuildWhen;
        this.zxidSeen = zxidSeen;
    }

    void start() {
        zk.onReply(this::replied);
        zk.client().getConnectionStateListenable().addListener(reconnects);
        onHub(this::rebuild);
    }

    void stop() {
        if (stopped.compareAndSet(false, true)) {
            zk.client().getConnectionStateListenable().removeListener(reconnects);
        }
    }

    /** Notifications handed to the hub's thread and not yet taken: how far the mirror is behind. Any thread. */
    int pending() {
        return pending.get();
    }

    int mostPending() {
        return mostPending.get();
    }

    int fallBehinds() {
        return fallBehinds.get();
    }

    long dropped() {
        return dropped.get();
    }

    int probes() {
        return probes.get();
    }

    /** The mirror's estimated heap in bytes (any thread). */
    long mirrorBytes() {
        return mirrorBytes;
    }

    long maxBytes() {
        return maxBytes;
    }

    // ------------------------------------------------------------------ rebuild (the hub's thread)

    /**
     * Sets the watches, then reads everything (the watches are in place before the read); first waits until the cell
     * may be served ({@link #rebuildWhen}): a cell that lost committed state is never mirrored, so no watch gets its
     * events or a RESYNC of it, and the mirror's tokens include every floor raise.
     */
    private void rebuild() {
        if (stopped.get()) {
            return;
        }
        int gen = ++generation;
        replay = null;
        replayNotes = 0;
        CompletableFuture<Void> when = rebuildWhen.get();
        if (!when.isDone()) {
            when.whenComplete((v, e) -> onHub(() -> {
                if (gen == generation && !stopped.get()) {
                    rebuildNow(gen);
                }
            }));
            return;
        }
        rebuildNow(gen);
    }

    private void rebuildNow(int gen) {
        ZooKeeper h;
        try {
            h = zk.client().getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            retryLater(gen, e);
            return;
        }
        handle = h;
        List<CompletableFuture<Void>> watches = new ArrayList<>();
        for (String path : new String[]{CellPaths.LOCKS, CellPaths.EXPIRED, CellPaths.LOCK_DELAY, CellPaths.SESSIONS}) {
            watches.add(Zk.addPersistentRecursiveWatch(h, chroot + path, watcher));
        }
        // The last addWatch reply arrives on ZooKeeper's event thread before any notification of that watch, so the
        // read below starts before every notification the read might not reflect: those complete transactions that
        // wait in `replay` until the read is in.
        CompletableFuture.allOf(watches.toArray(CompletableFuture[]::new)).whenComplete((v, err) -> onHub(() -> {
            if (gen != generation || stopped.get()) {
                return;
            }
            if (err != null) {
                retryLater(gen, err);
                return;
            }
            replay = new ArrayList<>();
            replayNotes = 0;
            loader.load().whenComplete((snapshot, e) -> onHub(() -> install(gen, snapshot, e)));
        }));
    }

    /** The read is in: replace the mirror, replay what completed meanwhile, and write the barrier. */
    private void install(int gen, LockMirror.Snapshot snapshot, Throwable err) {
        if (gen != generation || stopped.get()) {
            return;
        }
        if (err != null) {
            if (Zk.unwrap(err) instanceof MirrorLoader.OverBudget over) {
                dropMirror(gen, over.getMessage());
                return;
            }
            retryLater(gen, err);
            return;
        }
        if (overBudget) {
            overBudget = false;
            log.info("watch mirror: the cell fits in its bound again (about {} of {} bytes, watch-mirror-bytes)",
                    LockMirror.estimatedBytes(snapshot), maxBytes);
        }
        mirror.load(snapshot);
        List<Transaction> meanwhile = replay == null ? List.of() : replay;
        replay = null;
        replayNotes = 0;
        loader.sweepMarkers();
        settled = false;
        barrier = -1;
        target.rebuilding();
        mirrorBytes = mirror.estimatedBytes();
        for (Transaction t : meanwhile) {
            apply(t);
        }
        if (overBudget) {
            return; // the replay took it past the bound
        }
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
            // This reply came after the barrier's own notification and after every notification of the transactions
            // before it: the transaction under way, if any, is complete.
            if (open != null && open.zxid <= barrier) {
                complete();
            }
            maybeSettle();
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

    // ------------------------------------------------------------------ notifications (ZooKeeper's event thread)

    /** Hands a relevant notification (or a disconnection) to the hub's thread, keeping the order; never blocks. */
    private void notified(WatchedEvent event) {
        if (stopped.get()) {
            return;
        }
        if (event.getType() == Watcher.Event.EventType.None) {
            Watcher.Event.KeeperState state = event.getState();
            if (state == Watcher.Event.KeeperState.Disconnected || state == Watcher.Event.KeeperState.Expired) {
                onHub(this::disconnected);
            }
            return;
        }
        zxidSeen.accept(event.getZxid());
        Note note = note(event);
        if (note == null) {
            return;
        }
        if (overflowed.get()) {
            dropped.incrementAndGet(); // the hub is behind: it rebuilds once it has caught up
            return;
        }
        int waiting = pending.incrementAndGet();
        if (waiting > maxPending) {
            pending.decrementAndGet();
            dropped.incrementAndGet();
            if (overflowed.compareAndSet(false, true)) {
                onHub(this::fellBehind);
            }
            return;
        }
        mostPending.accumulateAndGet(waiting, Math::max);
        onHub(() -> {
            pending.decrementAndGet();
            take(note);
        });
        awaitingReply = true;
    }

    /**
     * ZooKeeper's event thread got a reply to one of this gateway's requests (any operation, through {@link Zk}). If a
     * notification was handed over since the last such reply, the transaction under way is complete by now (see the
     * class comment: a reply that came after a transaction's first notification came after all of them): tell the hub,
     * in order. This spares the probe for every transaction this gateway made itself.
     */
    private void replied(int rc) {
        if (awaitingReply && isServerReply(rc) && Thread.currentThread().getName().endsWith("EventThread")) {
            awaitingReply = false;
            onHub(() -> replyInOrder(rc, null));
        }
    }

    /** What a notification means to the mirror; null when nothing. Paths only: nothing is read. */
    private Note note(WatchedEvent event) {
        String raw = event.getPath();
        if (raw == null) {
            return null;
        }
        String path = raw.startsWith(chroot) ? raw.substring(chroot.length()) : raw;
        long zxid = event.getZxid();
        Watcher.Event.EventType type = event.getType();
        boolean created = type == Watcher.Event.EventType.NodeCreated;
        boolean deleted = type == Watcher.Event.EventType.NodeDeleted;
        if (path.startsWith(LOCKS_PREFIX)) {
            // Parsed on the hub's thread (take): this thread also runs every Curator callback of the gateway. A queue
            // node's data changes only when its holder is asked to let go (a revoke, or Curator's Revoker).
            if (type == Watcher.Event.EventType.NodeDataChanged) {
                return new Note(Kind.QUEUE_CHANGED, zxid, path, null);
            }
            return created || deleted ? new Note(created ? Kind.QUEUE_CREATED : Kind.QUEUE_DELETED, zxid, path, null) : null;
        }
        if (path.equals(CellPaths.LOCKS)) {
            return type == Watcher.Event.EventType.NodeDataChanged ? new Note(Kind.BARRIER, zxid, null, null) : null;
        }
        if (path.startsWith(SESSIONS_PREFIX)) {
            if (!created) {
                return null;
            }
            String[] parts = path.split("/", -1); // "", "sessions", shard, session id, [uuid, [note]]
            if (parts.length == 5 && !parts[4].startsWith("~")) {
                return new Note(Kind.REQUEST_RECORD, zxid, parts[3], parts[4]);
            }
            if (parts.length == 6 && parts[5].equals(CellPaths.DEADLOCK_FAIL_NOTE)) {
                return new Note(Kind.DEADLOCK_FAIL_NOTE, zxid, parts[4], null);
            }
            if (parts.length == 6) {
                String client = CellPaths.clientIdOfNote(parts[5]);
                return client == null ? null : new Note(Kind.CLIENT_NOTE, zxid, parts[4], client);
            }
            return null;
        }
        if (path.startsWith(EXPIRED_PREFIX)) {
            return created ? new Note(Kind.EXPIRY_MARKER, zxid, path.substring(EXPIRED_PREFIX.length()), null) : null;
        }
        if (path.startsWith(LOCK_DELAY_PREFIX)) {
            String session = CellPaths.sessionIdOf(path);
            if (session != null && path.equals(CellPaths.lockDelay(session)) && (created || deleted)) {
                return new Note(created ? Kind.LOCK_DELAY_CREATED : Kind.LOCK_DELAY_DELETED, zxid, session, null);
            }
        }
        return null;
    }

    private enum Kind { QUEUE_CREATED, QUEUE_DELETED, QUEUE_CHANGED, REQUEST_RECORD, CLIENT_NOTE, DEADLOCK_FAIL_NOTE, EXPIRY_MARKER, LOCK_DELAY_CREATED,
        LOCK_DELAY_DELETED, BARRIER }

    /**
     * One relevant notification: {@code a} and {@code b} by kind (a queue node's path; session and uuid; uuid and
     * client; a session).
     */
    private record Note(Kind kind, long zxid, String a, Object b) {
    }

    // ------------------------------------------------------------------ transactions (the hub's thread)

    private void take(Note note) {
        if (stopped.get()) {
            return;
        }
        if (note.zxid <= 0 && !warnedNoZxid) {
            warnedNoZxid = true;
            log.warn("ZooKeeper reports no zxid with watch events (it needs a 3.9 server): watch revisions are not reliable");
        }
        if (open != null && note.zxid != open.zxid) {
            complete(); // ZooKeeper delivers notifications in zxid order: the open transaction has all of its own
        }
        if (open == null) {
            open = new Transaction(note.zxid);
            armFlushTimer();
        }
        Transaction t = open;
        t.notes++;
        switch (note.kind) {
            case QUEUE_CREATED, QUEUE_DELETED -> {
                String path = note.a;
                int slash = path.lastIndexOf('/');
                QueueEntry entry = QueueEntry.parse(path.substring(slash + 1)).orElse(null);
                LockName name = entry == null ? null : CellPaths.lockName(path.substring(0, slash));
                if (name != null && note.kind == Kind.QUEUE_CREATED) {
                    t.queueNodeCreated(name.toString(), entry);
                } else if (name != null) {
                    t.queueNodeDeleted(name.toString(), entry);
                } else if (entry == null && note.kind == Kind.QUEUE_DELETED) {
                    LockName lock = CellPaths.lockName(path); // a lock's own node (reaped when empty)
                    if (lock != null) {
                        t.lockNodesDeleted.add(lock.toString());
                    }
                }
            }
            case QUEUE_CHANGED -> {
                String path = note.a;
                int slash = path.lastIndexOf('/');
                QueueEntry entry = QueueEntry.parse(path.substring(slash + 1)).orElse(null);
                LockName name = entry == null ? null : CellPaths.lockName(path.substring(0, slash));
                if (name != null) {
                    t.queueNodeChanged(name.toString(), entry);
                }
            }
            case REQUEST_RECORD -> t.sessionsByRequest.put((String) note.b, note.a);
            case CLIENT_NOTE -> t.clientsByRequest.put(note.a, (String) note.b);
            case DEADLOCK_FAIL_NOTE -> t.failOnDeadlock.add(note.a);
            case EXPIRY_MARKER -> t.expiring.add(note.a);
            case LOCK_DELAY_CREATED -> t.lockDelaysCreated.add(note.a);
            case LOCK_DELAY_DELETED -> t.lockDelaysDeleted.add(note.a);
            case BARRIER -> { } // its zxid is what settles a rebuild
        }
    }

    /** The open transaction is complete: apply it now, or keep it for after a rebuild's read. */
    private void complete() {
        Transaction t = open;
        open = null;
        if (replay != null) {
            replay.add(t);
            replayNotes += t.notes;
            if (replayNotes > maxPending) {
                log.warn("watch mirror: more than {} notifications arrived during the read of the cell; reading again", maxPending);
                fallBehinds.incrementAndGet();
                rebuild();
            }
            return;
        }
        apply(t);
    }

    private void apply(Transaction t) {
        lastZxid = Math.max(lastZxid, t.zxid);
        if (overBudget) {
            return; // the mirror is dropped; the next read of the cell starts it again
        }
        List<WatchEvent> events;
        try {
            events = mirror.apply(t);
        } catch (RuntimeException e) {
            log.warn("watch: could not apply {}", t, e);
            events = List.of();
        }
        mirrorBytes = mirror.estimatedBytes();
        if (mirror.overBudget()) {
            dropMirror(generation, "the mirror takes about " + mirrorBytes + " bytes of heap, more than its bound of "
                    + maxBytes + " (watch-mirror-bytes)");
            return;
        }
        List<String> exactAgain = mirror.drainCompleted();
        if (settled) {
            target.publish(t.zxid, events);
            if (!exactAgain.isEmpty()) {
                log.info("watch mirror: {} can be followed again (its queue is exact); the watches that cover it get a RESYNC",
                        exactAgain.size() == 1 ? "lock " + exactAgain.get(0) : exactAgain.size() + " locks");
                target.resyncCovering(t.zxid, exactAgain);
            }
        } else {
            maybeSettle();
        }
    }

    /**
     * The mirror is over its bound: drop it (its heap is freed), stop applying transactions, unsettle (watches wait;
     * size hints say "unknown") and read the cell again after {@link #OVER_BUDGET_RETRY}.
     */
    private void dropMirror(int gen, String why) {
        if (!overBudget) {
            log.warn("watch mirror dropped: {}. Watches (GET /v1/watch, the console's events) wait and the cell gauges are "
                    + "not refreshed until the cell fits again; locks, sessions and reads are served as usual. Reading "
                    + "the cell again every {} s", why, OVER_BUDGET_RETRY.toSeconds());
        }
        overBudget = true;
        mirror.clear();
        mirrorBytes = 0;
        open = null;
        barrier = -1;
        replay = null;
        replayNotes = 0;
        epoch++;
        settled = false;
        target.rebuilding();
        clock.schedule(OVER_BUDGET_RETRY, () -> onHub(() -> {
            if (gen == generation && !stopped.get()) {
                rebuild();
            }
        }));
    }

    /**
     * Arms the timer that probes a transaction that stayed the newest for {@link #FLUSH_DELAY}. On the hub's executor, in
     * real time, not on the gateway's {@link Clock}: it is latency only (what is published never depends on it), and a
     * test's manual clock must not hold events back.
     */
    private void armFlushTimer() {
        if (flushTimerSet || open == null) {
            return;
        }
        flushTimerSet = true;
        flushTimerZxid = open.zxid;
        try {
            hub.schedule(this::flushTimer, FLUSH_DELAY.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            flushTimerSet = false; // the hub is closed
        }
    }

    private void flushTimer() {
        flushTimerSet = false;
        if (open == null || stopped.get()) {
            return;
        }
        if (open.zxid != flushTimerZxid) {
            armFlushTimer(); // later transactions came meanwhile (each completed the one before): wait for this one
            return;
        }
        probe();
    }

    /** Sends a read whose reply, handed over in order with the notifications, completes the open transaction. */
    private void probe() {
        if (probing || handle == null) {
            return;
        }
        probing = true;
        probes.incrementAndGet();
        try {
            handle.exists(chroot + CellPaths.LOCKS, false, (rc, path, ctx, stat) -> onHub(() -> {
                probing = false;
                replyInOrder(rc, null);
            }), null);
        } catch (RuntimeException e) {
            probing = false;
        }
    }

    /**
     * Completes every transaction whose first notification came before now, then runs {@code then} on the hub's thread:
     * a {@code sync} makes this gateway's server catch up with the leader first, so afterwards the hub has published
     * every transaction committed before this call (a resume from a revision this gateway had not reached yet is then
     * served from the history, not with a RESYNC). {@code then} runs also when the sync fails.
     */
    void catchUp(Runnable then) {
        ZooKeeper h = handle;
        if (h == null) {
            then.run();
            return;
        }
        try {
            h.sync(chroot + CellPaths.LOCKS, (rc, path, ctx) -> onHub(() -> replyInOrder(rc, then)), null);
        } catch (RuntimeException e) {
            then.run();
        }
    }

    /**
     * On the hub's thread, in order with the notifications: a reply from the server (a probe's, a sync's, or any other
     * of this gateway's requests) came after the open transaction's first notification, so after all of them: the
     * transaction is complete. A reply made up by the client itself (a connection error) says nothing.
     */
    private void replyInOrder(int rc, Runnable then) {
        if (isServerReply(rc) && open != null && !stopped.get()) {
            complete();
        }
        if (then != null) {
            then.run();
        }
    }

    private static boolean isServerReply(int rc) {
        return rc != KeeperException.Code.CONNECTIONLOSS.intValue() && rc != KeeperException.Code.SESSIONEXPIRED.intValue()
                && rc != KeeperException.Code.SESSIONMOVED.intValue() && rc != KeeperException.Code.OPERATIONTIMEOUT.intValue()
                && rc != KeeperException.Code.REQUESTTIMEOUT.intValue();
    }

    /**
     * In order with the notifications: from here the mirror may miss changes (the gap's notifications are not
     * replayed), and the open transaction may lack some of its own. Stop publishing until the rebuild that the
     * reconnection starts settles it again.
     */
    private void disconnected() {
        if (stopped.get()) {
            return;
        }
        epoch++;
        barrier = -1;
        open = null;
        if (settled) {
            settled = false;
            target.rebuilding();
            log.info("watch mirror of /locks: disconnected from ZooKeeper at revision {}; events wait for the rebuild", lastZxid);
        }
    }

    /**
     * The hub reached the point where notifications started being dropped: the mirror misses them. Unsettle it and
     * rebuild from a full read (every watch then gets a RESYNC); notifications flow again from now on.
     */
    private void fellBehind() {
        fallBehinds.incrementAndGet();
        log.warn("watch mirror: the watch thread fell more than {} notifications behind ZooKeeper; rebuilding the mirror "
                + "(every watch gets a RESYNC)", maxPending);
        open = null;
        barrier = -1;
        epoch++;
        if (settled) {
            settled = false;
        }
        target.rebuilding();
        overflowed.set(false);
        rebuild();
    }

    private void onHub(Runnable task) {
        try {
            hub.execute(task);
        } catch (RejectedExecutionException e) {
            // the hub is closed
        }
    }
}
