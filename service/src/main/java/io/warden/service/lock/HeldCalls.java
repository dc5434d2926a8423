package io.warden.service.lock;

import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.Holder;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.LockName;
import io.warden.service.api.LockTooLargeException;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.WardenException;
import io.warden.service.cell.Tokens;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueListing;
import io.warden.service.time.Clock;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The acquire calls held on this gateway until they are answered ({@link HeldCall}): each looks at its lock's queue,
 * and is granted, refused at admission, withdrawn when it disagrees with the kind of the name's first entry (a lock
 * request on a semaphore, or the reverse: 409 CONFLICT), answered as a try-lock, or watches the one entry it waits for
 * ({@link LockQueue#blocker}) — a semaphore request behind its permits' worth of holders, the whole queue — and looks
 * again when that goes; its {@code wait_ms} ends it (TIMED_OUT, or QUEUED with
 * {@code on_timeout: KEEP}). Waiting costs memory, not threads.
 *
 * <p>Admission, at a call's first look: a lock has at most {@code max-entries-per-lock} entries, holders and waiters
 * alike, those of other ZooKeeper clients on its node included, so that its queue stays listable in one ZooKeeper reply
 * by every client of it; a request this call made at that place or later is taken back and refused (429) before it
 * could be granted. {@code max-waiters-per-lock} bounds the waiters on top.
 *
 * <p>A lock too large to list ({@link QueueListing}: only foreign entries can make it so) is never read: a request this
 * call just made on it is refused and taken back; any other held call on it looks again every second or so (doubling
 * to {@link Recheck#MAX}) until it can be decided or its {@code wait_ms} runs out.
 *
 * <p>Concurrency: {@link HeldCall}'s note says how a call moves; the path that moves it out of WAITING answers it.
 * Looks run their continuations on ZooKeeper's event thread; starts, timers and rechecks come from any thread. Calls
 * are registered in {@link WaitingCalls} (by session) from {@link #start} until answered, and their blockers' watches
 * kept in {@link BlockerWatches} (one per blocker node, and one per lock whose queue semaphore waiters watch); {@link #releasedAt} is a bounded concurrent map; {@link #breaking} is guarded by itself. Nothing here
 * blocks.
 */
final class HeldCalls {
    private static final Logger log = LoggerFactory.getLogger(HeldCalls.class);
    /** Lock paths with the time this gateway last released a hold there, for the handoff metric (a sample). */
    private static final int MAX_RELEASED_AT = 10_000;

    private final Zk zk;
    private final Clock clock;
    private final WardenMetrics metrics;
    private final GrantRules rules;
    private final Tokens tokens;
    private final QueueListing queues;
    private final LockReader reader;
    private final RequestEnds ends;
    private final SessionHints sessions;
    private final RequestQuotas quotas;
    private final int maxEntriesPerLock;
    private final int maxWaitersPerLock;
    /** Every held call, by session, from start to answer. */
    private final WaitingCalls<HeldCall> waiting = new WaitingCalls<>();
    /** The watches held calls keep on their blockers, one per blocker node. */
    private final BlockerWatches<HeldCall> blockers;
    /**
     * Shared reads of a lock's queue for semaphore waiters woken together ({@link #evaluateTogether}), by lock path: an
     * entry only while a read is in flight, so bounded by the locks with woken waiters. Guarded by itself.
     */
    private final Map<String, QueueRead> queueReads = new java.util.HashMap<>();
    /** When this gateway last released a hold of a lock path, for the handoff metric (taken by the next grant). */
    /**
     * Requests this gateway is removing as deadlocks' victims ({@link #breaking}), "session/uuid" to their held calls
     * whose node the mirror showed gone meanwhile. Guarded by itself; bounded by the breaker's multis in flight.
     */
    private final Map<String, List<HeldCall>> breaking = new java.util.HashMap<>();
    private final Map<String, Long> releasedAt = Hints.bounded(MAX_RELEASED_AT);
    private volatile boolean draining;

    HeldCalls(Zk zk, Clock clock, WardenMetrics metrics, GrantRules rules, Tokens tokens, QueueListing queues,
              LockReader reader, RequestEnds ends, SessionHints sessions, RequestQuotas quotas, int maxEntriesPerLock,
              int maxWaitersPerLock) {
        this.zk = zk;
        this.clock = clock;
        this.metrics = metrics;
        this.rules = rules;
        this.tokens = tokens;
        this.queues = queues;
        this.reader = reader;
        this.ends = ends;
        this.sessions = sessions;
        this.quotas = quotas;
        this.maxEntriesPerLock = maxEntriesPerLock;
        this.maxWaitersPerLock = maxWaitersPerLock;
        this.blockers = new BlockerWatches<>(zk, clock, metrics, HeldCall::waiting,
                w -> rules.awaitedEntryGone(() -> evaluate(w)), this::evaluateTogether);
        zk.client().getConnectionStateListenable().addListener((c, state) -> {
            if (state == org.apache.curator.framework.state.ConnectionState.RECONNECTED) {
                // Watches do not survive a ZooKeeper session expiry: look at every held call again.
                forEach(this::evaluate);
            }
        });
    }

    /** The refusal of a request at place {@code entries} of a lock that has its most entries. */
    static WardenException full(LockName name, int entries, int maxEntriesPerLock) {
        return WardenException.exhausted("lock " + name + " already has " + entries + " holders and queued requests, the "
                + "most allowed per lock (max-entries-per-lock " + maxEntriesPerLock + "; entries of other ZooKeeper "
                + "clients on the lock's node count too)");
    }

    /** Holds the call until it is answered: sets its timer, registers it and takes the first look. */
    CompletableFuture<AcquireResult> start(HeldCall w) {
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

    /** The answer to a request that disagrees with the kind of the name's first entry ({@link LockQueue#agreesWithHead}). */
    static WardenException kindConflict(LockName name, QueueEntry head, AcquireRequest req) {
        return kindConflict(name, head, req.mode(), req.permits());
    }

    /** As above, for a request of {@code mode} and {@code permits} (0 unless SEMAPHORE). */
    static WardenException kindConflict(LockName name, QueueEntry head, io.warden.service.api.Mode mode, int permits) {
        return WardenException.conflict("lock " + name + " is " + kind(head) + " while it has entries; this request is "
                + kind(mode, permits) + ". Every request on a name must agree while it has holders or waiters");
    }

    private static String kind(QueueEntry e) {
        return kind(e.mode(), e.permits());
    }

    private static String kind(io.warden.service.api.Mode mode, int permits) {
        return mode == io.warden.service.api.Mode.SEMAPHORE ? "a SEMAPHORE of " + permits + " permits"
                : "a lock (EXCLUSIVE and SHARED requests)";
    }

    /** Reads the queue once and grants, answers a try-lock, or watches what it waits for. */
    private void evaluate(HeldCall w) {
        if (!w.waiting()) {
            return;
        }
        queues.read(w.lockPath, WHAT_WAITS).whenComplete((cs, err) -> decide(w, cs, err));
    }

    private static final String WHAT_WAITS = "new requests on it are refused, and requests queued on it wait";

    /**
     * Calls woken together by a change to their lock's queue (semaphore waiters, {@link BlockerWatches#watchQueue}): one
     * read of the queue decides them all, so a handoff costs a read per gateway, not per waiter. Calls woken while a
     * read of their lock is in flight wait for the next one (a read sent after they were woken: one in flight may be
     * older than what they missed), so a burst of wake-ups costs at most two reads.
     */
    private void evaluateTogether(List<HeldCall> calls) {
        Map<String, List<HeldCall>> byLock = new java.util.HashMap<>();
        for (HeldCall w : calls) {
            if (w.waiting()) {
                byLock.computeIfAbsent(w.lockPath, k -> new java.util.ArrayList<>()).add(w);
            }
        }
        byLock.forEach((lockPath, ws) -> {
            List<HeldCall> batch;
            synchronized (queueReads) {
                QueueRead r = queueReads.computeIfAbsent(lockPath, k -> new QueueRead());
                r.next.addAll(ws);
                if (r.inFlight) {
                    return;
                }
                r.inFlight = true;
                batch = r.next;
                r.next = new java.util.ArrayList<>();
            }
            readTogether(lockPath, batch);
        });
    }

    private void readTogether(String lockPath, List<HeldCall> batch) {
        rules.awaitedEntryGone(() -> queues.read(lockPath, WHAT_WAITS).whenComplete((cs, err) -> {
            batch.forEach(w -> decide(w, cs, err));
            List<HeldCall> more;
            synchronized (queueReads) {
                QueueRead r = queueReads.get(lockPath);
                if (r.next.isEmpty()) {
                    queueReads.remove(lockPath);
                    return;
                }
                more = r.next;
                r.next = new java.util.ArrayList<>();
            }
            readTogether(lockPath, more);
        }));
    }

    /** A lock's shared queue read: whether one is in flight, and the calls that wait for the next. */
    private static final class QueueRead {
        boolean inFlight;
        List<HeldCall> next = new java.util.ArrayList<>();
    }

    /** Decides the call from one read of its queue ({@code err}: the read's failure). */
    private void decide(HeldCall w, Zk.ChildrenAndStat cs, Throwable err) {
        if (!w.waiting()) {
            return;
        }
        if (err != null) {
            if (Zk.code(err) == Code.NONODE) {
                gone(w, HeldCall.State.WAITING);
            } else if (Zk.unwrap(err) instanceof LockTooLargeException big) {
                cannotRead(w, big);
            } else if (!waitsOut(w, err)) {
                fail(w, Zk.translate(err));
            }
            return;
        }
        LockQueue q = LockQueue.of(cs.children());
        int i = q.indexOf(w.node);
        if (i < 0) {
            gone(w, HeldCall.State.WAITING);
            return;
        }
        if (w.evaluations.getAndIncrement() == 0) {
            metrics.queueDepth(q.entries().size());
            if (w.made && i >= maxEntriesPerLock) {
                // Holders and waiters, foreign entries included (max-waiters-per-lock alone left SHARED holders
                // unbounded, and enough of them make a listing no client can read: docs/design.md, "How large a
                // lock may be"). Checked before the grant: a SHARED request that would hold at once is refused
                // too. By position, so a burst of acquires refuses the later ones.
                w.refusal = full(w.req.name(), i, maxEntriesPerLock);
            } else if (!q.holds(i) && q.waiters().size() > maxWaitersPerLock) {
                // Waiters only: counting the holders would let a lock with one holder admit one waiter fewer
                // than max-waiters-per-lock. This request is one of the waiters unless it holds.
                w.refusal = WardenException.exhausted("lock " + w.req.name() + " already has "
                        + (q.waiters().size() - 1) + " queued requests, the most allowed (max-waiters-per-lock)");
            }
        }
        if (w.refusal != null) {
            if (w.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                remove(w).whenComplete((v, e) -> finishWithError(w, w.refusal));
            }
            return;
        }
        if (!q.agreesWithHead(i)) {
            // Another kind holds or waits (a lock, or a semaphore of other permits): withdrawn, never granted. It
            // cannot hold while the entry at the head is there, so it is removed on that condition.
            if (w.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                withdraw(w, q, cs.stat(), kindConflict(w.req.name(), q.entries().get(0), w.req));
            }
            return;
        }
        if (rules.holds(q, i)) {
            if (w.move(HeldCall.State.WAITING, HeldCall.State.DONE)) {
                grant(w, q, cs.stat());
            }
            return;
        }
        if (w.req.waitMs() == 0) {
            if (w.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                timeOut(w, q, cs.stat());
            }
            return;
        }
        if (q.waitsForCount(i)) {
            // A semaphore request behind its permits' worth of holders: whichever goes first lets it in.
            log.debug("request {} on {} (token {}) waits for one of {} semaphore holders ahead", w.req.requestId(),
                    w.req.name(), w.token, w.req.permits());
            // A call that read the queue before the watch was set is woken again by it (with the others of the queue).
            blockers.watchQueue(w.lockPath, w, cs.stat().getCversion());
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
                if (!waitsOut(w, e2)) {
                    fail(w, Zk.translate(e2));
                }
            } else if (!watched) {
                evaluate(w); // the blocker went before the watch was set
            }
        });
    }

    /**
     * The lock is too large to read ({@link QueueListing}), so the request can be neither granted nor refused by its
     * place. A request this call just made is refused and taken back (the lock has far more than max-entries-per-lock
     * entries). Any other held call (a retry, or one woken by its blocker or a reconnection) looks again later, a
     * second at first, doubling to {@link Recheck#MAX}: the lock gives no notice when it shrinks, and its timer still
     * ends the wait.
     */
    private void cannotRead(HeldCall w, LockTooLargeException big) {
        if (w.evaluations.getAndIncrement() == 0 && w.made) {
            if (w.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
                remove(w).whenComplete((v, e) -> finishWithError(w, big));
            }
            return;
        }
        long delayMs = w.recheck.schedule(clock, w::waiting, () -> evaluate(w));
        log.debug("request {} on {} (token {}) waits on a lock too large to read ({} entries); looking again in {} ms",
                w.req.requestId(), w.req.name(), w.token, big.entries(), delayMs);
    }

    /**
     * A look that failed for the connection to ZooKeeper ({@link Zk#connectionTrouble}) is not an answer: the request
     * is still queued, and what it waited for may have gone meanwhile. A call with a wait keeps waiting: every
     * reconnection looks at every held call again, and a {@link Recheck} covers a connection that came back before this
     * failure was heard, or never went (a server that stopped answering). Its timer still ends the wait. Returns false
     * (the caller answers 503 at once, as to any call ZooKeeper cannot serve) for a try, and for any other failure.
     */
    private boolean waitsOut(HeldCall w, Throwable err) {
        if (w.req.waitMs() == 0 || !Zk.connectionTrouble(err)) {
            return false;
        }
        long delayMs = w.recheck.schedule(clock, w::waiting, () -> evaluate(w));
        log.debug("request {} on {} (token {}) could not look at its queue ({}); it looks again when ZooKeeper answers, "
                + "within {} ms", w.req.requestId(), w.req.name(), w.token, Zk.code(Zk.unwrap(err)), delayMs);
        return true;
    }

    private void grant(HeldCall w, LockQueue q, Stat stat) {
        metrics.grant();
        Long released = releasedAt.remove(w.lockPath);
        if (released != null && w.evaluations.get() > 1) {
            metrics.handoff(clock.read() - released);
        }
        log.debug("granted {} {} to session {} with token {}", w.req.mode(), w.req.name(), w.req.sessionId(), w.token);
        reader.holders(w.lockPath, q).whenComplete((holders, err) -> {
            if (err != null) {
                // The grant stands; the holder list is a courtesy. Answer with ourselves.
                holders = List.of();
            }
            long token = rules.grantToken(w.token, tokens.bestEffort(stat.getCzxid()));
            // The revision is the lock node's pzxid, a zxid at or after the node's creation (the token adds the floor).
            finishOk(w, new AcquireResult(Status.GRANTED, token, null, holders, stat.getPzxid()));
        });
    }

    private void onTimeout(HeldCall w) {
        if (!w.move(HeldCall.State.WAITING, HeldCall.State.ENDING)) {
            log.debug("wait of request {} on {} ran out after it was answered (state {})", w.req.requestId(), w.req.name(), w.state());
            return;
        }
        log.debug("wait of request {} on {} ran out ({} ms)", w.req.requestId(), w.req.name(), w.req.waitMs());
        decideAtEnd(w, null);
    }

    /**
     * In state ENDING: reads the queue and grants the call if it holds after all, else times it out — or, when
     * {@code conflict} is given (it was found disagreeing with the name's kind), withdraws it and answers that.
     */
    private void decideAtEnd(HeldCall w, WardenException conflict) {
        queues.read(w.lockPath, "the request's place is not known").whenComplete((cs, err) -> {
            if (err != null) {
                if (Zk.code(err) == Code.NONODE) {
                    gone(w, HeldCall.State.ENDING);
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
                gone(w, HeldCall.State.ENDING);
            } else if (q.holds(i)) {
                w.move(HeldCall.State.ENDING, HeldCall.State.DONE); // it holds after all: granted, not timed out
                grant(w, q, cs.stat());
            } else if (conflict != null) {
                withdraw(w, q, cs.stat(), conflict);
            } else {
                timeOut(w, q, cs.stat());
            }
        });
    }

    /** In state ENDING, with the request not holding: cancel it or leave it queued, as asked. */
    private void timeOut(HeldCall w, LockQueue q, Stat stat) {
        int position = q.indexOf(w.node);
        if (w.req.onTimeout() == OnTimeout.KEEP) {
            reader.holders(w.lockPath, q).whenComplete((holders, err) -> finishOk(w, 
                    new AcquireResult(Status.QUEUED, null, position, err == null ? holders : List.of(), stat.getPzxid())));
            return;
        }
        withdraw(w, q, stat, null);
    }

    /**
     * In state ENDING, with the request not holding: removes it and answers TIMED_OUT, or {@code conflict} when given.
     * Removed only while what keeps it from holding is still there ({@link #keptOutBy}; RequestEnds#endWhileBlocked):
     * once that goes the request may hold, and another call for it (a retry elsewhere) may have been told so; then it
     * is looked at again.
     */
    private void withdraw(HeldCall w, LockQueue q, Stat stat, WardenException conflict) {
        List<String> keptOutBy = keptOutBy(w, q, q.indexOf(w.node));
        CompletableFuture<RequestEnds.Ended> ended = !keptOutBy.isEmpty()
                ? ends.endWhileBlocked(w.lockPath + "/" + w.node, w.req.sessionId(), w.uuid, keptOutBy)
                : remove(w).thenApply(v -> RequestEnds.Ended.GONE); // an entry that can never hold: nothing to wait for
        ended.whenComplete((how, e) -> {
            if (e == null && how == RequestEnds.Ended.UNBLOCKED) {
                log.debug("request {} on {} (token {}) was unblocked as it was being removed: looking again",
                        w.req.requestId(), w.req.name(), w.token);
                decideAtEnd(w, conflict);
                return;
            }
            if (e == null && how == RequestEnds.Ended.ENDED) {
                counted(w);
            }
            if (e == null && conflict != null) {
                finishWithError(w, conflict);
                return;
            }
            CompletableFuture<List<Holder>> holders = e != null
                    ? CompletableFuture.failedFuture(e) : reader.holders(w.lockPath, q);
            holders.whenComplete((hs, err) -> {
                if (err != null && !(Zk.unwrap(err) instanceof WardenException)) {
                    finishWithError(w, Zk.translate(err));
                } else if (err != null) {
                    finishWithError(w, Zk.unwrap(err));
                } else {
                    finishOk(w, new AcquireResult(Status.TIMED_OUT, null, null, hs, stat.getPzxid()));
                }
            });
        });
    }

    /**
     * The entries whose presence keeps the request at {@code position} (not holding) from holding: its blocker; for a
     * semaphore request waiting for a count, the permits' worth of entries just ahead of it (while they are all there,
     * at least that many are ahead); none for an entry that can never hold.
     */
    private static List<String> keptOutBy(HeldCall w, LockQueue q, int position) {
        if (q.waitsForCount(position)) {
            List<String> ahead = new java.util.ArrayList<>(w.req.permits());
            for (int j = position - w.req.permits(); j < position; j++) {
                ahead.add(w.lockPath + "/" + q.entries().get(j).node());
            }
            return ahead;
        }
        return q.blocker(position).map(b -> List.of(w.lockPath + "/" + b.node())).orElse(List.of());
    }

    /** Deletes the request's node and record together; a node already gone is fine. */
    private CompletableFuture<Void> remove(HeldCall w) {
        return ends.end(w.lockPath + "/" + w.node, w.req.sessionId(), w.uuid)
                .thenAccept(deleted -> {
                    if (deleted) {
                        counted(w);
                    }
                });
    }

    /** The call's request ended here: it no longer counts against its session and its principal. */
    private void counted(HeldCall w) {
        sessions.count(w.req.sessionId(), -1);
        quotas.ended(w.req.sessionId(), w.uuid);
    }

    /**
     * The call's queue node vanished while it waited: the session ended, or the request was cancelled. Answered by the
     * path that moves it from {@code from} (WAITING: any look; ENDING: the end of its wait, which owns it).
     */
    private void gone(HeldCall w, HeldCall.State from) {
        if (!w.move(from, HeldCall.State.DONE)) {
            return;
        }
        Vanished.why(zk, w.req.sessionId(), w.uuid).thenAccept(cause -> {
            switch (cause.why()) {
                case DEADLOCK_VICTIM -> finishWithError(w, new io.warden.service.api.DeadlockException(cause.deadlock()));
                case SESSION_GONE -> finishWithError(w, WardenException.sessionNotFound(w.req.sessionId()));
                case ENDED -> finishOk(w, new AcquireResult(Status.TIMED_OUT, null, null, List.of(), 0));
            }
        });
    }

    /**
     * Answers the call, after forgetting it: a caller that sees the answer never sees the call still pending.
     * (CompletableFuture runs dependents last-registered first, so clean-up cannot be a dependent.)
     */
    private void finishOk(HeldCall w, AcquireResult result) {
        forget(w);
        w.future.complete(result);
    }

    private void finishWithError(HeldCall w, Throwable error) {
        forget(w);
        w.future.completeExceptionally(error);
    }

    private void forget(HeldCall w) {
        if (waiting.remove(w.req.sessionId(), w)) {
            metrics.waiterDone();
        }
        blockers.leave(w); // its watch goes with the last call that waits for that node
        Clock.Cancellable t = w.timer;
        if (t != null) {
            t.cancel();
        }
        w.recheck.cancel();
    }

    private void fail(HeldCall w, RuntimeException e) {
        if (w.move(HeldCall.State.WAITING, HeldCall.State.DONE)) {
            finishWithError(w, e);
        }
    }

    /** This gateway released a hold of {@code lockPath} now (the next grant there measures the handoff). */
    void released(String lockPath) {
        releasedAt.put(lockPath, clock.read());
    }

    /**
     * This gateway is about to send the {@code multi} that removes the request {@code uuid} of {@code sessionId} as a
     * deadlock's victim. Until {@link #broken}, a removal of its nodes seen in the watch mirror (the multi's own
     * notification may come before its reply) does not make its held calls read their record: the reply answers them.
     */
    void breaking(String sessionId, String uuid) {
        synchronized (breaking) {
            breaking.put(sessionId + "/" + uuid, new java.util.ArrayList<>(1));
        }
    }

    /**
     * The victim's {@code multi} is over: {@code error} answers the request's held calls when it committed (null when it
     * did not); a call whose node the mirror showed gone meanwhile (removed by something else) then looks as usual.
     */
    void broken(String sessionId, String uuid, RuntimeException error) {
        List<HeldCall> seen;
        synchronized (breaking) {
            seen = breaking.remove(sessionId + "/" + uuid);
        }
        if (error != null) {
            deadlocked(sessionId, uuid, error);
        }
        if (seen != null) {
            for (HeldCall w : seen) {
                gone(w, HeldCall.State.WAITING); // a no-op for a call already answered
            }
        }
    }

    /** Answers the held calls of a request this gateway removed as a deadlock's victim with {@code error}. */
    void deadlocked(String sessionId, String uuid, RuntimeException error) {
        for (HeldCall w : waiting.of(sessionId)) {
            if (w.uuid.equals(uuid) && w.move(HeldCall.State.WAITING, HeldCall.State.DONE)) {
                counted(w);
                finishWithError(w, error);
            }
        }
    }

    /** Whether a call of the request {@code uuid} of {@code sessionId} is held here. */
    boolean holds(String sessionId, String uuid) {
        for (HeldCall w : waiting.of(sessionId)) {
            if (w.uuid.equals(uuid)) {
                return true;
            }
        }
        return false;
    }

    /**
     * A queue node of {@code sessionId} on {@code lockPath} with {@code token} was removed, as another gateway's watch
     * mirror shows: the held calls waiting on it here look at their request (a deadlock's victim learns it so).
     */
    void removedElsewhere(String sessionId, String lockPath, long token) {
        for (HeldCall w : waiting.of(sessionId)) {
            if (w.token == token && w.lockPath.equals(lockPath)) {
                synchronized (breaking) {
                    List<HeldCall> pending = breaking.get(sessionId + "/" + w.uuid);
                    if (pending != null) {
                        pending.add(w); // this gateway's own multi removed it, or will say it did not
                        continue;
                    }
                }
                gone(w, HeldCall.State.WAITING);
            }
        }
    }

    /** Answers the held calls of a request that another call removed (a release or a cancel). */
    void removed(String sessionId, String uuid) {
        for (HeldCall w : waiting.of(sessionId)) {
            if (w.uuid.equals(uuid)) {
                gone(w, HeldCall.State.WAITING);
            }
        }
    }

    /** Answers every held call of the session with {@code error}. */
    void failSession(String sessionId, RuntimeException error) {
        for (HeldCall w : waiting.of(sessionId)) {
            fail(w, error);
        }
    }

    /** Answers every held call with {@code error}. */
    void failAll(RuntimeException error) {
        forEach(w -> fail(w, error));
    }

    /** Takes no more calls and answers every held one with UNAVAILABLE; their requests stay queued in ZooKeeper. */
    void drain() {
        draining = true;
        failAll(drainingError());
    }

    boolean draining() {
        return draining;
    }

    static WardenException drainingError() {
        return WardenException.unavailable("this gateway is shutting down; repeat the call with the same request_id "
                + "on another gateway to keep your place in the queue", null);
    }

    int size() {
        return waiting.size();
    }

    private void forEach(java.util.function.Consumer<HeldCall> action) {
        for (HeldCall w : waiting.all()) {
            action.accept(w);
        }
    }
}
