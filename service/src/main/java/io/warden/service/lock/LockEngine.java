package io.warden.service.lock;

import io.warden.service.TestFault;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockTooLargeException;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.WardenException;
import io.warden.service.cell.Tokens;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.session.RequestRecord;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The lock engine: queues of persistent sequential nodes under {@code /locks/{name}}, decided by {@link LockQueue}.
 *
 * <p>An acquire is one ZooKeeper {@code multi}: it creates the session's request record
 * {@code /sessions/{sid}/{uuid}} and the queue node {@code _c_{uuid}-__WRIT__|__READ__{seq}} together, so a queue node
 * never outlives its session (expiry deletes the record, which fails while the session has requests it did not
 * delete) and a retry with the same request id fails on the existing record and finds the node the first call made.
 * The multi also sets the request record's data, whose returned stat carries the transaction's zxid: the queue node's
 * czxid, without another read; the token is that plus the cell's token floor ({@link Tokens}).
 *
 * <p>A blocked request watches the one node it waits for ({@link LockQueue#blocker}); when that goes, it reads the
 * children once and either holds or watches the next blocker. Waiting costs memory, not threads.
 *
 * <p>Admission: a lock has at most {@code max-entries-per-lock} entries, holders and waiters alike, those of other
 * ZooKeeper clients on its node included, so that its queue stays listable in one ZooKeeper reply by every client of it.
 * A new request whose queue node has that many entries before it is taken back and refused (429) before it could be
 * granted; when the watch mirror already knows the lock is full, the acquire looks at the node's child count first and
 * writes nothing. {@code max-waiters-per-lock} bounds the waiters on top.
 *
 * <p>A lock too large to list ({@link QueueListing}: only foreign entries can make it so) is never read: a new request on
 * it is refused, a held call already waiting on it looks again every second or so (doubling to {@link #RECHECK_MAX})
 * until it can be decided or its {@code wait_ms} runs out, and a retry of a queued request is answered 429.
 *
 * <p>This class is the acquire path and the held calls; each other mechanism has its own class: who holds
 * ({@link LockQueue}), ending requests ({@link RequestEnds}), tombstones and their pruning ({@link Tombstones}),
 * per-session hints ({@link SessionHints}), holds and waits per principal ({@link RequestQuotas}), held calls
 * ({@link WaitingCalls}) and their watches ({@link BlockerWatches}), reads ({@link LockReader}, {@link NodeInfoCache},
 * every listing of a queue through {@link QueueListing}).
 *
 * <p>Concurrency: called from any thread; continuations run on Curator's event thread and never block. Held calls are
 * registered in {@link WaitingCalls} from start to answer. Each {@link Waiting} moves WAITING → DONE, or WAITING →
 * TIMING_OUT → DONE, by compare-and-set: only the path that wins the move answers the call, so a request is never
 * reported GRANTED after the engine deleted its node.
 */
public final class LockEngine {
    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);
    private static final int MAX_CREATE_ATTEMPTS = 8;
    /*
     * Bounds of the engine's in-memory hints (design.md, "Memory: what bounds every map"). Each map only saves a
     * ZooKeeper read: an entry evicted (least recently used first, by Caffeine) costs one read when it would have been
     * used, never a wrong answer. 100,000 is the default max-sessions-per-gateway: one hint per session tracked here,
     * and one made request per session, stay cached; about 25 MB each at most.
     */
    static final int MAX_HINTS = 100_000;
    static final int MAX_RELEASED_AT = 10_000;
    static final int MAX_NEAR_LIMIT = 10_000;
    /** The longest a held call on a lock too large to read waits before it looks again (it starts at a second). */
    static final Duration RECHECK_MAX = Duration.ofSeconds(8);

    private final Zk zk;
    private final Clock clock;
    private final WardenMetrics metrics;
    /** A queue node's token from its czxid: the cell's token floor added. */
    private final Tokens tokens;
    private final int maxRequestsPerSession;
    private final int maxWaitersPerLock;
    private final int maxEntriesPerLock;
    private final QueueListing queues;
    private final NodeInfoCache nodes;
    private final Tombstones tombstones;
    private final SessionHints sessions;
    /** Holds plus queued requests per principal (in open mode per opener address) made through this gateway. */
    private final RequestQuotas quotas;
    private final RequestEnds ends;
    private final LockReader reader;
    /** Held acquire calls on this gateway, by session id. */
    private final WaitingCalls<Waiting> waiting = new WaitingCalls<>();
    /** The watches held calls keep on their blockers, one per blocker node. */
    private final BlockerWatches<Waiting> blockers;
    /** Lock paths whose sequence was found near the limit: acquires read the node's stat before creating. */
    private final Set<String> nearLimit = java.util.Collections.newSetFromMap(bounded(MAX_NEAR_LIMIT));
    /** When this gateway last released a hold of a lock path, for the handoff metric (a sample, taken by the next grant). */
    private final Map<String, Long> releasedAt = bounded(MAX_RELEASED_AT);
    private volatile boolean draining;

    /**
     * @param queues                  every listing of a lock's queue goes through it
     * @param maxEntriesPerLock       holders plus waiters one lock may have (foreign entries included)
     * @param maxRequestsPerPrincipal holds plus queued requests one principal (in open mode one opener address) may have
     *                                made through this gateway ({@link RequestQuotas})
     */
    public LockEngine(Zk zk, Clock clock, WardenMetrics metrics, QueueListing queues, int maxRequestsPerSession,
                      int maxWaitersPerLock, int maxEntriesPerLock, int maxRequestsPerPrincipal) {
        this(zk, clock, metrics, queues, maxRequestsPerSession, maxWaitersPerLock, maxEntriesPerLock,
                maxRequestsPerPrincipal, Tokens.CZXID);
    }

    /** As above, with {@code tokens}: a queue node's token from its czxid (plus the cell's token floor). */
    public LockEngine(Zk zk, Clock clock, WardenMetrics metrics, QueueListing queues, int maxRequestsPerSession,
                      int maxWaitersPerLock, int maxEntriesPerLock, int maxRequestsPerPrincipal, Tokens tokens) {
        this.zk = zk;
        this.clock = clock;
        this.metrics = metrics;
        this.tokens = tokens;
        this.queues = queues;
        this.maxRequestsPerSession = maxRequestsPerSession;
        this.maxWaitersPerLock = maxWaitersPerLock;
        this.maxEntriesPerLock = maxEntriesPerLock;
        this.nodes = new NodeInfoCache(zk, tokens);
        this.tombstones = new Tombstones(zk);
        this.sessions = new SessionHints(zk, maxRequestsPerSession);
        this.quotas = new RequestQuotas(zk, clock, maxRequestsPerPrincipal);
        this.ends = new RequestEnds(zk, nodes, tombstones, queues);
        this.reader = new LockReader(zk, nodes, queues);
        this.blockers = new BlockerWatches<>(zk, clock, metrics, w -> w.state.get() == Waiting.WAITING, w -> {
            if (!TestFault.active(TestFault.WAITERS_NEVER_WOKEN)) {
                evaluate(w);
            }
        });
        zk.client().getConnectionStateListenable().addListener((c, state) -> {
            if (state == org.apache.curator.framework.state.ConnectionState.RECONNECTED) {
                // Watches do not survive a ZooKeeper session expiry: look at every held call again.
                forEachWaiting(this::evaluate);
            }
        });
    }

    // ------------------------------------------------------------------ acquire

    public CompletableFuture<AcquireResult> acquire(AcquireRequest req) {
        long start = clock.read();
        CompletableFuture<AcquireResult> result;
        try {
            if (draining) {
                throw drainingError();
            }
            zk.failFast();
            result = sessions.prepare(req.sessionId()).thenCompose(p -> create(req, p, start, 1)).thenCompose(this::start);
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.whenComplete((r, err) -> metrics.acquire(err != null ? "error" : r.status().name().toLowerCase(), clock.read() - start));
    }

    /**
     * A session opened here: its client id and owner are known, and it has no requests yet. {@code quotaOwner}: whose
     * request quota its requests count against ({@link io.warden.service.session.SessionRecord#quotaOwner}).
     */
    public void sessionOpened(String sessionId, String clientId, String principal, String quotaOwner) {
        sessions.opened(sessionId, clientId, principal, quotaOwner);
    }

    /** Creates the request's record and queue node in one multi; on a retry finds the existing ones. */
    private CompletableFuture<Waiting> create(AcquireRequest req, SessionHints.Prepared p, long start, int attempt) {
        String uuid = CellPaths.requestUuid(req.sessionId(), req.requestId());
        String lockPath = CellPaths.lock(req.name());
        String requestPath = CellPaths.sessionRequest(req.sessionId(), uuid);
        byte[] requestData = Json.write(new RequestRecord(req.name().toString(), req.mode(), req.requestId()));
        byte[] nodeData = Json.write(new QueueNodeData(req.sessionId(), p.clientId(), req.requestId(), req.mode(), p.principal()));
        List<CuratorOp> ops;
        try {
            List<CuratorOp> list = new java.util.ArrayList<>(5);
            list.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(requestPath, requestData));
            list.add(zk.ops().setData().withVersion(0).forPath(requestPath, requestData));
            list.add(zk.ops().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(lockPath + "/" + QueueEntry.prefix(uuid, req.mode()), nodeData));
            if (p.clientId() != null) {
                // Made and removed in this transaction: its notification tells the watch mirrors the client id without
                // a read (CellPaths.clientIdNote). Last, so the results above keep their places.
                String note = requestPath + "/" + CellPaths.clientIdNote(p.clientId());
                list.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(note, new byte[0]));
                list.add(zk.ops().delete().forPath(note));
            }
            ops = list;
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        if (p.requests() >= maxRequestsPerSession && !p.exact()) {
            // The count may include ended requests' tombstones: count precisely before refusing.
            return sessions.exact(req.sessionId(), p.clientId(), p.principal(), p.owner())
                    .thenCompose(exact -> create(req, exact, start, attempt));
        }
        if (p.requests() >= maxRequestsPerSession) {
            // At the limit only a retry of an existing request may go on.
            return zk.data(requestPath).handle((ds, err) -> {
                if (err != null && Zk.code(err) == Code.NONODE) {
                    throw WardenException.exhausted("session " + req.sessionId() + " has " + p.requests()
                            + " holds and queued requests, the most allowed per session (max-requests-per-session)");
                }
                if (err != null) {
                    throw Zk.translate(err);
                }
                return ds;
            }).thenCompose(ds -> existingRecord(req, lockPath, uuid, ds, start));
        }
        if (nearLimit.contains(lockPath)) {
            // This lock's sequence was near the limit a moment ago: look before making (and undoing) another node.
            return zk.exists(lockPath).thenCompose(stat -> {
                if (stat != null && !LockQueue.admits(LockQueue.nextSequence(stat.getCversion(), stat.getNumChildren()))) {
                    throw sequenceExhausted(req.name(), LockQueue.nextSequence(stat.getCversion(), stat.getNumChildren()));
                }
                nearLimit.remove(lockPath); // drained and reaped: the name starts again at 0
                return create(req, p, start, attempt);
            });
        }
        if (queues.sizes().knownToHave(req.name().toString(), maxEntriesPerLock)) {
            // The watch mirror saw this lock full a moment ago: look at its child count (one exists) before making a
            // node only to take it back. Full: only a retry of an existing request goes on, and nothing is written.
            return zk.exists(lockPath).thenCompose(stat -> {
                if (stat == null || stat.getNumChildren() < maxEntriesPerLock) {
                    return reserveAndWrite(req, p, ops, start, attempt);
                }
                return zk.data(requestPath).handle((ds, err) -> {
                    if (err != null && Zk.code(err) == Code.NONODE) {
                        throw full(req.name(), stat.getNumChildren());
                    }
                    if (err != null) {
                        throw Zk.translate(err);
                    }
                    return ds;
                }).thenCompose(ds -> existingRecord(req, lockPath, uuid, ds, start));
            });
        }
        return reserveAndWrite(req, p, ops, start, attempt);
    }

    private WardenException full(LockName name, int entries) {
        return WardenException.exhausted("lock " + name + " already has " + entries + " holders and queued requests, the "
                + "most allowed per lock (max-entries-per-lock " + maxEntriesPerLock + "; entries of other ZooKeeper "
                + "clients on the lock's node count too)");
    }

    /** The per-principal quota, then the acquire's {@code multi}. */
    private CompletableFuture<Waiting> reserveAndWrite(AcquireRequest req, SessionHints.Prepared p, List<CuratorOp> ops,
                                                       long start, int attempt) {
        String uuid = CellPaths.requestUuid(req.sessionId(), req.requestId());
        String lockPath = CellPaths.lock(req.name());
        String requestPath = CellPaths.sessionRequest(req.sessionId(), uuid);
        String owner = p.owner();
        if (quotas.reserve(owner) >= 0) {
            // The owner is at its max-requests-per-principal here: count again from ZooKeeper (its requests may have
            // ended through other gateways; at most once a second), then only a retry of an existing request may go
            // on, as at the per-session limit. Nothing is written: a refusal leaves ZooKeeper as it was.
            return quotas.recount(owner).thenCompose(v -> {
                int has = quotas.reserve(owner);
                if (has < 0) {
                    return write(req, p, ops, start, attempt);
                }
                return zk.data(requestPath).handle((ds, err) -> {
                    if (err != null && Zk.code(err) == Code.NONODE) {
                        throw WardenException.exhausted(owner + " already has " + has + " holds and queued requests "
                                + "made through this gateway, the most allowed (max-requests-per-principal); release or "
                                + "cancel some, or let their sessions end");
                    }
                    if (err != null) {
                        throw Zk.translate(err);
                    }
                    return ds;
                }).thenCompose(ds -> existingRecord(req, lockPath, uuid, ds, start));
            });
        }
        return write(req, p, ops, start, attempt);
    }

    /**
     * The acquire's {@code multi}, with a place reserved in {@link #quotas} for {@code p.owner()}: the request made
     * keeps it, anything else gives it back.
     */
    private CompletableFuture<Waiting> write(AcquireRequest req, SessionHints.Prepared p, List<CuratorOp> ops, long start,
                                             int attempt) {
        String uuid = CellPaths.requestUuid(req.sessionId(), req.requestId());
        String lockPath = CellPaths.lock(req.name());
        String requestPath = CellPaths.sessionRequest(req.sessionId(), uuid);
        CompletableFuture<List<org.apache.curator.framework.api.transaction.CuratorTransactionResult>> sent;
        try {
            sent = zk.multi(ops);
        } catch (RuntimeException e) {
            quotas.unreserve(p.owner());
            return CompletableFuture.failedFuture(e);
        }
        return sent.handle((results, err) -> {
            if (err == null) {
                long czxid = results.get(1).getResultStat().getMzxid();
                String node = lastSegment(results.get(2).getResultPath());
                long sequence = QueueEntry.parse(node).map(QueueEntry::sequence).orElse(-1L);
                if (!LockQueue.admits(sequence)) {
                    quotas.unreserve(p.owner()); // undone at once (or, if the undo fails, left to end with its session)
                    return refuse(req, lockPath + "/" + node, requestPath, sequence);
                }
                quotas.commit(p.owner(), req.sessionId(), uuid);
                sessions.count(req.sessionId(), 1);
                // The request is made; when its token cannot be said now (the floor is being read again), the call
                // fails and a retry with the same request_id finds the node.
                long token = tokens.of(czxid);
                ends.remember(req.sessionId(), lockPath, token, node);
                nodes.put(new NodeInfo(lockPath + "/" + node, token, req.mode(),
                        new QueueNodeData(req.sessionId(), p.clientId(), req.requestId(), req.mode(), p.principal()),
                        results.get(1).getResultStat().getMtime()));
                return CompletableFuture.completedFuture(new Waiting(req, lockPath, uuid, node, token, start, true));
            }
            quotas.unreserve(p.owner()); // nothing was made (a retry's request was counted when it was made)
            Throwable cause = Zk.unwrap(err);
            if (cause instanceof Zk.MultiFailure mf) {
                int failed = mf.failedIndex();
                if (mf.code() == Code.NODEEXISTS) {
                    // A retry: the first call's request record exists. Find its node.
                    return zk.data(requestPath).handle((ds, e2) -> {
                        if (e2 != null && Zk.code(e2) == Code.NONODE) {
                            return create(req, p, start, attempt + 1);
                        }
                        if (e2 != null) {
                            throw Zk.translate(e2);
                        }
                        return existingRecord(req, lockPath, uuid, ds, start);
                    }).thenCompose(f -> f);
                }
                if (mf.code() == Code.NONODE && failed == 0) {
                    throw WardenException.sessionNotFound(req.sessionId());
                }
                if (mf.code() == Code.NONODE && attempt < MAX_CREATE_ATTEMPTS) {
                    // The lock node (a container) is missing, or was reaped between our create and the multi.
                    return ensureLockNode(lockPath).thenCompose(v -> create(req, p, start, attempt + 1));
                }
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /**
     * The node just made has a sequence too close to the limit (see {@link LockQueue}): takes the node and its request
     * record back, as if the request had never been made, and refuses it. Later acquires on this lock look first.
     */
    private CompletableFuture<Waiting> refuse(AcquireRequest req, String nodePath, String requestPath, long sequence) {
        nearLimit.add(CellPaths.lock(req.name()));
        WardenException refusal = sequenceExhausted(req.name(), sequence);
        log.warn("lock {} is near the end of its sequence numbers (node {}); refusing new requests until it drains",
                req.name(), lastSegment(nodePath));
        List<CuratorOp> undo;
        try {
            undo = List.of(zk.ops().delete().forPath(nodePath), zk.ops().delete().forPath(requestPath));
        } catch (Exception e) {
            refusal.addSuppressed(e);
            return CompletableFuture.failedFuture(refusal);
        }
        return zk.multi(undo).handle((r, err) -> {
            if (err != null) {
                // The entry stays, with its record: a legitimate request (below the limit) that a retry with the same
                // request_id rejoins, and that ends with its session.
                refusal.addSuppressed(Zk.unwrap(err));
            }
            throw refusal;
        });
    }

    private static WardenException sequenceExhausted(LockName name, long sequence) {
        return WardenException.exhausted("lock " + name + " has used up its queue sequence numbers (next " + sequence
                + ", new requests are taken below " + (LockQueue.SEQUENCE_LIMIT - LockQueue.ADMISSION_MARGIN)
                + "); it takes new requests again once its holders and waiters are gone and ZooKeeper has removed its node");
    }

    private CompletableFuture<Void> ensureLockNode(String lockPath) {
        return zk.create(lockPath, new byte[0], CreateMode.CONTAINER, true).handle((n, err) -> {
            if (err != null && Zk.code(err) != Code.NODEEXISTS) {
                throw Zk.translate(err);
            }
            return null;
        });
    }

    /** A request record exists for this request id: a live request to rejoin, or a tombstone of one that ended. */
    private CompletableFuture<Waiting> existingRecord(AcquireRequest req, String lockPath, String uuid, Zk.DataAndStat ds, long start) {
        RequestRecord rec = Json.readOrNull(ds.data(), RequestRecord.class);
        if (rec != null && rec.done()) {
            return CompletableFuture.failedFuture(WardenException.invalid("request_id", "request " + req.requestId()
                    + " of this session has already ended (released, cancelled or timed out); use a new request_id"));
        }
        return existing(req, lockPath, uuid, tokens.of(ds.stat().getCzxid()), start);
    }

    /** The request was made before (same session and request id): find its queue node. */
    private CompletableFuture<Waiting> existing(AcquireRequest req, String lockPath, String uuid, long token, long start) {
        // A retry may reach here with no write of its own (a session at its request limit only reads): sync first, so
        // the grant decision that follows reads state at least as new as the call (design.md,
        // "Acquire"). On every other path the call's own multi came first on this connection, which orders its reads.
        // A failed sync fails the call (503, the client retries): a read without it could be the stale one.
        // StaleFollowerIT shows the double grant without the sync.
        return zk.sync(lockPath).thenCompose(v -> queues.children(lockPath, "a request queued on it cannot be looked "
                + "up; it stays queued")).handle((children, err) -> {
            if (err != null && Zk.code(err) != Code.NONODE) {
                throw Zk.translate(err);
            }
            var entry = children == null ? java.util.Optional.<QueueEntry>empty() : LockQueue.of(children).byId(uuid);
            if (entry.isEmpty()) {
                throw WardenException.invalid("request_id", "request " + req.requestId()
                        + " of this session is recorded for another lock or was removed; use a new request_id");
            }
            if (entry.get().mode() != req.mode()) {
                throw WardenException.invalid("request_id", "request " + req.requestId() + " was made with mode "
                        + entry.get().mode() + "; a retry must repeat it");
            }
            ends.remember(req.sessionId(), lockPath, token, entry.get().node());
            return new Waiting(req, lockPath, uuid, entry.get().node(), token, start, false);
        });
    }

    private CompletableFuture<AcquireResult> start(Waiting w) {
        if (w.req.waitMs() > 0) {
            // wait_ms counts from when the call arrived, not from when its node was made.
            long left = Duration.ofMillis(w.req.waitMs()).toNanos() - (clock.read() - w.startNanos);
            w.timer = clock.schedule(Duration.ofNanos(Math.max(0, left)), () -> onTimeout(w));
        }
        waiting.add(w.req.sessionId(), w);
        metrics.waiterAdded();
        if (draining) {
            // drain() sets the flag, then answers the calls it finds: a call registered after that look answers itself.
            fail(w, drainingError());
            return w.future;
        }
        evaluate(w);
        return w.future;
    }

    /** Reads the queue once and grants, answers a try-lock, or watches the one blocker. */
    private void evaluate(Waiting w) {
        if (w.state.get() != Waiting.WAITING) {
            return;
        }
        queues.read(w.lockPath, "new requests on it are refused, and requests queued on it wait").whenComplete((cs, err) -> {
            if (w.state.get() != Waiting.WAITING) {
                return;
            }
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    gone(w);
                } else if (Zk.unwrap(err) instanceof LockTooLargeException big) {
                    cannotRead(w, big);
                } else {
                    fail(w, Zk.translate(err));
                }
                return;
            }
            LockQueue q = LockQueue.of(cs.children());
            int i = q.indexOf(w.node);
            if (i < 0) {
                gone(w);
                return;
            }
            if (w.evaluations++ == 0) {
                metrics.queueDepth(q.entries().size());
                if (w.made && i >= maxEntriesPerLock) {
                    // Holders and waiters, foreign entries included (max-waiters-per-lock alone left SHARED holders
                    // unbounded, and enough of them make a listing no client can read: docs/design.md, "How large a
                    // lock may be"). Checked before the grant: a SHARED request that would hold at once is refused
                    // too. By position, so a burst of acquires refuses the later ones.
                    w.refusal = full(w.req.name(), i);
                } else if (!q.holds(i) && q.waiters().size() > maxWaitersPerLock) {
                    // Waiters only: counting the holders would let a lock with one holder admit one waiter fewer
                    // than max-waiters-per-lock. This request is one of the waiters unless it holds.
                    w.refusal = WardenException.exhausted("lock " + w.req.name() + " already has "
                            + (q.waiters().size() - 1) + " queued requests, the most allowed (max-waiters-per-lock)");
                }
            }
            if (w.refusal != null) {
                if (w.state.compareAndSet(Waiting.WAITING, Waiting.TIMING_OUT)) {
                    remove(w).whenComplete((v, e) -> finishWithError(w, w.refusal));
                }
                return;
            }
            if (q.holds(i) || TestFault.active(TestFault.GRANT_WITHOUT_CHECK)) {
                if (w.state.compareAndSet(Waiting.WAITING, Waiting.DONE)) {
                    grant(w, q, cs.stat());
                }
                return;
            }
            if (w.req.waitMs() == 0) {
                if (w.state.compareAndSet(Waiting.WAITING, Waiting.TIMING_OUT)) {
                    timeOut(w, q, cs.stat());
                }
                return;
            }
            java.util.Optional<QueueEntry> next = q.blocker(i);
            if (next.isEmpty()) {
                // A damaged entry (sequence past the limit) with nothing to wait for: it can never hold; its timer ends it.
                log.debug("request {} on {} (token {}) cannot be ordered ({}); it waits for its timer", w.req.requestId(),
                        w.req.name(), w.token, w.node);
                return;
            }
            QueueEntry blocker = next.get();
            log.debug("request {} on {} (token {}) waits for {}", w.req.requestId(), w.req.name(), w.token, blocker.node());
            // The watch is set with getData, not exists: on a node that is already gone, exists would leave a watch for
            // its creation, and a queue node's name never comes back, so that watch would stay for good. NONODE leaves
            // no watch.
            blockers.watch(w.lockPath + "/" + blocker.node(), w).whenComplete((watched, e2) -> {
                if (e2 != null) {
                    fail(w, Zk.translate(e2));
                } else if (!watched) {
                    evaluate(w); // the blocker went before the watch was set
                }
            });
        });
    }

    /**
     * The lock is too large to read ({@link QueueListing}), so the request can be neither granted nor refused by its
     * place. A request this call just made is refused and taken back (the lock has far more than max-entries-per-lock
     * entries). Any other held call (a retry, or one woken by its blocker or a reconnection) looks again later, a
     * second at first, doubling to {@link #RECHECK_MAX}: the lock gives no notice when it shrinks, and its timer still
     * ends the wait.
     */
    private void cannotRead(Waiting w, LockTooLargeException big) {
        if (w.evaluations++ == 0 && w.made) {
            if (w.state.compareAndSet(Waiting.WAITING, Waiting.TIMING_OUT)) {
                remove(w).whenComplete((v, e) -> finishWithError(w, big));
            }
            return;
        }
        long delayMs = Math.min(RECHECK_MAX.toMillis(), 1000L << Math.min(w.rechecks++, 10));
        log.debug("request {} on {} (token {}) waits on a lock too large to read ({} entries); looking again in {} ms",
                w.req.requestId(), w.req.name(), w.token, big.entries(), delayMs);
        w.recheck = clock.schedule(Duration.ofMillis(delayMs), () -> evaluate(w));
        if (w.state.get() != Waiting.WAITING) {
            w.recheck.cancel(); // answered meanwhile (forget ran before the timer was set)
        }
    }

    private void grant(Waiting w, LockQueue q, Stat stat) {
        metrics.grant();
        Long released = releasedAt.remove(w.lockPath);
        if (released != null && w.evaluations > 1) {
            metrics.handoff(clock.read() - released);
        }
        log.debug("granted {} {} to session {} with token {}", w.req.mode(), w.req.name(), w.req.sessionId(), w.token);
        reader.holders(w.lockPath, q).whenComplete((holders, err) -> {
            if (err != null) {
                // The grant stands; the holder list is a courtesy. Answer with ourselves.
                holders = List.of();
            }
            long token = TestFault.active(TestFault.TOKEN_OF_LOCK) ? tokens.bestEffort(stat.getCzxid()) : w.token;
            // The revision is the lock node's pzxid, a zxid at or after the node's creation (the token adds the floor).
            finishOk(w, new AcquireResult(Status.GRANTED, token, null, holders, stat.getPzxid()));
        });
    }

    private void onTimeout(Waiting w) {
        if (!w.state.compareAndSet(Waiting.WAITING, Waiting.TIMING_OUT)) {
            log.debug("wait of request {} on {} ran out after it was answered (state {})", w.req.requestId(), w.req.name(), w.state.get());
            return;
        }
        log.debug("wait of request {} on {} ran out ({} ms)", w.req.requestId(), w.req.name(), w.req.waitMs());
        queues.read(w.lockPath, "the request's place is not known").whenComplete((cs, err) -> {
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    w.state.set(Waiting.WAITING);
                    gone(w);
                } else if (Zk.unwrap(err) instanceof LockTooLargeException big) {
                    // Whether it holds cannot be known. KEEP: it stays queued, and the answer says why there is no
                    // position. CANCEL: it is removed, holding or not (a cancel removes granted requests too; this
                    // call never said GRANTED), and the answer is TIMED_OUT.
                    if (w.req.onTimeout() == OnTimeout.KEEP) {
                        finishWithError(w, big);
                    } else {
                        remove(w).whenComplete((v, e) -> {
                            if (e != null) {
                                finishWithError(w, Zk.translate(e));
                            } else {
                                finishOk(w, new AcquireResult(Status.TIMED_OUT, null, null, List.of(), 0));
                            }
                        });
                    }
                } else {
                    finishWithError(w, Zk.translate(err));
                }
                return;
            }
            LockQueue q = LockQueue.of(cs.children());
            int i = q.indexOf(w.node);
            if (i < 0) {
                w.state.set(Waiting.WAITING);
                gone(w);
            } else if (q.holds(i)) {
                w.state.set(Waiting.DONE);
                grant(w, q, cs.stat());
            } else {
                timeOut(w, q, cs.stat());
            }
        });
    }

    /** In state TIMING_OUT, with the request not holding: cancel it or leave it queued, as asked. */
    private void timeOut(Waiting w, LockQueue q, Stat stat) {
        int position = q.indexOf(w.node);
        if (w.req.onTimeout() == OnTimeout.KEEP) {
            reader.holders(w.lockPath, q).whenComplete((holders, err) -> finishOk(w, 
                    new AcquireResult(Status.QUEUED, null, position, err == null ? holders : List.of(), stat.getPzxid())));
            return;
        }
        remove(w).thenCompose(v -> reader.holders(w.lockPath, q)).whenComplete((holders, err) -> {
            if (err != null && !(Zk.unwrap(err) instanceof WardenException)) {
                finishWithError(w, Zk.translate(err));
            } else if (err != null) {
                finishWithError(w, Zk.unwrap(err));
            } else {
                finishOk(w, new AcquireResult(Status.TIMED_OUT, null, null, holders, stat.getPzxid()));
            }
        });
    }

    /** Deletes the request's node and record together; a node already gone is fine. */
    private CompletableFuture<Void> remove(Waiting w) {
        return ends.end(w.lockPath + "/" + w.node, w.req.sessionId(), w.uuid)
                .thenAccept(deleted -> {
                    if (deleted) {
                        sessions.count(w.req.sessionId(), -1);
                        quotas.ended(w.req.sessionId(), w.uuid);
                    }
                });
    }

    /** Our queue node vanished while we waited: the session ended, or the request was cancelled. */
    private void gone(Waiting w) {
        if (!w.state.compareAndSet(Waiting.WAITING, Waiting.DONE)) {
            return;
        }
        zk.exists(CellPaths.session(w.req.sessionId())).whenComplete((stat, err) -> {
            if (err == null && stat == null) {
                finishWithError(w, WardenException.sessionNotFound(w.req.sessionId()));
            } else {
                finishOk(w, new AcquireResult(Status.TIMED_OUT, null, null, List.of(), 0));
            }
        });
    }

    /**
     * Answers the call, after forgetting it: a caller that sees the answer never sees the call still pending.
     * (CompletableFuture runs dependents last-registered first, so clean-up cannot be a dependent.)
     */
    private void finishOk(Waiting w, AcquireResult result) {
        forget(w);
        w.future.complete(result);
    }

    private void finishWithError(Waiting w, Throwable error) {
        forget(w);
        w.future.completeExceptionally(error);
    }

    private void forget(Waiting w) {
        if (waiting.remove(w.req.sessionId(), w)) {
            metrics.waiterDone();
        }
        blockers.leave(w); // its watch goes with the last call that waits for that node
        Clock.Cancellable t = w.timer;
        if (t != null) {
            t.cancel();
        }
        Clock.Cancellable r = w.recheck;
        if (r != null) {
            r.cancel();
        }
    }

    private void fail(Waiting w, RuntimeException e) {
        if (w.state.compareAndSet(Waiting.WAITING, Waiting.DONE)) {
            finishWithError(w, e);
        }
    }

    // ------------------------------------------------------------------ release and cancel

    /** Releases the hold (or queued request) of {@code sessionId} on {@code name} whose token is {@code token}. */
    public CompletableFuture<Boolean> release(String sessionId, LockName name, long token) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String lockPath = CellPaths.lock(name);
        return ends.release(sessionId, lockPath, token).thenApply(ended -> {
            metrics.release(ended != null);
            if (ended == null) {
                log.debug("release of {} by session {} with token {}: no such hold (stale or foreign token)", name, sessionId, token);
                return false;
            }
            ended(sessionId, lockPath, ended.id());
            log.debug("released {} token {} of session {}", name, token, sessionId);
            return true;
        });
    }

    /** Removes the request {@code requestId} of the session on {@code name}, whether queued or granted. */
    public CompletableFuture<Boolean> cancel(String sessionId, LockName name, String requestId) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String uuid = CellPaths.requestUuid(sessionId, requestId);
        String lockPath = CellPaths.lock(name);
        return ends.cancel(sessionId, lockPath, uuid).thenApply(deleted -> {
            if (deleted) {
                ended(sessionId, lockPath, uuid);
                log.debug("cancelled request {} of session {} on {}", requestId, sessionId, name);
            }
            return deleted;
        });
    }

    /** A release or cancel ended a request: count it, note the time for the handoff metric, answer its held calls. */
    private void ended(String sessionId, String lockPath, String uuid) {
        releasedAt.put(lockPath, clock.read());
        sessions.count(sessionId, -1);
        quotas.ended(sessionId, uuid);
        notifyRemoved(sessionId, uuid);
    }

    /** Answers held calls on this gateway for a request that another call removed. */
    private void notifyRemoved(String sessionId, String uuid) {
        for (Waiting w : waiting.of(sessionId)) {
            if (w.uuid.equals(uuid)) {
                gone(w);
            }
        }
    }

    /** The session ended (closed or expired here): answer its held calls with SESSION_NOT_FOUND. */
    public void sessionEnded(String sessionId) {
        sessions.forget(sessionId);
        quotas.sessionEnded(sessionId);
        for (Waiting w : waiting.of(sessionId)) {
            fail(w, WardenException.sessionNotFound(sessionId));
        }
    }

    // ------------------------------------------------------------------ drain

    /**
     * The cell lost committed state (a rolled-back ensemble): answers every held call with {@code refusal}, and forgets
     * what this gateway remembered of queue nodes (in a cell that went back, a node's path may come again with another
     * czxid). Requests stay as the cell has them.
     */
    public void cellRolledBack(WardenException refusal) {
        forEachWaiting(w -> fail(w, refusal));
        nodes.clear();
        ends.forgetHints();
    }

    /** Stops taking acquires; answers every held call with UNAVAILABLE. Queued requests stay queued in ZooKeeper. */
    public void drain() {
        draining = true;
        forEachWaiting(w -> fail(w, drainingError()));
    }

    private static WardenException drainingError() {
        return WardenException.unavailable("this gateway is shutting down; repeat the call with the same request_id "
                + "on another gateway to keep your place in the queue", null);
    }

    private void forEachWaiting(java.util.function.Consumer<Waiting> action) {
        for (Waiting w : waiting.all()) {
            action.accept(w);
        }
    }

    /** Every listing of a lock's queue (for the listings and the watch mirror too). */
    public QueueListing queues() {
        return queues;
    }

    /** Linearizable reads of locks, sharing this engine's cache of queue nodes. */
    public LockReader reader() {
        return reader;
    }

    public int pendingCount() {
        return waiting.size();
    }

    /** A concurrent map that keeps at most {@code max} entries, evicting the least recently used. */
    static <K, V> Map<K, V> bounded(int max) {
        return com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(max).<K, V>build().asMap();
    }

    private static String lastSegment(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** One acquire call in progress on this gateway. */
    private final class Waiting {
        static final int WAITING = 0;
        static final int TIMING_OUT = 1;
        static final int DONE = 2;

        final AcquireRequest req;
        final String lockPath;
        final String uuid;
        final String node;
        final long token;
        final long startNanos;
        /** Whether this call's own multi made the request (false: a retry that found it made before). */
        final boolean made;
        final CompletableFuture<AcquireResult> future = new CompletableFuture<>();
        final AtomicInteger state = new AtomicInteger(WAITING);
        /** Set once in start(), before any completion can run. */
        volatile Clock.Cancellable timer;
        /** Touched only by the evaluation chain (one at a time per call). */
        volatile int evaluations;
        /** Set by the first evaluation when the request is refused at admission (a limit of the lock). */
        volatile WardenException refusal;
        /** Looks again at a lock too large to read: how many so far, and the timer of the next. */
        volatile int rechecks;
        volatile Clock.Cancellable recheck;

        Waiting(AcquireRequest req, String lockPath, String uuid, String node, long token, long startNanos, boolean made) {
            this.req = req;
            this.lockPath = lockPath;
            this.uuid = uuid;
            this.node = node;
            this.token = token;
            this.startNanos = startNanos;
            this.made = made;
        }
    }

}
