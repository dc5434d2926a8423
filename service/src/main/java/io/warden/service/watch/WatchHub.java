package io.warden.service.watch;

import io.warden.service.api.WardenException;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.QueueListing;
import io.warden.service.queue.QueueSizes;
import io.warden.service.time.Clock;
import io.warden.service.zk.PacketLimit;
import io.warden.service.zk.Zk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway's watches ({@code GET /v1/watch}): one mirror of every lock queue in the cell, kept by one set of
 * ZooKeeper watches ({@link LockFeed}), a bounded history of the transactions it published ({@link EventHistory}), and
 * the subscribers, each with a filter and a sink.
 *
 * <p>Revisions are zxids. The hub publishes whole transactions ({@link EventBatch}): each watch gets the events of a
 * transaction that its filter covers in one call, and watches start (or get a RESYNC) only between transactions, so a
 * RESYNC is exact as of its revision. A subscriber that resumes from a revision the history still covers gets exactly
 * the events after it; one that resumes from further back (or from before this gateway started) first gets one
 * {@link Resync} with the current state from the mirror; one that resumes from a revision this gateway has not reached
 * is served after the gateway has caught up with ZooKeeper ({@link LockFeed#catchUp}), and with a RESYNC when the
 * revision is still ahead (a restored or another ensemble). After a reconnection to ZooKeeper (events may have been
 * missed) the history starts again and every subscriber gets a {@code Resync}.
 *
 * <p>Fan-out: subscribers are indexed by name and prefix ({@link SubscriberIndex}), so an event costs the watches that
 * may want it; each event is serialised once, by the first stream that sends it ({@link EventBatch#frames}); the
 * hand-off from ZooKeeper's thread is bounded ({@link LockFeed}).
 *
 * <p>Concurrency: one thread ({@code warden-watch}) owns the mirror, the history, the index, the parked subscribers and
 * every {@link Sub}'s mutable fields; everything else hands it tasks. Sinks never block it (they queue, bounded).
 * {@link #subscribe} and {@link Sub#cancel} may be called from any thread. What bounds each collection: the index and
 * {@code parked}, the two pools of watches (429 past either, {@link Limits}); {@code perSession}, the session pool;
 * the history, its capacity in events; {@code touched}, the watches.
 *
 * <p>Two pools: watches of names and prefixes (the console, EventSources, {@code warden watch}) share
 * {@link Limits#watches}; a session's own watch (any with {@code session_id=}, what the Java client keeps while it
 * holds locks, to learn when one ends elsewhere) counts against {@link Limits#sessionWatches} instead
 * (max-sessions-per-gateway), at most {@link #WATCHES_PER_SESSION} per session. So a gateway's 10,000 watchers never
 * lock its SDK sessions out of learning that their holds ended, and no one session takes more than a few slots of its
 * pool.
 *
 * <p>The mirror also tells the lock engine how large queues are ({@link #queueSizes()}, a {@link QueueSizes}): locks with
 * at least {@link Mirror#reportFrom} entries, while the mirror is exact (not during a rebuild). It is bounded by
 * {@link Mirror#maxBytes} (watch-mirror-bytes; see {@link LockFeed}), and locks too large to read are kept as counts.
 */
public final class WatchHub implements WatchSource, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WatchHub.class);
    public static final int DEFAULT_HISTORY = 10_000;
    public static final int MAX_WATCHES = 10_000;
    /**
     * Session watches one session may have open at once on one gateway: its client keeps one, and a stream that broke
     * stays counted until the gateway notices (at the latest at the next heartbeat, {@link #HEARTBEAT}).
     */
    public static final int WATCHES_PER_SESSION = 4;
    static final Duration HEARTBEAT = Duration.ofSeconds(15);

    private final ScheduledExecutorService thread;
    /** Where a resumed watch starts. */
    private final ResumeRule resume;
    private final Clock clock;
    private final LockMirror mirror;
    /** The wait-for graph's cycles, kept from the mirror on the hub's thread. */
    private final Deadlocks deadlocks;
    /** Whether the mirror is exact now ({@link #ready}), for {@link #queueSizes()} on other threads. */
    private volatile boolean exact;
    private final EventHistory history;
    private final LockFeed feed;
    private final Limits limits;
    private final AtomicInteger watches = new AtomicInteger();
    private final AtomicInteger sessionWatches = new AtomicInteger();
    /** Open session watches per session; an entry lives while its count is above 0 (bounded by the session pool). */
    private final Map<String, Integer> perSession = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CompletableFuture<Long> firstReady = new CompletableFuture<>();
    private volatile Clock.Cancellable heartbeatTimer;
    /** Filter checks, and calls of sinks with events (tests: the cost of an event is the watches that want it). */
    private final AtomicLong filterChecks = new AtomicLong();
    private final AtomicLong deliveries = new AtomicLong();

    // Confined to the hub's thread:
    private final SubscriberIndex<Sub> live = new SubscriberIndex<>();
    private final Set<Sub> parked = new LinkedHashSet<>();
    private final List<Sub> touched = new ArrayList<>();
    private boolean ready;
    private boolean resyncOnReady;
    /** The revision the mirror is exact at: the ready revision or the last transaction applied since. */
    private long revision;

    /**
     * How many watches a gateway serves: {@code watches} of names and prefixes (max-watches), and {@code sessionWatches}
     * of single sessions (max-sessions-per-gateway).
     */
    public record Limits(int watches, int sessionWatches) {
        public static final Limits DEFAULT = new Limits(MAX_WATCHES, 100_000);
    }

    /**
     * The mirror: how its full reads list locks ({@code queues}: a lock too large to list is kept as a count), its bound
     * in estimated bytes ({@code maxBytes}, 0 for none), and from how many entries on a lock's size is told to the engine
     * ({@code reportFrom}).
     */
    public record Mirror(QueueListing queues, long maxBytes, int reportFrom) {
    }

    public WatchHub(Zk zk, String chroot, Clock clock, String gatewayId, int historyCapacity) {
        this(zk, chroot, clock, gatewayId, historyCapacity, LockFeed.DEFAULT_MAX_PENDING, Limits.DEFAULT, defaultMirror(zk),
                ResumeRule.CONTRACT);
    }

    /** @param resume where a resumed watch starts ({@link ResumeRule#CONTRACT} but in the proof suite's broken gateways) */
    public WatchHub(Zk zk, String chroot, Clock clock, String gatewayId, int historyCapacity, Limits limits, Mirror mirror,
                    ResumeRule resume) {
        this(zk, chroot, clock, gatewayId, historyCapacity, LockFeed.DEFAULT_MAX_PENDING, limits, mirror, resume);
    }

    /** With the bound of notifications waiting for the hub's thread ({@code maxPending}; see {@link LockFeed}). */
    public WatchHub(Zk zk, String chroot, Clock clock, String gatewayId, int historyCapacity, int maxPending) {
        this(zk, chroot, clock, gatewayId, historyCapacity, maxPending, Limits.DEFAULT, defaultMirror(zk), ResumeRule.CONTRACT);
    }

    private static Mirror defaultMirror(Zk zk) {
        QueueListing queues = new QueueListing(zk, new PacketLimit(PacketLimit.ZOOKEEPER_DEFAULT), WardenMetrics.noop());
        return new Mirror(queues, 0, Integer.MAX_VALUE);
    }

    private WatchHub(Zk zk, String chroot, Clock clock, String gatewayId, int historyCapacity, int maxPending, Limits limits,
                     Mirror settings, ResumeRule resume) {
        this.clock = clock;
        this.resume = resume;
        this.limits = limits;
        this.history = new EventHistory(historyCapacity);
        this.mirror = new LockMirror(settings.reportFrom(), settings.maxBytes());
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warden-watch");
            t.setDaemon(true);
            return t;
        });
        this.feed = new LockFeed(zk, chroot, clock, thread, this, mirror, gatewayId, maxPending, settings.queues(),
                settings.maxBytes());
        this.deadlocks = new Deadlocks(thread, clock, mirror);
    }

    /**
     * Lets this gateway break deadlocks (before {@link #start}): a cycle's victim, once the cycle has been the same for
     * {@code delay}, goes to {@code breaker} (one conditional {@code multi}; true when it committed) — at once when
     * {@code heldHere(session, request uuid)} says this gateway holds the victim's call, else after a grace. Without it,
     * deadlocks are only reported.
     */
    public void breakDeadlocks(java.util.function.Function<io.warden.service.api.DeadlockAction, CompletableFuture<Boolean>> breaker,
                               java.util.function.BiPredicate<String, String> heldHere, Duration delay) {
        deadlocks.breaker(breaker, heldHere, delay);
    }

    /**
     * The current deadlocks as of the last computation of the wait-for graph from the mirror (no ZooKeeper request), each
     * with how long this gateway has seen it; {@code stale} while the mirror is being rebuilt or before it is first
     * read. Any thread.
     */
    public DeadlockReport deadlocks() {
        Deadlocks.Report r = deadlocks.report();
        long now = clock.read();
        List<io.warden.service.api.Deadlock> out = new ArrayList<>(r.cycles().size());
        for (Deadlocks.Cycle c : r.cycles()) {
            out.add(new io.warden.service.api.Deadlock(c.members(), c.sinceRevision(),
                    Math.max(0, TimeUnit.NANOSECONDS.toMillis(now - c.sinceNanos()))));
        }
        long ageMs = r == Deadlocks.Report.NONE ? 0 : Math.max(0, TimeUnit.NANOSECONDS.toMillis(now - r.computedNanos()));
        return new DeadlockReport(out, r.edges(), r.edgeCount(), r.revision(), ageMs, r.stale());
    }

    /**
     * The deadlocks a gateway knows: as of {@code revision}, computed {@code ageMs} ago; {@code stale} when its mirror
     * is not exact now. {@code edges} are the wait-for graph's (the deadlocks' first, at most 2,000 of
     * {@code edgeCount}), for the console.
     */
    public record DeadlockReport(List<io.warden.service.api.Deadlock> deadlocks, List<io.warden.service.api.WaitEdge> edges,
                                 int edgeCount, long revision, long ageMs, boolean stale) {
    }

    /** How many times the wait-for graph has been computed (tests). */
    public long deadlockComputations() {
        return deadlocks.computations();
    }

    /**
     * What the mirror knows of lock sizes, for the engine ({@link QueueListing#useSizes}): nothing while it is rebuilt or
     * dropped, nor while {@link Mirror#reportFrom} or more notifications wait for the hub's thread (a lock may have grown
     * by that many since the mirror counted it: a burst of creates on a busy machine); else the entries of every lock
     * with at least {@link Mirror#reportFrom}, fewer for every other. So a lock the mirror calls small has fewer than
     * {@code 2 × reportFrom} entries plus what ZooKeeper has not yet delivered, within what the engine lists.
     */
    public QueueSizes queueSizes() {
        return sizes;
    }

    private final QueueSizes sizes = new QueueSizes() {
        @Override
        public boolean mayHave(String name, int entries) {
            if (!exact || entries < mirror.reportFrom() || feed.pending() >= mirror.reportFrom()) {
                return true;
            }
            return mirror.entriesIfLarge(name) >= entries;
        }

        @Override
        public boolean knownToHave(String name, int entries) {
            int known = exact ? mirror.entriesIfLarge(name) : -1;
            return known >= 0 && known >= entries;
        }
    };

    /** The watch mirror's estimated heap, in bytes (0 while dropped), and its bound (0: none). Any thread. */
    public long mirrorBytes() {
        return feed.mirrorBytes();
    }

    public long mirrorMaxBytes() {
        return feed.maxBytes();
    }

    /**
     * Joins the hub to the cell's guard, before {@link #start}: {@code tokens} makes a queue node's token from its czxid
     * (the token floor added); every rebuild of the mirror waits for {@code rebuildWhen}, so a cell that lost
     * committed state is never mirrored and open watches get nothing from it (after a reconnection the mirror is
     * unsettled until its rebuild; new watches wait for it, or are refused in front of the hub); {@code zxids} is told
     * of every zxid the watches see.
     */
    public void guardedBy(io.warden.service.cell.Tokens tokens,
                          java.util.function.Supplier<CompletableFuture<Void>> rebuildWhen,
                          java.util.function.LongConsumer zxids) {
        mirror.tokens(tokens);
        feed.guardedBy(rebuildWhen, zxids);
    }

    /**
     * Ends the watches whose sinks {@code which} picks, each after what it has queued and a last comment naming
     * {@code reason}: the API's streams when the cell is found rolled back, so that their clients reconnect and are told
     * why (their new watches are refused), and no stream ever shows the cell's revisions going back.
     */
    public void endWatches(String reason, java.util.function.Predicate<WatchSink> which) {
        onHub(() -> {
            List<Sub> all = new ArrayList<>();
            forEachLive(all::add);
            all.addAll(parked);
            for (Sub sub : all) {
                if (which.test(sub.sink)) {
                    sub.sink.close(reason);
                    drop(sub);
                }
            }
        });
    }

    /** Sets the watches and starts the first read of the cell. */
    public void start() {
        feed.start();
        scheduleHeartbeat();
    }

    /** Waits until the first read is in and events flow; false when that took longer than {@code timeout}. */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        try {
            firstReady.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------ subscribers (any thread)

    @Override
    public Subscription subscribe(WatchFilter filter, Long sinceRevision, WatchSink sink) {
        if (closed.get()) {
            throw WardenException.unavailable("this gateway is stopping; watch on another gateway", null);
        }
        String pool = filter.sessionId();
        take(pool);
        Sub sub = new Sub(filter, sinceRevision, sink, pool, true);
        if (!onHub(() -> activate(sub, false))) {
            sub.cancel();
            throw WardenException.unavailable("this gateway is stopping; watch on another gateway", null);
        }
        return sub;
    }

    /**
     * A live watch of the gateway's own (its revocations' listener), counted in no pool: {@code max-watches} bounds the
     * clients' watches, and this one is one per gateway.
     */
    public Subscription subscribeOwn(WatchFilter filter, WatchSink sink) {
        if (closed.get()) {
            throw WardenException.unavailable("this gateway is stopping", null);
        }
        Sub sub = new Sub(filter, null, sink, filter.sessionId(), false);
        if (!onHub(() -> activate(sub, false))) {
            sub.cancel();
            throw WardenException.unavailable("this gateway is stopping", null);
        }
        return sub;
    }

    /** Counts a new watch into its pool ({@code session} null: names and prefixes), or refuses it with 429. */
    private void take(String session) {
        if (session == null) {
            if (watches.incrementAndGet() > limits.watches()) {
                watches.decrementAndGet();
                throw WardenException.exhausted("this gateway already serves " + limits.watches()
                        + " watches of names and prefixes (max-watches); watch on another gateway");
            }
            return;
        }
        if (sessionWatches.incrementAndGet() > limits.sessionWatches()) {
            sessionWatches.decrementAndGet();
            throw WardenException.exhausted("this gateway already serves " + limits.sessionWatches()
                    + " watches of single sessions (max-sessions-per-gateway); watch on another gateway");
        }
        boolean[] over = new boolean[1];
        perSession.compute(session, (k, n) -> {
            int count = n == null ? 0 : n;
            over[0] = count >= WATCHES_PER_SESSION;
            return over[0] ? n : count + 1;
        });
        if (over[0]) {
            sessionWatches.decrementAndGet();
            throw WardenException.exhausted("session " + session + " already has " + WATCHES_PER_SESSION
                    + " watches of its own open on this gateway; close one first");
        }
    }

    /** Counts a watch out of its pool. */
    private void give(String session) {
        if (session == null) {
            watches.decrementAndGet();
            return;
        }
        sessionWatches.decrementAndGet();
        perSession.computeIfPresent(session, (k, n) -> n <= 1 ? null : n - 1);
    }

    /**
     * The cell's live locks, holds and waiting requests as the mirror has them, or empty while it is being rebuilt
     * (then it may lack changes). No ZooKeeper request: this is what {@code /metrics}' cell gauges read, instead of a
     * walk of {@code /locks} every 30 s by every gateway (200,000 reads each at 200,000 locks).
     */
    public CompletableFuture<Optional<CellCounts>> counts() {
        CompletableFuture<Optional<CellCounts>> result = new CompletableFuture<>();
        if (!onHub(() -> {
            if (!ready) {
                result.complete(Optional.empty());
                return;
            }
            LockMirror.Counts c = mirror.counts();
            result.complete(Optional.of(new CellCounts(c.locks(), c.holds(), c.waiters())));
        })) {
            result.complete(Optional.empty());
        }
        return result;
    }

    /** Live locks, holds and waiting requests in the cell. */
    public record CellCounts(long locks, long holds, long waiters) {
    }

    /** Watches served now, both pools (tests and metrics). */
    public int watchCount() {
        return watches.get() + sessionWatches.get();
    }

    /** Watches of single sessions served now (their pool). */
    public int sessionWatchCount() {
        return sessionWatches.get();
    }

    /** What the fan-out has cost so far, in counts (tests and metrics). */
    public record Stats(long filterChecks, long deliveries, int mostPendingNotifications, long droppedNotifications,
                        int fallBehinds, int probes) {
    }

    public Stats stats() {
        return new Stats(filterChecks.get(), deliveries.get(), feed.mostPending(), feed.dropped(), feed.fallBehinds(),
                feed.probes());
    }

    // ------------------------------------------------------------------ the hub's thread

    /** On the hub's thread, between transactions: the mirror is exact as of {@code revision}. */
    private void activate(Sub sub, boolean caughtUp) {
        if (sub.cancelled.get()) {
            return;
        }
        if (!ready) {
            parked.add(sub); // served when the mirror is ready
            return;
        }
        Long since = resume.resumeAfter(sub.since);
        if (since != null && since > revision && !caughtUp) {
            // Past this gateway's revision: maybe another gateway is a little ahead, maybe the revision is from a
            // restored or another ensemble. Catch up with ZooKeeper first, then decide.
            feed.catchUp(() -> activate(sub, true));
            return;
        }
        if (since != null) {
            // Still past it after catching up: answered like a revision older than the history, with the current state.
            Optional<List<EventHistory.Replay>> missed = since > revision ? Optional.empty() : history.after(since, sub.filter);
            if (missed.isPresent()) {
                sub.after = since; // events at or before it come no more (another gateway may have been ahead)
                for (EventHistory.Replay r : missed.get()) {
                    deliveries.incrementAndGet();
                    if (!sub.sink.replay(r.batch(), r.selected())) {
                        drop(sub);
                        return;
                    }
                }
            } else if (!sub.sink.resync(new Resync(revision, mirror.views(sub.filter, revision)))) {
                drop(sub);
                return;
            }
        }
        if (!sub.cancelled.get()) {
            live.add(sub, sub.filter);
            sub.indexed = true;
        }
    }

    /** From the feed: the mirror is being rebuilt; until {@link #ready}, new subscribers wait. */
    void rebuilding() {
        if (ready) {
            resyncOnReady = true; // a rebuild after the first: changes may have been missed
        }
        ready = false;
        exact = false;
        deadlocks.rebuilding();
    }

    /** From the feed: the mirror is exact as of {@code zxid} and events flow again. */
    void ready(long zxid) {
        ready = true;
        exact = true;
        revision = zxid;
        history.reset(zxid);
        deadlocks.changed(zxid);
        if (resyncOnReady) {
            resyncOnReady = false;
            List<Sub> all = new ArrayList<>(live.size());
            forEachLive(all::add);
            for (Sub sub : all) {
                if (!sub.sink.resync(new Resync(zxid, mirror.views(sub.filter, zxid)))) {
                    drop(sub);
                }
            }
        }
        List<Sub> waiting = new ArrayList<>(parked);
        parked.clear();
        waiting.forEach(s -> activate(s, false));
        firstReady.complete(zxid);
    }

    /** From the feed: one whole transaction applied at {@code zxid}, and its events in order (maybe none). */
    void publish(long zxid, List<WatchEvent> events) {
        revision = Math.max(revision, zxid);
        if (events.isEmpty()) {
            return;
        }
        deadlocks.changed(revision);
        EventBatch batch = new EventBatch(zxid, events);
        history.add(batch);
        touched.clear();
        for (int i = 0; i < events.size(); i++) {
            WatchEvent e = events.get(i);
            int index = i;
            live.candidates(e.name(), e.sessionId(), sub -> {
                filterChecks.incrementAndGet();
                if (zxid > sub.after && sub.filter.matches(e)) {
                    sub.pick(batch, index, touched);
                }
            });
        }
        for (Sub sub : touched) {
            int[] selected = sub.picked(events.size());
            deliveries.incrementAndGet();
            if (!sub.sink.events(batch, selected)) {
                drop(sub);
                log.debug("watch {} dropped: its consumer is too slow", sub.filter);
            }
        }
        touched.clear();
    }

    /**
     * From the feed, right after publishing {@code zxid}: the queues of {@code names} are exact again after a stretch in
     * which the mirror could not follow them (too large to read), and their events were not published. The history
     * starts again here (a resume from before could miss their changes), and every watch that may cover one of them
     * gets a RESYNC.
     */
    void resyncCovering(long zxid, List<String> names) {
        history.reset(zxid);
        deadlocks.changed(zxid);
        List<Sub> covering = new ArrayList<>();
        forEachLive(sub -> {
            for (String name : names) {
                if (sub.filter.matches(name)) {
                    covering.add(sub);
                    return;
                }
            }
        });
        for (Sub sub : covering) {
            if (!sub.sink.resync(new Resync(zxid, mirror.views(sub.filter, zxid)))) {
                drop(sub);
            }
        }
    }

    private void drop(Sub sub) {
        if (sub.indexed) {
            live.remove(sub, sub.filter);
            sub.indexed = false;
        }
        parked.remove(sub);
        sub.release();
    }

    private void forEachLive(java.util.function.Consumer<Sub> each) {
        live.forEach(each);
    }

    private void scheduleHeartbeat() {
        if (closed.get()) {
            return;
        }
        heartbeatTimer = clock.schedule(HEARTBEAT, () -> {
            onHub(() -> {
                forEachLive(s -> s.sink.heartbeat());
                // Parked watches too: during an outage only a write frees a dead client's slot.
                parked.forEach(s -> s.sink.heartbeat());
            });
            scheduleHeartbeat();
        });
    }

    private boolean onHub(Runnable task) {
        try {
            thread.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Stops the watches and ends every watch stream. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Clock.Cancellable t = heartbeatTimer;
        if (t != null) {
            t.cancel();
        }
        feed.stop();
        onHub(() -> {
            List<Sub> all = new ArrayList<>();
            forEachLive(all::add);
            all.addAll(parked);
            for (Sub sub : all) {
                sub.sink.close("gateway stopping");
                drop(sub);
            }
        });
        thread.shutdown();
        try {
            if (!thread.awaitTermination(2, TimeUnit.SECONDS)) {
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            thread.shutdownNow();
        }
    }

    /** A subscriber. Its mutable fields are confined to the hub's thread; {@code cancelled} is shared. */
    private final class Sub implements Subscription {
        final WatchFilter filter;
        final Long since;
        final WatchSink sink;
        final AtomicBoolean cancelled = new AtomicBoolean();
        /** The session whose pool the watch counts in, or null for the pool of names and prefixes. */
        final String pool;
        /** Whether the watch counts in its pool (a client's); the gateway's own do not. */
        final boolean counted;
        long after = Long.MIN_VALUE;
        boolean indexed;
        /** The batch being published and the indexes of its events this watch covers (publish's scratch). */
        private EventBatch picking;
        private int[] picks = new int[4];
        private int pickCount;

        Sub(WatchFilter filter, Long since, WatchSink sink, String pool, boolean counted) {
            this.counted = counted;
            this.filter = filter;
            this.since = since;
            this.sink = sink;
            this.pool = pool;
        }

        void pick(EventBatch batch, int index, List<Sub> touched) {
            if (picking != batch) {
                picking = batch;
                pickCount = 0;
                touched.add(this);
            }
            if (pickCount == picks.length) {
                picks = Arrays.copyOf(picks, picks.length * 2);
            }
            picks[pickCount++] = index;
        }

        /** The indexes picked from the batch, null when all {@code size} of them; and forgets the batch. */
        int[] picked(int size) {
            picking = null;
            int[] out = pickCount == size ? null : Arrays.copyOf(picks, pickCount);
            if (picks.length > 64) {
                picks = new int[4]; // a large transaction's scratch is not kept
            }
            return out;
        }

        @Override
        public void cancel() {
            if (release()) {
                onHub(() -> {
                    if (indexed) {
                        live.remove(this, filter);
                        indexed = false;
                    }
                    parked.remove(this);
                });
            }
        }

        /** Counts the watch out once; true the first time. */
        boolean release() {
            if (cancelled.compareAndSet(false, true)) {
                if (counted) {
                    give(pool);
                }
                return true;
            }
            return false;
        }
    }
}
