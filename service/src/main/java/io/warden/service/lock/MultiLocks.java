package io.warden.service.lock;

import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.DeadlockException;
import io.warden.service.api.Holder;
import io.warden.service.api.LockName;
import io.warden.service.api.LockTooLargeException;
import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.MultiAcquireResult;
import io.warden.service.api.OnDeadlock;
import io.warden.service.api.OnTimeout;
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
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Multi-lock requests (guarantee 11 of docs/guarantees.md, docs/decisions/0012): one request record and one queue entry
 * per name, all made in one ZooKeeper {@code multi}, so that two such requests are in the same order on every name they
 * share and never wait for each other in a cycle. Each entry holds by {@link LockQueue}'s rules alone, as any entry;
 * the request is GRANTED once every entry holds (an entry that holds keeps holding until it is removed).
 *
 * <p>A held call ({@link MultiCall}) reads every name's queue (the reads are sent together), and while some entry does
 * not hold it watches the blocker of the first such name in the request's order — one watch at a time, as a call on one
 * name; when that goes, it reads again. Its end (a wait run out with {@code on_timeout: CANCEL}, a refusal at
 * admission, a name of the other kind) removes every entry and tombstones the record in one {@code multi}, on condition
 * that what keeps one not-yet-holding entry out is still there (RequestEnds#endWhileBlocked), so no call for the same
 * request (a retry at another gateway) was told GRANTED.
 *
 * <p>Limits: the request counts once against {@code max-requests-per-session} and {@code max-requests-per-principal};
 * each name's entry counts against that name's {@code max-entries-per-lock} and {@code max-waiters-per-lock}, checked at
 * the call's first look (a request refused there is taken back whole). Unlike a one-name acquire, a multi-lock acquire
 * does not look at a lock's size before it writes: a name that is full costs a write and its undo.
 *
 * <p>Concurrency: called from any thread; continuations run on Curator's event thread and never block. Calls are
 * registered in {@link #waiting} (by session) from start until answered, which bounds it by the calls held here (each
 * ends by its wait_ms timer at the latest); {@link #blockers} keeps one watch per blocker node. A call moves as
 * {@link MultiCall} says. No thread waits.
 */
final class MultiLocks {
    private static final Logger log = LoggerFactory.getLogger(MultiLocks.class);
    private static final int MAX_CREATE_ATTEMPTS = 8;
    private static final String WHAT_WAITS = "new requests on it are refused, and requests queued on it wait";

    private final Zk zk;
    private final Clock clock;
    private final WardenMetrics metrics;
    private final GrantRules rules;
    private final Tokens tokens;
    /** Whether the cell serves a namespace: checked in every transaction that makes queue entries. */
    private final io.warden.service.cell.Fence fence;
    private final QueueListing queues;
    private final LockReader reader;
    private final RequestEnds ends;
    private final NodeInfoCache nodeInfos;
    private final SessionHints sessions;
    private final RequestQuotas quotas;
    /** Try-locks refused from a read: a multi-lock try on a name seen busy lately reads before it writes. */
    private final TryRefusals refusals;
    private final int maxRequestsPerSession;
    private final int maxEntriesPerLock;
    private final int maxWaitersPerLock;
    private final WaitingCalls<MultiCall> waiting = new WaitingCalls<>();
    private final BlockerWatches<MultiCall> blockers;
    private volatile boolean draining;

    MultiLocks(Zk zk, Clock clock, WardenMetrics metrics, GrantRules rules, Tokens tokens,
               io.warden.service.cell.Fence fence, QueueListing queues, LockReader reader, RequestEnds ends,
               NodeInfoCache nodeInfos, SessionHints sessions, RequestQuotas quotas, TryRefusals refusals,
               int maxRequestsPerSession, int maxEntriesPerLock, int maxWaitersPerLock) {
        this.refusals = refusals;
        this.fence = fence;
        this.zk = zk;
        this.clock = clock;
        this.metrics = metrics;
        this.rules = rules;
        this.tokens = tokens;
        this.queues = queues;
        this.reader = reader;
        this.ends = ends;
        this.nodeInfos = nodeInfos;
        this.sessions = sessions;
        this.quotas = quotas;
        this.maxRequestsPerSession = maxRequestsPerSession;
        this.maxEntriesPerLock = maxEntriesPerLock;
        this.maxWaitersPerLock = maxWaitersPerLock;
        this.blockers = new BlockerWatches<>(zk, clock, metrics, MultiCall::waiting,
                c -> rules.awaitedEntryGone(() -> evaluate(c)), calls -> calls.forEach(this::evaluate));
        zk.client().getConnectionStateListenable().addListener((c, state) -> {
            if (state == org.apache.curator.framework.state.ConnectionState.RECONNECTED) {
                waiting.all().forEach(this::evaluate); // watches do not survive a ZooKeeper session expiry
            }
        });
    }

    // ------------------------------------------------------------------ acquire

    CompletableFuture<MultiAcquireResult> acquire(MultiAcquireRequest req) {
        long start = clock.read();
        try {
            if (draining) {
                throw HeldCalls.drainingError();
            }
            zk.failFast();
            CompletableFuture<MultiAcquireResult> result = sessions.prepare(req.sessionId())
                    .thenCompose(p -> tryOrMake(req, p, start));
            return req.waitMs() != 0 ? result : result.whenComplete((r, err) -> {
                if (r != null && r.status() == Status.TIMED_OUT) {
                    // The names another session held are busy: the next tries on them read before they write. (A
                    // name the request itself held while it waited for another is not: reading it first would cost a
                    // sync and a read for nothing.)
                    r.holders().forEach((name, hs) -> {
                        if (hs.stream().anyMatch(h -> !req.sessionId().equals(h.sessionId()))) {
                            refusals.refused(CellPaths.lock(LockName.parse(name)));
                        }
                    });
                }
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A try (wait_ms 0) with a name seen busy lately is first decided from a linearizable read of those names, as a
     * one-name try is ({@link TryRefusals}): when one of them could not be granted now, the try is answered TIMED_OUT
     * with that name's holders and writes nothing (or, with a request id given, only the tombstone a repeat must find).
     * Every other acquire, and a try the reads do not refuse, makes its request.
     */
    private CompletableFuture<MultiAcquireResult> tryOrMake(MultiAcquireRequest req, SessionHints.Prepared p, long start) {
        List<LockName> busy = req.waitMs() != 0 ? List.of()
                : req.names().stream().filter(n -> refusals.readFirst(CellPaths.lock(n))).toList();
        if (busy.isEmpty()) {
            return create(req, p, start, 1).thenCompose(this::start);
        }
        zk.failFast();
        // One sync before the busy names' reads (each name's own would wait for a second: see refusalSynced). The reads
        // are made together once it is answered, so the first goes to ZooKeeper alone and the others in one batch.
        return zk.sharedSync().thenCompose(synced -> refusedOrMade(req, p, start, busy));
    }

    /** {@link #tryOrMake}, synced: the busy names' reads decide. */
    private CompletableFuture<MultiAcquireResult> refusedOrMade(MultiAcquireRequest req, SessionHints.Prepared p,
                                                                long start, List<LockName> busy) {
        List<CompletableFuture<Optional<AcquireResult>>> reads = busy.stream()
                .map(n -> refusals.refusalSynced(CellPaths.lock(n), req.mode(), 0)).toList();
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            Map<String, List<Holder>> holders = new java.util.LinkedHashMap<>();
            long revision = 0;
            for (int k = 0; k < busy.size(); k++) {
                Optional<AcquireResult> refusal = reads.get(k).join();
                if (refusal.isPresent()) {
                    holders.put(busy.get(k).toString(), refusal.get().holders());
                    revision = Math.max(revision, refusal.get().revision());
                }
            }
            if (holders.isEmpty()) {
                return create(req, p, start, 1).thenCompose(this::start);
            }
            MultiAcquireResult refused = new MultiAcquireResult(Status.TIMED_OUT, null, null, holders, revision);
            if (!req.requestIdGiven()) {
                return CompletableFuture.completedFuture(refused);
            }
            return ends.tombstone(req.sessionId(), CellPaths.requestUuid(req.sessionId(), req.requestId()))
                    .thenCompose(made -> made ? CompletableFuture.completedFuture(refused)
                            : create(req, p, start, 1).thenCompose(this::start));
        });
    }

    private static List<String> lockPaths(MultiAcquireRequest req) {
        return req.names().stream().map(CellPaths::lock).toList();
    }

    /** Makes the request's record and entries in one multi; on a retry finds the existing ones. */
    private CompletableFuture<MultiCall> create(MultiAcquireRequest req, SessionHints.Prepared p, long start, int attempt) {
        String uuid = CellPaths.requestUuid(req.sessionId(), req.requestId());
        String requestPath = CellPaths.sessionRequest(req.sessionId(), uuid);
        if (p.requests() >= maxRequestsPerSession && !p.exact()) {
            return sessions.exact(req.sessionId(), p.clientId(), p.principal(), p.owner())
                    .thenCompose(exact -> create(req, exact, start, attempt));
        }
        if (p.requests() >= maxRequestsPerSession) {
            return existingOr(req, uuid, start, () -> WardenException.exhausted("session " + req.sessionId() + " has "
                    + p.requests() + " holds and queued requests, the most allowed per session (max-requests-per-session;"
                    + " a multi-lock request counts once)"));
        }
        String owner = p.owner();
        if (quotas.reserve(owner) >= 0) {
            return quotas.recount(owner).thenCompose(v -> {
                int has = quotas.reserve(owner);
                if (has < 0) {
                    return write(req, p, start, attempt);
                }
                return existingOr(req, uuid, start, () -> WardenException.exhausted(owner + " already has " + has
                        + " holds and queued requests made through this gateway, the most allowed "
                        + "(max-requests-per-principal)"));
            });
        }
        return write(req, p, start, attempt);
    }

    /** At a limit: only a retry of an existing request goes on; anything else is refused and nothing is written. */
    private CompletableFuture<MultiCall> existingOr(MultiAcquireRequest req, String uuid, long start,
                                                    java.util.function.Supplier<WardenException> refusal) {
        return zk.data(CellPaths.sessionRequest(req.sessionId(), uuid)).handle((ds, err) -> {
            if (err != null && Zk.code(err) == Code.NONODE) {
                throw refusal.get();
            }
            if (err != null) {
                throw Zk.translate(err);
            }
            return ds;
        }).thenCompose(ds -> existing(req, uuid, ds, start));
    }

    /**
     * The acquire's {@code multi} (a place reserved in {@link #quotas}): create the record, set it (its stat carries the
     * transaction's zxid, every entry's czxid), one sequential create per name, and the client id note.
     */
    private CompletableFuture<MultiCall> write(MultiAcquireRequest req, SessionHints.Prepared p, long start, int attempt) {
        String uuid = CellPaths.requestUuid(req.sessionId(), req.requestId());
        String requestPath = CellPaths.sessionRequest(req.sessionId(), uuid);
        List<String> lockPaths = lockPaths(req);
        List<String> names = req.names().stream().map(LockName::toString).toList();
        byte[] requestData = Json.write(RequestRecord.multi(names, req.mode(), req.requestId()));
        QueueNodeData nodeData = QueueNodeData.ofMulti(req.sessionId(), p.clientId(), req.requestId(), req.mode(), p.principal())
                .withOnDeadlock(req.onDeadlock());
        byte[] nodeBytes = Json.write(nodeData);
        CompletableFuture<List<CuratorTransactionResult>> sent;
        List<CuratorOp> sentOps = new ArrayList<>(lockPaths.size() + 5);
        try {
            List<CuratorOp> ops = sentOps;
            ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(requestPath, requestData));
            ops.add(zk.ops().setData().withVersion(0).forPath(requestPath, requestData));
            for (String lockPath : lockPaths) {
                ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                        .forPath(lockPath + "/" + QueueEntry.prefix(uuid, req.mode()), nodeBytes));
            }
            if (p.clientId() != null) {
                String note = requestPath + "/" + CellPaths.clientIdNote(p.clientId());
                ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(note, new byte[0]));
                ops.add(zk.ops().delete().forPath(note));
            }
            if (req.onDeadlock() == OnDeadlock.FAIL) {
                // As for one name: the mirrors learn that this request may be a deadlock's victim without a read.
                String note = requestPath + "/" + CellPaths.DEADLOCK_FAIL_NOTE;
                ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(note, new byte[0]));
                ops.add(zk.ops().delete().forPath(note));
            }
            // Last: the cell still serves the names' namespaces as this gateway read its routes (a move).
            for (String namespace : req.names().stream().map(LockName::namespace).distinct().toList()) {
                CuratorOp check = fence.checkFor(namespace);
                if (check != null) {
                    ops.add(check);
                }
            }
            sent = rules.writeMulti(ops, 2, lockPaths.size(), zk::multi);
        } catch (Exception e) {
            quotas.unreserve(p.owner());
            return CompletableFuture.failedFuture(e);
        }
        return sent.handle((results, err) -> {
            if (err == null) {
                long czxid = results.get(1).getResultStat().getMzxid();
                List<String> nodes = new ArrayList<>(lockPaths.size());
                long worst = -1;
                for (int k = 0; k < lockPaths.size(); k++) {
                    String path = results.get(2 + k).getResultPath();
                    String node = path.substring(path.lastIndexOf('/') + 1);
                    nodes.add(node);
                    long sequence = QueueEntry.parse(node).map(QueueEntry::sequence).orElse(-1L);
                    if (!LockQueue.admits(sequence)) {
                        worst = Math.max(worst, k);
                    }
                }
                quotas.commit(p.owner(), req.sessionId(), uuid);
                sessions.count(req.sessionId(), 1);
                // The request is made and counted; when its tokens cannot be said now (the floor is being read again),
                // the call fails and a resend with the same request_id finds the request.
                long token = tokens.of(czxid);
                MultiCall call = new MultiCall(req, uuid, lockPaths, nodes, token, start, true);
                if (worst >= 0) {
                    // A name's sequence numbers are near their end (see LockQueue): taken back whole, and refused.
                    call.refusal = WardenException.exhausted("lock " + req.names().get((int) worst)
                            + " has used up its queue sequence numbers; it takes new requests again once it has drained");
                }
                for (int k = 0; k < lockPaths.size(); k++) {
                    ends.remember(req.sessionId(), lockPaths.get(k), token, nodes.get(k));
                    nodeInfos.put(new NodeInfo(lockPaths.get(k) + "/" + nodes.get(k), token, req.mode(), nodeData,
                            results.get(1).getResultStat().getMtime()));
                }
                return CompletableFuture.completedFuture(call);
            }
            quotas.unreserve(p.owner());
            if (Zk.unwrap(err) instanceof Zk.MultiFailure mf) {
                int failed = mf.failedIndex();
                if (failed >= 0 && failed < sentOps.size() && LockEngine.isFenceCheck(sentOps.get(failed))) {
                    // The cell's routes changed since this gateway read them: it may no longer serve the namespace.
                    throw new io.warden.service.api.NotServedException(null, req.names().get(0).namespace(), true);
                }
                if (mf.code() == Code.NODEEXISTS && failed == 0) {
                    // A retry: the first call's record exists.
                    return zk.data(requestPath).handle((ds, e2) -> {
                        if (e2 != null && Zk.code(e2) == Code.NONODE) {
                            return create(req, p, start, attempt + 1);
                        }
                        if (e2 != null) {
                            throw Zk.translate(e2);
                        }
                        return existing(req, uuid, ds, start);
                    }).thenCompose(f -> f);
                }
                if (mf.code() == Code.NONODE && failed == 0) {
                    throw WardenException.sessionNotFound(req.sessionId());
                }
                if (mf.code() == Code.NONODE && failed >= 2 && failed < 2 + lockPaths.size() && attempt < MAX_CREATE_ATTEMPTS) {
                    // That name's lock node (a container) is missing, or was reaped meanwhile; the names after it
                    // were not looked at, so they are made too where missing (all sent together).
                    List<CompletableFuture<Void>> made = new ArrayList<>();
                    for (String lockPath : lockPaths.subList(failed - 2, lockPaths.size())) {
                        made.add(zk.create(lockPath, new byte[0], CreateMode.CONTAINER, true).handle((n, e2) -> {
                            if (e2 != null && Zk.code(e2) != Code.NODEEXISTS) {
                                throw Zk.translate(e2);
                            }
                            return null;
                        }));
                    }
                    return CompletableFuture.allOf(made.toArray(CompletableFuture[]::new))
                            .thenCompose(v -> create(req, p, start, attempt + 1));
                }
            }
            if (Zk.MultiFailure.maybeApplied(err)) {
                // Failed for its connection after an attempt that may have been applied (its reply lost): the request
                // may exist, uncounted, and a resend finds it without counting it. The session's count is read from
                // ZooKeeper at its next acquire, or it could take one request more than max-requests-per-session.
                sessions.forget(req.sessionId());
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /**
     * A record exists for this request id: a deadlock's victim (the same 409 DEADLOCK as its first call), another ended
     * request (400), a request of other names or another mode (400 naming the field), or this request, whose entries
     * the call rejoins.
     */
    private CompletableFuture<MultiCall> existing(MultiAcquireRequest req, String uuid, Zk.DataAndStat ds, long start) {
        RequestRecord rec = Json.readOrNull(ds.data(), RequestRecord.class);
        if (rec != null && rec.done() && rec.deadlock() != null) {
            return CompletableFuture.failedFuture(new DeadlockException(rec.deadlock()));
        }
        if (rec != null && rec.done()) {
            return CompletableFuture.failedFuture(WardenException.invalid("request_id", "request " + req.requestId()
                    + " of this session has already ended (released, cancelled or timed out); use a new request_id"));
        }
        List<String> names = req.names().stream().map(LockName::toString).toList();
        if (rec == null || !new HashSet<>(rec.lockNames()).equals(new HashSet<>(names))) {
            return CompletableFuture.failedFuture(WardenException.invalid("names", "request " + req.requestId()
                    + " of this session was made for " + (rec == null ? "other names" : rec.lockNames())
                    + "; a retry must repeat its names (in any order), or use a new request_id"));
        }
        if (!rec.multiLock()) {
            return CompletableFuture.failedFuture(WardenException.invalid("names", "request " + req.requestId()
                    + " of this session was made with name, not names; a retry must repeat it"));
        }
        if (rec.mode() != req.mode()) {
            return CompletableFuture.failedFuture(WardenException.invalid("mode", "request " + req.requestId()
                    + " was made with mode " + rec.mode() + "; a retry must repeat it"));
        }
        // The record's order is the request's: the first call's order decides which blocker a call watches.
        List<String> lockPaths = rec.lockNames().stream().map(n -> CellPaths.lock(LockName.parse(n))).toList();
        List<LockName> ordered = rec.lockNames().stream().map(LockName::parse).toList();
        MultiAcquireRequest asMade = new MultiAcquireRequest(req.sessionId(), ordered, req.mode(), req.waitMs(),
                req.requestId(), req.onTimeout(), req.requestIdGiven(), req.onDeadlock());
        long token = tokens.of(ds.stat().getCzxid());
        // Synced first, as a one-name retry is: the decision that follows must read state at least as new as the call.
        return zk.sync(lockPaths.get(0)).thenCompose(v -> readAll(lockPaths, "a request queued on it cannot be looked up; "
                + "it stays queued")).thenApply(listings -> {
            List<String> nodes = new ArrayList<>(lockPaths.size());
            for (int k = 0; k < lockPaths.size(); k++) {
                Optional<QueueEntry> e = listings.get(k) == null ? Optional.empty()
                        : LockQueue.of(listings.get(k).children()).byId(uuid);
                if (e.isEmpty()) {
                    throw WardenException.invalid("request_id", "request " + req.requestId() + " of this session no "
                            + "longer has its entry on " + rec.lockNames().get(k) + " (released by its token); release "
                            + "the request and use a new request_id");
                }
                nodes.add(e.get().node());
                ends.remember(req.sessionId(), lockPaths.get(k), token, e.get().node());
            }
            return new MultiCall(asMade, uuid, lockPaths, nodes, token, start, false);
        });
    }

    /** Every lock's queue, read together; a missing lock node reads as null. */
    private CompletableFuture<List<Zk.ChildrenAndStat>> readAll(List<String> lockPaths, String what) {
        List<CompletableFuture<Zk.ChildrenAndStat>> reads = new ArrayList<>(lockPaths.size());
        for (String lockPath : lockPaths) {
            reads.add(queues.read(lockPath, what).handle((cs, err) -> {
                if (err != null && Zk.code(err) == Code.NONODE) {
                    return null;
                }
                if (err != null) {
                    throw err instanceof RuntimeException re ? re : new java.util.concurrent.CompletionException(err);
                }
                return cs;
            }));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                .thenApply(v -> reads.stream().map(CompletableFuture::join).toList());
    }

    // ------------------------------------------------------------------ holding the call

    private CompletableFuture<MultiAcquireResult> start(MultiCall c) {
        if (c.req.waitMs() > 0) {
            long left = Duration.ofMillis(c.req.waitMs()).toNanos() - (clock.read() - c.startNanos);
            c.timer = clock.schedule(Duration.ofNanos(Math.max(0, left)), () -> onTimeout(c));
        }
        waiting.add(c.req.sessionId(), c);
        metrics.waiterAdded();
        if (draining) {
            fail(c, HeldCalls.drainingError());
            return c.future;
        }
        evaluate(c);
        return c.future;
    }

    /** The queues, read once, and where the request stands in each. */
    private record Look(List<LockQueue> queues, List<Zk.ChildrenAndStat> reads, int[] at) {
        /** The first name (in the request's order) whose entry does not hold; -1 when every entry holds. */
        int firstNotHolding(GrantRules rules) {
            return rules.firstNotHolding(queues, at);
        }

        long revision() {
            long max = 0;
            for (Zk.ChildrenAndStat cs : reads) {
                max = Math.max(max, cs.stat().getPzxid());
            }
            return max;
        }
    }

    /** Reads every queue; null when an entry is gone (the request ended elsewhere, or its session). */
    private CompletableFuture<Look> look(MultiCall c, String what) {
        return readAll(c.lockPaths, what).thenApply(reads -> {
            List<LockQueue> qs = new ArrayList<>(reads.size());
            int[] at = new int[reads.size()];
            for (int k = 0; k < reads.size(); k++) {
                if (reads.get(k) == null) {
                    return null;
                }
                LockQueue q = LockQueue.of(reads.get(k).children());
                at[k] = q.indexOf(c.nodes.get(k));
                if (at[k] < 0) {
                    return null;
                }
                qs.add(q);
            }
            return new Look(qs, reads, at);
        });
    }

    private void evaluate(MultiCall c) {
        if (!c.waiting()) {
            return;
        }
        look(c, WHAT_WAITS).whenComplete((look, err) -> decide(c, look, err));
    }

    private void decide(MultiCall c, Look look, Throwable err) {
        if (!c.waiting()) {
            return;
        }
        if (err != null) {
            if (Zk.unwrap(err) instanceof LockTooLargeException big) {
                cannotRead(c, big);
            } else if (!waitsOut(c, err)) {
                fail(c, Zk.translate(err));
            }
            return;
        }
        if (look == null) {
            gone(c, HeldCall.State.WAITING);
            return;
        }
        if (c.evaluations.getAndIncrement() == 0 && c.refusal == null) {
            for (int k = 0; k < c.lockPaths.size() && c.refusal == null; k++) {
                LockQueue q = look.queues().get(k);
                int i = look.at()[k];
                metrics.queueDepth(q.entries().size());
                if (c.made && i >= maxEntriesPerLock) {
                    c.refusal = HeldCalls.full(c.req.names().get(k), i, maxEntriesPerLock);
                } else if (!q.holds(i) && q.waiters().size() > maxWaitersPerLock) {
                    c.refusal = WardenException.exhausted("lock " + c.req.names().get(k) + " already has "
                            + (q.waiters().size() - 1) + " queued requests, the most allowed (max-waiters-per-lock)");
                }
            }
        }
        if (c.refusal != null) {
            if (c.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                removeAll(c).whenComplete((v, e) -> finishWithError(c, c.refusal));
            }
            return;
        }
        for (int k = 0; k < c.lockPaths.size(); k++) {
            if (!look.queues().get(k).agreesWithHead(look.at()[k])) {
                if (c.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                    withdraw(c, look, HeldCalls.kindConflict(c.req.names().get(k), look.queues().get(k).entries().get(0),
                            c.req.mode(), 0));
                }
                return;
            }
        }
        int k = look.firstNotHolding(rules);
        if (k < 0) {
            if (c.move(HeldCall.State.WAITING, HeldCall.State.DONE)) {
                grant(c, look);
            }
            return;
        }
        if (c.req.waitMs() == 0) {
            if (c.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                timeOut(c, look);
            }
            return;
        }
        Optional<QueueEntry> blocker = look.queues().get(k).blocker(look.at()[k]);
        if (blocker.isEmpty()) {
            log.debug("multi-lock request {} (token {}) cannot be ordered on {}; it waits for its timer",
                    c.req.requestId(), c.token, c.req.names().get(k));
            return;
        }
        log.debug("multi-lock request {} (token {}) waits on {} for {}", c.req.requestId(), c.token,
                c.req.names().get(k), blocker.get().node());
        blockers.watch(c.lockPaths.get(k) + "/" + blocker.get().node(), c).whenComplete((watched, e2) -> {
            if (e2 != null) {
                if (!waitsOut(c, e2)) {
                    fail(c, Zk.translate(e2));
                }
            } else if (!watched) {
                evaluate(c); // the blocker went before the watch was set
            }
        });
    }

    /** A lock too large to list: a request just made is taken back; any other call looks again later. */
    private void cannotRead(MultiCall c, LockTooLargeException big) {
        if (c.evaluations.getAndIncrement() == 0 && c.made) {
            if (c.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                removeAll(c).whenComplete((v, e) -> finishWithError(c, big));
            }
            return;
        }
        c.recheck.schedule(clock, c::waiting, () -> evaluate(c));
    }

    /** As {@code HeldCalls.waitsOut}: a call with a wait outlives a look the connection failed, and looks again. */
    private boolean waitsOut(MultiCall c, Throwable err) {
        if (c.req.waitMs() == 0 || !Zk.connectionTrouble(err)) {
            return false;
        }
        long delayMs = c.recheck.schedule(clock, c::waiting, () -> evaluate(c));
        log.debug("multi-lock request {} (token {}) could not look at its queues ({}); it looks again when ZooKeeper "
                + "answers, within {} ms", c.req.requestId(), c.token, Zk.code(Zk.unwrap(err)), delayMs);
        return true;
    }

    private void grant(MultiCall c, Look look) {
        metrics.grant();
        Map<String, Long> tokensByName = new LinkedHashMap<>();
        for (int k = 0; k < c.lockPaths.size(); k++) {
            tokensByName.put(c.req.names().get(k).toString(),
                    rules.grantToken(c.token, tokens.bestEffort(look.reads().get(k).stat().getCzxid())));
        }
        log.debug("granted multi-lock request {} of session {} on {} with token {}", c.req.requestId(),
                c.req.sessionId(), c.req.names(), c.token);
        holdersOf(c, look).thenAccept(hs -> finishOk(c, new MultiAcquireResult(Status.GRANTED, tokensByName, null, hs,
                look.revision())));
    }

    private static Map<String, List<Holder>> holdersByName(MultiCall c, List<CompletableFuture<List<Holder>>> holders) {
        Map<String, List<Holder>> byName = new LinkedHashMap<>();
        for (int k = 0; k < holders.size(); k++) {
            byName.put(c.req.names().get(k).toString(), holders.get(k).getNow(List.of()));
        }
        return byName;
    }

    private void onTimeout(MultiCall c) {
        if (!c.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
            return;
        }
        decideAtEnd(c, null);
    }

    /** In state ENDING: reads again, grants if every entry holds after all, else times out (or withdraws). */
    private void decideAtEnd(MultiCall c, WardenException conflict) {
        look(c, "the request's place is not known").whenComplete((look, err) -> {
            if (err != null) {
                if (Zk.unwrap(err) instanceof LockTooLargeException big && c.req.onTimeout() == OnTimeout.CANCEL) {
                    // Whether it holds cannot be known: removed, holding or not (this call never said GRANTED).
                    removeAll(c).whenComplete((v, e) -> {
                        if (e != null) {
                            finishWithError(c, Zk.translate(e));
                        } else {
                            finishOk(c, new MultiAcquireResult(Status.TIMED_OUT, null, null, Map.of(), 0));
                        }
                    });
                } else {
                    finishWithError(c, Zk.translate(err));
                }
                return;
            }
            if (look == null) {
                gone(c, HeldCall.State.ENDING);
            } else if (look.firstNotHolding(rules) < 0) {
                c.move(HeldCall.State.ENDING, HeldCall.State.DONE);
                grant(c, look);
            } else if (conflict != null) {
                withdraw(c, look, conflict);
            } else {
                timeOut(c, look);
            }
        });
    }

    /** In state ENDING, not holding every name: KEEP answers QUEUED; CANCEL withdraws the whole request. */
    private void timeOut(MultiCall c, Look look) {
        if (c.req.onTimeout() == OnTimeout.KEEP) {
            int k = look.firstNotHolding(rules);
            holdersOf(c, look).thenAccept(hs -> finishOk(c, new MultiAcquireResult(Status.QUEUED, null, look.at()[k], hs,
                    look.revision())));
            return;
        }
        withdraw(c, look, null);
    }

    /** The holders of each name, from the queues as read (a name whose holders cannot be read shows none). */
    private CompletableFuture<Map<String, List<Holder>>> holdersOf(MultiCall c, Look look) {
        List<CompletableFuture<List<Holder>>> holders = new ArrayList<>();
        for (int k = 0; k < c.lockPaths.size(); k++) {
            holders.add(reader.holders(c.lockPaths.get(k), look.queues().get(k)).exceptionally(e -> List.of()));
        }
        return CompletableFuture.allOf(holders.toArray(CompletableFuture[]::new)).thenApply(v -> holdersByName(c, holders));
    }

    /**
     * In state ENDING, not holding every name: removes every entry and tombstones the record in one multi, on condition
     * that the blocker of the first entry that does not hold is still there; when it has gone, looks again.
     */
    private void withdraw(MultiCall c, Look look, WardenException conflict) {
        int k = look.firstNotHolding(rules);
        List<String> keptOutBy = k < 0 ? List.of() : look.queues().get(k).blocker(look.at()[k])
                .map(b -> List.of(c.lockPaths.get(k) + "/" + b.node())).orElse(List.of());
        ends.endWhileBlocked(c.nodePaths(), c.req.sessionId(), c.uuid, keptOutBy).whenComplete((how, e) -> {
            if (e == null && how == RequestEnds.Ended.UNBLOCKED) {
                decideAtEnd(c, conflict);
                return;
            }
            if (e == null && how == RequestEnds.Ended.ENDED) {
                counted(c);
            }
            if (e != null) {
                finishWithError(c, Zk.unwrap(e) instanceof WardenException we ? we : Zk.translate(e));
            } else if (conflict != null) {
                finishWithError(c, conflict);
            } else {
                holdersOf(c, look).thenAccept(hs -> finishOk(c, new MultiAcquireResult(Status.TIMED_OUT, null, null, hs,
                        look.revision())));
            }
        });
    }

    /** Removes every entry and tombstones the record, unconditionally (a refused request never held). */
    private CompletableFuture<Void> removeAll(MultiCall c) {
        return ends.endWhileBlocked(c.nodePaths(), c.req.sessionId(), c.uuid, List.of()).thenAccept(how -> {
            if (how == RequestEnds.Ended.ENDED) {
                counted(c);
            }
        });
    }

    private void counted(MultiCall c) {
        sessions.count(c.req.sessionId(), -1);
        quotas.ended(c.req.sessionId(), c.uuid);
    }

    /**
     * An entry vanished while the call waited: its session ended, the request was released or cancelled, or another
     * gateway removed it as a deadlock's victim (its record, tombstoned in that same transaction, says so with the cycle).
     */
    private void gone(MultiCall c, HeldCall.State from) {
        if (!c.move(from, HeldCall.State.DONE)) {
            return;
        }
        Vanished.why(zk, c.req.sessionId(), c.uuid).thenAccept(cause -> {
            switch (cause.why()) {
                case DEADLOCK_VICTIM -> finishWithError(c, new DeadlockException(cause.deadlock()));
                case SESSION_GONE -> finishWithError(c, WardenException.sessionNotFound(c.req.sessionId()));
                case ENDED -> finishOk(c, new MultiAcquireResult(Status.TIMED_OUT, null, null, Map.of(), 0));
            }
        });
    }

    private void finishOk(MultiCall c, MultiAcquireResult result) {
        forget(c);
        metrics.acquire(result.status().name().toLowerCase(), clock.read() - c.startNanos);
        c.future.complete(result);
    }

    private void finishWithError(MultiCall c, Throwable error) {
        forget(c);
        metrics.acquire("error", clock.read() - c.startNanos);
        c.future.completeExceptionally(error);
    }

    private void forget(MultiCall c) {
        if (waiting.remove(c.req.sessionId(), c)) {
            metrics.waiterDone();
        }
        blockers.leave(c);
        Clock.Cancellable t = c.timer;
        if (t != null) {
            t.cancel();
        }
        c.recheck.cancel();
    }

    private void fail(MultiCall c, RuntimeException e) {
        if (c.move(HeldCall.State.WAITING, HeldCall.State.DONE)) {
            finishWithError(c, e);
        }
    }

    // ------------------------------------------------------------------ ends from outside

    /** A queue node of the session on {@code lockPath} with {@code token} was removed (seen in the watch mirror). */
    void removedElsewhere(String sessionId, String lockPath, long token) {
        for (MultiCall c : waiting.of(sessionId)) {
            if (c.token == token && c.lockPaths.contains(lockPath)) {
                gone(c, HeldCall.State.WAITING);
            }
        }
    }

    /** Answers the held calls of a request this gateway removed as a deadlock's victim with {@code error}. */
    void deadlocked(String sessionId, String uuid, RuntimeException error) {
        for (MultiCall c : waiting.of(sessionId)) {
            if (c.uuid.equals(uuid) && c.move(HeldCall.State.WAITING, HeldCall.State.DONE)) {
                counted(c);
                finishWithError(c, error);
            }
        }
    }

    /** Whether a call of the request {@code uuid} of {@code sessionId} is held here. */
    boolean holds(String sessionId, String uuid) {
        for (MultiCall c : waiting.of(sessionId)) {
            if (c.uuid.equals(uuid)) {
                return true;
            }
        }
        return false;
    }

    /** Answers the held calls of a request another call ended (a release or cancel of the whole request). */
    void removed(String sessionId, String uuid) {
        for (MultiCall c : waiting.of(sessionId)) {
            if (c.uuid.equals(uuid)) {
                gone(c, HeldCall.State.WAITING);
            }
        }
    }

    void failSession(String sessionId, RuntimeException error) {
        waiting.of(sessionId).forEach(c -> fail(c, error));
    }

    void failAll(RuntimeException error) {
        waiting.all().forEach(c -> fail(c, error));
    }

    void drain() {
        draining = true;
        failAll(HeldCalls.drainingError());
    }

    int size() {
        return waiting.size();
    }
}
