package io.warden.service.lock;

import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.WardenException;
import io.warden.service.cell.Tokens;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueListing;
import io.warden.service.queue.QueueNodeData;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.RequestRecord;
import io.warden.service.zk.SessionListing;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

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
 * <p>The call is then held ({@link HeldCalls}) until it is granted, refused at admission, answered as a try-lock, or its
 * {@code wait_ms} runs out; a blocked request watches the one node it waits for, and waiting costs memory, not threads.
 * Admission: a lock has at most {@code max-entries-per-lock} entries; when the watch mirror already knows the lock is
 * full, the acquire looks at the node's child count first and writes nothing (else its first look refuses it). A retry
 * of a queued request on a lock too large to list ({@link QueueListing}) is answered 429.
 *
 * <p>This class is the acquire path, release, cancel and the sessions' ends; each other mechanism has its own class:
 * who holds ({@link LockQueue}), held calls ({@link HeldCalls}, {@link HeldCall}) and their watches
 * ({@link BlockerWatches}), ending requests ({@link RequestEnds}), tombstones and their pruning ({@link Tombstones}),
 * per-session hints ({@link SessionHints}), holds and waits per principal ({@link RequestQuotas}), reads
 * ({@link LockReader}, {@link NodeInfoCache}, every listing of a queue through {@link QueueListing}).
 *
 * <p>Concurrency: called from any thread; continuations run on Curator's event thread and never block. Its maps are
 * bounded concurrent ones ({@link Hints}); a held call's moves are {@link HeldCall}'s.
 */
public final class LockEngine implements io.warden.service.session.SessionListener {
    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);
    private static final int MAX_CREATE_ATTEMPTS = 8;
    /* Bounds of the engine's own hints (see Hints): when a lock was last released here, and locks near the limit. */
    static final int MAX_NEAR_LIMIT = 10_000;

    private final Zk zk;
    private final GrantRules rules;
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
    /** Whether the cell serves a namespace: checked in every transaction that makes a queue entry. */
    private final io.warden.service.cell.Fence fence;
    /** Holds plus queued requests per principal (in open mode per opener address) made through this gateway. */
    private final RequestQuotas quotas;
    private final RequestEnds ends;
    private final LockReader reader;
    /** Held acquire calls on this gateway, by session id. */
    /** Lock paths whose sequence was found near the limit: acquires read the node's stat before creating. */
    private final Set<String> nearLimit = java.util.Collections.newSetFromMap(Hints.bounded(MAX_NEAR_LIMIT));
    /** The acquire calls held here until answered. */
    private final HeldCalls held;
    /** Removes deadlocks' victims. */
    private final DeadlockBreaker breaker;
    /** Try-locks refused from a read, without a write. */
    private final TryRefusals refusals;
    /** Multi-lock requests: their acquires and held calls. */
    private final MultiLocks multis;

    /**
     * @param queues                  every listing of a lock's queue goes through it
     * @param maxEntriesPerLock       holders plus waiters one lock may have (foreign entries included)
     * @param maxRequestsPerPrincipal holds plus queued requests one principal (in open mode one opener address) may have
     *                                made through this gateway ({@link RequestQuotas})
     */
    public LockEngine(Zk zk, Clock clock, WardenMetrics metrics, QueueListing queues, int maxRequestsPerSession,
                      int maxWaitersPerLock, int maxEntriesPerLock, int maxRequestsPerPrincipal) {
        this(zk, clock, metrics, queues, maxRequestsPerSession, maxWaitersPerLock, maxEntriesPerLock,
                maxRequestsPerPrincipal, Tokens.CZXID, io.warden.service.cell.Fence.NONE, GrantRules.CONTRACT);
    }

    /**
     * As above, with {@code tokens}: a queue node's token from its czxid (plus the cell's token floor); {@code fence}: the
     * check every transaction that makes a queue entry carries, that the cell still serves the entry's namespace
     * ({@link io.warden.service.cell.CellRouting}); and the rules it grants by ({@link GrantRules#CONTRACT} but in the
     * proof suite's deliberately broken gateways).
     */
    public LockEngine(Zk zk, Clock clock, WardenMetrics metrics, QueueListing queues, int maxRequestsPerSession,
                      int maxWaitersPerLock, int maxEntriesPerLock, int maxRequestsPerPrincipal, Tokens tokens,
                      io.warden.service.cell.Fence fence, GrantRules rules) {
        this.zk = zk;
        this.fence = fence;
        this.rules = rules;
        this.clock = clock;
        this.metrics = metrics;
        this.tokens = tokens;
        this.queues = queues;
        this.maxRequestsPerSession = maxRequestsPerSession;
        this.maxWaitersPerLock = maxWaitersPerLock;
        this.maxEntriesPerLock = maxEntriesPerLock;
        this.nodes = new NodeInfoCache(zk, tokens);
        SessionListing sessionListing = new SessionListing(zk, queues.limit());
        this.tombstones = new Tombstones(zk, sessionListing);
        this.sessions = new SessionHints(zk, sessionListing, maxRequestsPerSession);
        this.quotas = new RequestQuotas(zk, sessionListing, clock, maxRequestsPerPrincipal);
        this.ends = new RequestEnds(zk, nodes, tombstones, queues, sessionListing, rules);
        this.reader = new LockReader(zk, nodes, queues);
        this.held = new HeldCalls(zk, clock, metrics, rules, tokens, queues, reader, ends, sessions, quotas,
                maxEntriesPerLock, maxWaitersPerLock);
        this.refusals = new TryRefusals(zk, clock, queues, reader, rules);
        this.multis = new MultiLocks(zk, clock, metrics, rules, tokens, fence, queues, reader, ends, nodes, sessions, quotas,
                refusals, maxRequestsPerSession, maxEntriesPerLock, maxWaitersPerLock);
        this.breaker = new DeadlockBreaker(zk, held, multis, tombstones);
    }

    /**
     * A multi-lock acquire (guarantee 11 of docs/guarantees.md): every entry made in one transaction, GRANTED once it
     * holds every name ({@link MultiLocks}).
     */
    public CompletableFuture<io.warden.service.api.MultiAcquireResult> acquireAll(io.warden.service.api.MultiAcquireRequest req) {
        return multis.acquire(req);
    }

    /** Attempts of a release by request id that keeps finding the request made between its reads (never in practice). */
    private static final int RELEASE_REQUEST_ATTEMPTS = 3;

    /**
     * Ends the request {@code requestId} of the session as a whole, whatever it is: releases what it holds and cancels
     * what it waits for, in one transaction (a multi-lock request's every entry). False when the request had already
     * ended; a request id the session never used is remembered as ended (a tombstone, as a cancel leaves), so an acquire
     * that this call overtook fails when it arrives.
     */
    public CompletableFuture<Boolean> releaseRequest(String sessionId, String requestId) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return releaseRequest(sessionId, requestId, 1);
    }

    private CompletableFuture<Boolean> releaseRequest(String sessionId, String requestId, int attempt) {
        String uuid = CellPaths.requestUuid(sessionId, requestId);
        String record = CellPaths.sessionRequest(sessionId, uuid);
        // Synced: the request may have been made through another gateway a moment ago.
        return zk.sync(record).thenCompose(v -> zk.data(record)).handle((ds, err) -> {
            if (err != null && Zk.code(err) == Code.NONODE) {
                return ends.tombstone(sessionId, uuid).thenCompose(made -> made || attempt >= RELEASE_REQUEST_ATTEMPTS
                        ? CompletableFuture.completedFuture(false) : releaseRequest(sessionId, requestId, attempt + 1));
            }
            if (err != null) {
                throw Zk.translate(err);
            }
            RequestRecord rec = Json.readOrNull(ds.data(), RequestRecord.class);
            if (rec == null || rec.done()) {
                return CompletableFuture.completedFuture(false);
            }
            if (!rec.multiLock()) {
                return cancel(sessionId, LockName.parse(rec.name()), requestId);
            }
            List<String> lockPaths = rec.lockNames().stream().map(n -> CellPaths.lock(LockName.parse(n))).toList();
            return ends.endRequest(sessionId, uuid, lockPaths).thenApply(endedNow -> {
                if (endedNow) {
                    lockPaths.forEach(held::released);
                    sessions.count(sessionId, -1);
                    quotas.ended(sessionId, uuid);
                    multis.removed(sessionId, uuid);
                    log.debug("released multi-lock request {} of session {} on {}", requestId, sessionId, rec.lockNames());
                }
                return endedNow;
            });
        }).thenCompose(f -> f);
    }

    // ------------------------------------------------------------------ acquire

    public CompletableFuture<AcquireResult> acquire(AcquireRequest req) {
        long start = clock.read();
        CompletableFuture<AcquireResult> result;
        try {
            if (held.draining()) {
                throw HeldCalls.drainingError();
            }
            zk.failFast();
            result = sessions.prepare(req.sessionId()).thenCompose(p -> tryOrMake(req, p, start));
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.whenComplete((r, err) -> {
            if (r != null && r.status() == AcquireResult.Status.TIMED_OUT && req.isTry()) {
                refusals.refused(CellPaths.lock(req.name()));
            }
            metrics.acquire(err != null ? "error" : r.status().name().toLowerCase(), clock.read() - start);
        });
    }

    /**
     * A try-lock on a lock lately seen busy is first decided from a linearizable read ({@link TryRefusals}): refused,
     * it writes nothing, or, when its caller gave the request id, only the tombstone a repeat of the call must find.
     * Every other acquire, and a try the read does not refuse, makes its request.
     */
    private CompletableFuture<AcquireResult> tryOrMake(AcquireRequest req, SessionHints.Prepared p, long start) {
        String lockPath = CellPaths.lock(req.name());
        if (!req.isTry() || !refusals.readFirst(lockPath)) {
            return create(req, p, start, 1).thenCompose(held::start);
        }
        return refusals.refusal(lockPath, req.mode(), req.permits()).thenCompose(refusal -> {
            if (refusal.isEmpty()) {
                return create(req, p, start, 1).thenCompose(held::start);
            }
            if (!req.requestIdGiven()) {
                return CompletableFuture.completedFuture(refusal.get());
            }
            return ends.tombstone(req.sessionId(), CellPaths.requestUuid(req.sessionId(), req.requestId()))
                    .thenCompose(made -> made ? CompletableFuture.completedFuture(refusal.get())
                            : create(req, p, start, 1).thenCompose(held::start));
        });
    }

    /**
     * The TIMED_OUT answer a try-lock of {@code mode} on {@code name} would get now, from a linearizable read and
     * without a write (a conflicting holder, or a request queued ahead); empty when it may be granted.
     */
    public CompletableFuture<java.util.Optional<AcquireResult>> tryRefusal(LockName name, io.warden.service.api.Mode mode) {
        String lockPath = CellPaths.lock(name);
        return refusals.refusal(lockPath, mode, 0).whenComplete((refusal, err) -> {
            if (refusal != null && refusal.isPresent()) {
                refusals.refused(lockPath);
            }
        });
    }

    /**
     * A session opened here: its client id and owner are known, and it has no requests yet. {@code quotaOwner}: whose
     * request quota its requests count against ({@link io.warden.service.zk.SessionRecord#quotaOwner}).
     */
    @Override
    public void sessionOpened(String sessionId, String clientId, String principal, String quotaOwner) {
        sessions.opened(sessionId, clientId, principal, quotaOwner);
    }

    /** Creates the request's record and queue node in one multi; on a retry finds the existing ones. */
    private CompletableFuture<HeldCall> create(AcquireRequest req, SessionHints.Prepared p, long start, int attempt) {
        String uuid = CellPaths.requestUuid(req.sessionId(), req.requestId());
        String lockPath = CellPaths.lock(req.name());
        String requestPath = CellPaths.sessionRequest(req.sessionId(), uuid);
        byte[] requestData = Json.write(new RequestRecord(req.name().toString(), req.mode(), req.requestId()));
        byte[] nodeData = Json.write(new QueueNodeData(req.sessionId(), p.clientId(), req.requestId(), req.mode(), p.principal())
                .withOnDeadlock(req.onDeadlock()));
        List<CuratorOp> ops;
        try {
            List<CuratorOp> list = new java.util.ArrayList<>(5);
            list.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(requestPath, requestData));
            list.add(zk.ops().setData().withVersion(0).forPath(requestPath, requestData));
            list.add(zk.ops().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(lockPath + "/" + QueueEntry.prefix(uuid, req.mode(), req.permits()), nodeData));
            if (p.clientId() != null) {
                // Made and removed in this transaction: its notification tells the watch mirrors the client id without
                // a read (CellPaths.clientIdNote). Last, so the results above keep their places.
                String note = requestPath + "/" + CellPaths.clientIdNote(p.clientId());
                list.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(note, new byte[0]));
                list.add(zk.ops().delete().forPath(note));
            }
            if (req.onDeadlock() == io.warden.service.api.OnDeadlock.FAIL) {
                // As the client id: the mirrors learn that this request may be a deadlock's victim without a read.
                String note = requestPath + "/" + CellPaths.DEADLOCK_FAIL_NOTE;
                list.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(note, new byte[0]));
                list.add(zk.ops().delete().forPath(note));
            }
            // Last: the cell still serves the namespace as this gateway read its routes (a move).
            org.apache.curator.framework.api.transaction.CuratorOp check = fence.checkFor(req.name().namespace());
            if (check != null) {
                list.add(check);
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
                        throw HeldCalls.full(req.name(), stat.getNumChildren(), maxEntriesPerLock);
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

    /** The per-principal quota, then the acquire's {@code multi}. */
    private CompletableFuture<HeldCall> reserveAndWrite(AcquireRequest req, SessionHints.Prepared p, List<CuratorOp> ops,
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
    private CompletableFuture<HeldCall> write(AcquireRequest req, SessionHints.Prepared p, List<CuratorOp> ops, long start,
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
                return CompletableFuture.completedFuture(new HeldCall(req, lockPath, uuid, node, token, start, true));
            }
            quotas.unreserve(p.owner()); // nothing was made, or nothing this call can know of (see below)
            Throwable cause = Zk.unwrap(err);
            if (cause instanceof Zk.MultiFailure mf) {
                int failed = mf.failedIndex();
                if (failed == ops.size() - 1 && isFenceCheck(ops.get(failed))) {
                    // The cell's routes changed since this gateway read them: it may no longer serve the namespace.
                    throw new io.warden.service.api.NotServedException(null, req.name().namespace(), true);
                }
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
            if (Zk.MultiFailure.maybeApplied(err)) {
                // As in MultiLocks#write: the request may exist uncounted; the session's count is read again.
                sessions.forget(req.sessionId());
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /** Whether {@code op} is the fence's check of the cell's routes ({@link io.warden.service.cell.Fence}). */
    static boolean isFenceCheck(org.apache.curator.framework.api.transaction.CuratorOp op) {
        return op.get().getType() == org.apache.zookeeper.ZooDefs.OpCode.check
                && op.get().getPath().endsWith(CellPaths.ROUTING);
    }

    /**
     * The node just made has a sequence too close to the limit (see {@link LockQueue}): takes the node and its request
     * record back, as if the request had never been made, and refuses it. Later acquires on this lock look first.
     */
    private CompletableFuture<HeldCall> refuse(AcquireRequest req, String nodePath, String requestPath, long sequence) {
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
    private CompletableFuture<HeldCall> existingRecord(AcquireRequest req, String lockPath, String uuid, Zk.DataAndStat ds, long start) {
        RequestRecord rec = Json.readOrNull(ds.data(), RequestRecord.class);
        if (rec != null && rec.done() && rec.deadlock() != null) {
            // Removed as a deadlock's victim: every repeat gets the same answer (guarantee 7 of docs/guarantees.md).
            return CompletableFuture.failedFuture(new io.warden.service.api.DeadlockException(rec.deadlock()));
        }
        if (rec != null && rec.done()) {
            return CompletableFuture.failedFuture(WardenException.invalid("request_id", "request " + req.requestId()
                    + " of this session has already ended (released, cancelled or timed out); use a new request_id"));
        }
        return existing(req, lockPath, uuid, tokens.of(ds.stat().getCzxid()), start);
    }

    /** The request was made before (same session and request id): find its queue node. */
    private CompletableFuture<HeldCall> existing(AcquireRequest req, String lockPath, String uuid, long token, long start) {
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
            if (entry.get().mode() != req.mode() || entry.get().permits() != req.permits()) {
                throw WardenException.invalid("request_id", "request " + req.requestId() + " was made with mode "
                        + entry.get().mode() + (entry.get().permits() > 0 ? " and " + entry.get().permits() + " permits" : "")
                        + "; a retry must repeat it");
            }
            ends.remember(req.sessionId(), lockPath, token, entry.get().node());
            return new HeldCall(req, lockPath, uuid, entry.get().node(), token, start, false);
        });
    }

    // ------------------------------------------------------------------ deadlocks

    /** Breaks a deadlock the watch mirror found: true when this call removed the victim ({@link DeadlockBreaker}). */
    public CompletableFuture<Boolean> breakDeadlock(io.warden.service.api.DeadlockAction action) {
        return rules.breakDeadlock(action, breaker::breakCycle);
    }

    /** Whether this gateway holds a call of the request {@code uuid} of {@code sessionId}. */
    public boolean holdsCall(String sessionId, String uuid) {
        return held.holds(sessionId, uuid) || multis.holds(sessionId, uuid);
    }

    /** A queue node of {@code sessionId} on {@code name} with {@code token} was removed (seen in the watch mirror). */
    public void removedElsewhere(String sessionId, LockName name, long token) {
        String lockPath = CellPaths.lock(name);
        held.removedElsewhere(sessionId, lockPath, token);
        multis.removedElsewhere(sessionId, lockPath, token); // one of a multi-lock request's entries
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
            if (ended.requestEnded()) {
                ended(sessionId, lockPath, ended.entry().id());
            } else {
                held.released(lockPath); // one name of a multi-lock request: the request itself stays (and counts)
            }
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
        held.released(lockPath);
        sessions.count(sessionId, -1);
        quotas.ended(sessionId, uuid);
        held.removed(sessionId, uuid);
        multis.removed(sessionId, uuid);
    }

    /** The session ended (closed or expired here): answer its held calls with SESSION_NOT_FOUND. */
    @Override
    public void sessionEnded(String sessionId) {
        sessions.forget(sessionId);
        tombstones.forget(sessionId);
        quotas.sessionEnded(sessionId);
        held.failSession(sessionId, WardenException.sessionNotFound(sessionId));
        multis.failSession(sessionId, WardenException.sessionNotFound(sessionId));
    }

    // ------------------------------------------------------------------ drain

    /**
     * The cell lost committed state (a rolled-back ensemble): answers every held call with {@code refusal}, and forgets
     * what this gateway remembered of queue nodes (in a cell that went back, a node's path may come again with another
     * czxid). Requests stay as the cell has them.
     */
    public void cellRolledBack(WardenException refusal) {
        held.failAll(refusal);
        multis.failAll(refusal);
        nodes.clear();
        ends.forgetHints();
    }

    /** Stops taking acquires; answers every held call with UNAVAILABLE. Queued requests stay queued in ZooKeeper. */
    public void drain() {
        held.drain();
        multis.drain();
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
        return held.size() + multis.size();
    }

    private static String lastSegment(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }


}
