package io.warden.service.lock;

import io.warden.service.api.WardenException;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueListing;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.RequestRecord;
import io.warden.service.zk.SessionListing;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException.Code;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Ending requests in ZooKeeper: a release by token, a cancel by request id, and the end of a held call's own request.
 * Every end is one {@code multi} ({@link Tombstones#endOps}: delete the queue node, tombstone the record, mark the
 * end); what the engine does around it (metrics, answering held calls) stays in {@link LockEngine}.
 *
 * <p>A release needs no read when the request was made through this gateway ({@link #remember}): the hint names the
 * node; a stale hint makes the {@code multi} fail harmlessly and the node is then looked up.
 *
 * <p>A cancel of a request the queue does not have leaves a tombstone for it, so an acquire that the cancel overtook
 * fails when it arrives.
 *
 * <p>A lock too large to list ({@link QueueListing}) cannot be searched: a release by token that needs the look-up (a
 * request made through another gateway) and a cancel fail with {@link io.warden.service.api.LockTooLargeException}
 * (429), and the request stays; a release of a request made here needs no look-up.
 *
 * <p>Concurrency: {@link #made} is a concurrent map of at most {@link Hints#PER_SESSION} entries (least recently
 * used evicted: a miss costs the look-up); nothing else is kept. Continuations run on Curator's event thread.
 */
final class RequestEnds {
    private final Zk zk;
    private final SessionListing sessionListing;
    private final NodeInfoCache nodes;
    private final Tombstones tombstones;
    private final GrantRules rules;
    private final QueueListing queues;
    /** Requests made through this gateway, by (session, lock path, token): hints that save a release its reads. */
    private final Map<String, QueueEntry> made = Hints.bounded(Hints.PER_SESSION);

    RequestEnds(Zk zk, NodeInfoCache nodes, Tombstones tombstones, QueueListing queues, SessionListing sessionListing,
                GrantRules rules) {
        this.sessionListing = sessionListing;
        this.rules = rules;
        this.zk = zk;
        this.nodes = nodes;
        this.tombstones = tombstones;
        this.queues = queues;
    }

    /** Forgets every hint (the cell went back; a hint could name a node it no longer has, or one made again). */
    void forgetHints() {
        made.clear();
    }

    /** A request was made (or found again) through this gateway. */
    void remember(String sessionId, String lockPath, long token, String node) {
        QueueEntry.parse(node).ifPresent(e -> made.put(key(sessionId, lockPath, token), e));
    }

    private static String key(String sessionId, String lockPath, long token) {
        return sessionId + "|" + lockPath + "|" + token;
    }

    /**
     * What a release by token ended: the entry, and whether that ended its request — false for one entry of a multi-lock
     * request, whose record stays live for its other names (docs/decisions/0012).
     */
    record Released(QueueEntry entry, boolean requestEnded) {
    }

    /**
     * Ends the session's entry on the lock whose token is {@code token}: what it ended, or null when there is none (a
     * stale or foreign token). SESSION_NOT_FOUND when the session is gone.
     */
    CompletableFuture<Released> release(String sessionId, String lockPath, long token) {
        QueueEntry known = made.remove(key(sessionId, lockPath, token));
        CompletableFuture<QueueEntry> found = known != null ? CompletableFuture.completedFuture(known)
                : findSynced(sessionId, lockPath, token);
        return found.thenCompose(entry -> {
            if (entry == null) {
                return CompletableFuture.completedFuture(null);
            }
            return endEntry(lockPath, sessionId, entry).thenCompose(ended -> {
                if (ended == null && known != null) {
                    // The hint was stale; ask ZooKeeper (which also says 404 when the session is gone).
                    return findSynced(sessionId, lockPath, token).thenCompose(e -> e == null
                            ? CompletableFuture.completedFuture(null) : endEntry(lockPath, sessionId, e));
                }
                return CompletableFuture.completedFuture(ended);
            });
        });
    }

    /**
     * Ends one entry: its whole request ({@link #end}) unless it is an entry of a multi-lock request, which loses that
     * entry only ({@link #endOneOfMulti}). Null when the entry is already gone.
     */
    private CompletableFuture<Released> endEntry(String lockPath, String sessionId, QueueEntry entry) {
        return nodes.get(lockPath, entry).thenCompose(info -> {
            if (info != null && info.data() != null && info.data().multiLock()) {
                return endOneOfMulti(lockPath + "/" + entry.node(), sessionId, entry.id())
                        .thenApply(d -> d ? new Released(entry, false) : null);
            }
            return end(lockPath, sessionId, entry).thenApply(d -> d ? new Released(entry, true) : null);
        });
    }

    /**
     * Deletes one entry of a multi-lock request, leaving its record live (a repeat of the acquire with its request id
     * must still find the request, and a release of the whole request ends the rest); false when the entry is gone.
     */
    private CompletableFuture<Boolean> endOneOfMulti(String nodePath, String sessionId, String uuid) {
        List<CuratorOp> ops;
        try {
            ops = List.of(zk.ops().delete().forPath(nodePath));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.multi(ops).handle((r, err) -> {
            if (err == null) {
                nodes.forget(nodePath);
                return CompletableFuture.completedFuture(true);
            }
            if (Zk.code(err) == Code.NONODE) {
                if (Zk.MultiFailure.maybeApplied(err)) {
                    // A first attempt may have been applied: only a live record (an expiry deletes it, the end of the
                    // whole request tombstones it) says the entry was ours to delete and nobody else ended it.
                    String record = CellPaths.sessionRequest(sessionId, uuid);
                    return zk.exists(record).thenApply(stat -> stat != null && stat.getVersion() == Tombstones.TOMBSTONE_VERSION - 1);
                }
                return CompletableFuture.completedFuture(false);
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /** Attempts of the end of a whole multi-lock request that keeps losing races with releases of its entries. */
    private static final int END_REQUEST_ATTEMPTS = 4;

    /**
     * Ends a live multi-lock request as a whole: deletes every entry it still has on {@code lockPaths} (its names), tombstones
     * its record and marks the end, in one {@code multi}. True when this call ended it; false when it had already
     * ended. SESSION_NOT_FOUND when the session is gone.
     */
    CompletableFuture<Boolean> endRequest(String sessionId, String uuid, List<String> lockPaths) {
        return endRequest(sessionId, uuid, lockPaths, 1);
    }

    private CompletableFuture<Boolean> endRequest(String sessionId, String uuid, List<String> lockPaths, int attempt) {
        List<CompletableFuture<List<String>>> reads = new ArrayList<>(lockPaths.size());
        for (String lockPath : lockPaths) {
            reads.add(queues.childrenOrEmpty(lockPath, "the request's entry on it cannot be found to end it"));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            List<String> present = new ArrayList<>();
            for (int k = 0; k < lockPaths.size(); k++) {
                String lockPath = lockPaths.get(k);
                LockQueue.of(reads.get(k).join()).byId(uuid).ifPresent(e -> present.add(lockPath + "/" + e.node()));
            }
            List<CuratorOp> ops;
            try {
                ops = tombstones.endOps(present, sessionId, uuid);
            } catch (Exception e) {
                return CompletableFuture.<Boolean>failedFuture(e);
            }
            return zk.multi(ops).handle((r, err) -> {
                if (err == null) {
                    present.forEach(nodes::forget);
                    tombstones.ended(sessionId, r.get(present.size() + 1).getResultPath());
                    return CompletableFuture.completedFuture(true);
                }
                Throwable cause = Zk.unwrap(err);
                if (!(cause instanceof Zk.MultiFailure mf) || (mf.code() != Code.NONODE && mf.code() != Code.BADVERSION)) {
                    throw Zk.translate(err);
                }
                String record = CellPaths.sessionRequest(sessionId, uuid);
                return zk.exists(CellPaths.session(sessionId)).thenCombine(zk.exists(record), (session, rec) -> {
                    if (session == null) {
                        throw WardenException.sessionNotFound(sessionId);
                    }
                    return rec;
                }).thenCompose(rec -> {
                    if (rec == null || rec.getVersion() >= Tombstones.TOMBSTONE_VERSION) {
                        // Ended meanwhile: by this call's first attempt when Curator sent it again, else by another.
                        return CompletableFuture.completedFuture(rec != null && mf.maybeApplied());
                    }
                    if (attempt >= END_REQUEST_ATTEMPTS) {
                        throw Zk.translate(err);
                    }
                    // An entry went between the reads and the write (released by its token): read again.
                    return endRequest(sessionId, uuid, lockPaths, attempt + 1);
                });
            }).thenCompose(f -> f);
        });
    }

    /** Attempts of a cancel that keeps finding its request made and gone between its reads (never in practice). */
    private static final int CANCEL_ATTEMPTS = 3;

    /**
     * Ends the session's request with protection id {@code uuid} on the lock, queued or granted; false when absent.
     * An absent request is remembered as ended (a tombstone, {@link Tombstones#unknownOps}): the cancel may have
     * overtaken its acquire, which must then fail when it arrives instead of queueing, or granting, a request its
     * client gave up. So when this completes, the request is gone for good, whatever was in flight.
     */
    CompletableFuture<Boolean> cancel(String sessionId, String lockPath, String uuid) {
        return cancel(sessionId, lockPath, uuid, 1);
    }

    private CompletableFuture<Boolean> cancel(String sessionId, String lockPath, String uuid, int attempt) {
        return zk.exists(CellPaths.session(sessionId)).thenCombine(queues.childrenOrEmpty(lockPath,
                "a request queued on it cannot be cancelled"), (stat, children) -> {
            if (stat == null) {
                throw WardenException.sessionNotFound(sessionId);
            }
            return LockQueue.of(children).byId(uuid);
        }).thenCompose((Optional<QueueEntry> entry) -> entry.isEmpty() ? forget(sessionId, lockPath, uuid, attempt)
                : endFound(lockPath, sessionId, entry.get()));
    }

    /** A cancel found the request's entry: ends the request (a multi-lock request as a whole: it cannot hold without it). */
    private CompletableFuture<Boolean> endFound(String lockPath, String sessionId, QueueEntry entry) {
        return nodes.get(lockPath, entry).thenCompose(info -> {
            if (info == null || info.data() == null || !info.data().multiLock()) {
                return end(lockPath, sessionId, entry);
            }
            return zk.data(CellPaths.sessionRequest(sessionId, entry.id())).thenCompose(ds -> {
                RequestRecord rec = Json.readOrNull(ds.data(), RequestRecord.class);
                if (rec == null || rec.done()) {
                    return CompletableFuture.completedFuture(false);
                }
                return endRequest(sessionId, entry.id(), rec.lockNames().stream()
                        .map(n -> CellPaths.lock(io.warden.service.api.LockName.parse(n))).toList());
            });
        });
    }

    /** No queue entry for the request: leaves its tombstone, unless its record exists. Always false: nothing ended. */
    private CompletableFuture<Boolean> forget(String sessionId, String lockPath, String uuid, int attempt) {
        return tombstone(sessionId, uuid).thenCompose(made -> {
            if (made) {
                return CompletableFuture.completedFuture(false);
            }
            // The record exists: the request already ended (its tombstone), or its acquire got in between our read of
            // the queue and the write. Look again: a live request is ended like any other.
            return zk.data(CellPaths.sessionRequest(sessionId, uuid)).handle((ds, e2) -> {
                if (e2 != null && Zk.code(e2) != Code.NONODE) {
                    throw Zk.translate(e2);
                }
                RequestRecord rec = e2 != null ? null : Json.readOrNull(ds.data(), RequestRecord.class);
                if (rec != null && rec.done() || attempt >= CANCEL_ATTEMPTS) {
                    return CompletableFuture.completedFuture(false);
                }
                return cancel(sessionId, lockPath, uuid, attempt + 1);
            }).thenCompose(f -> f);
        });
    }

    /**
     * Makes the tombstone of a request the session has no record of ({@link Tombstones#unknownOps}, one {@code multi}):
     * true when made, false when a record already exists; SESSION_NOT_FOUND when the session is gone. Used for a request
     * cancelled before its acquire arrived, and for a try with a request id its caller gave that was refused without
     * being made: a repeat of the call finds the request ended, as it would have had the try been made and cancelled
     * (false then means a repeat made the request meanwhile, or it ended before: the caller takes the usual path).
     */
    CompletableFuture<Boolean> tombstone(String sessionId, String uuid) {
        List<CuratorOp> ops;
        try {
            ops = tombstones.unknownOps(sessionId, uuid);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.multi(ops).handle((r, err) -> {
            if (err == null) {
                tombstones.ended(sessionId, r.get(3).getResultPath());
                return true;
            }
            Throwable cause = Zk.unwrap(err);
            if (cause instanceof Zk.MultiFailure mf && mf.failedIndex() == 0 && mf.code() == Code.NONODE) {
                throw WardenException.sessionNotFound(sessionId);
            }
            if (cause instanceof Zk.MultiFailure mf && mf.failedIndex() == 0 && mf.code() == Code.NODEEXISTS) {
                return false;
            }
            throw Zk.translate(err);
        });
    }

    private CompletableFuture<Boolean> end(String lockPath, String sessionId, QueueEntry entry) {
        return end(lockPath + "/" + entry.node(), sessionId, entry.id());
    }

    /**
     * Ends a request: deletes its queue node, turns its record into a tombstone and marks the end, in one multi; false
     * when the node is already gone. The tombstone makes a late duplicate of the acquire (same request_id) fail instead
     * of queueing again (a regression found by GatewayPauseIT: a paused gateway woke and ran a stale acquire that the
     * client had long since retried elsewhere and released).
     */
    CompletableFuture<Boolean> end(String nodePath, String sessionId, String uuid) {
        List<CuratorOp> ops;
        try {
            ops = tombstones.endOps(nodePath, sessionId, uuid);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.multi(ops).handle((r, err) -> {
            if (err == null) {
                nodes.forget(nodePath);
                tombstones.ended(sessionId, r.get(2).getResultPath());
                return CompletableFuture.completedFuture(true);
            }
            if (Zk.code(err) == Code.NONODE) {
                if (Zk.MultiFailure.maybeApplied(err)) {
                    // The connection dropped under the multi and Curator sent it again: the first attempt may have
                    // been applied and lost its reply (a regression found by WholeSystemFaultIT on a leader kill).
                    // The node being gone does not say who removed it: a release that went by an old hint, long
                    // after the session's expiry had removed the node, answered released:true (found by the proof
                    // suite, ProofSoakIT seed 20261202). Only this request's record as a tombstone says the first
                    // attempt was applied: the same multi tombstoned it, and an expiry or close deletes records.
                    String record = CellPaths.sessionRequest(sessionId, uuid);
                    return zk.exists(record).thenApply(stat -> stat != null && stat.getVersion() == Tombstones.TOMBSTONE_VERSION);
                }
                return CompletableFuture.completedFuture(false);
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /** How {@link #endWhileBlocked} went. */
    enum Ended {
        /** The request ended here: node deleted, record tombstoned, end marked. */
        ENDED,
        /** Its node was already gone (ended elsewhere, or its session's end). */
        GONE,
        /** The entry that blocked it is gone, so it may hold now: nothing was changed. */
        UNBLOCKED
    }

    /**
     * Ends a request that does not hold — a held call whose wait ran out, a try-lock, a request of the wrong kind — on
     * condition that every one of {@code blockerPaths}, the entries that kept it from holding when the caller looked
     * (its blocker; for a semaphore request waiting for a count, its permits' worth of entries just ahead), is still
     * there: the checks are in the same multi. Without them the end could land after the blocker went and another call
     * for the same request (a retry with its request id, at another gateway) was told GRANTED: a cancel held up by a
     * lost quorum or a queue of writes removed a hold its client had been given. While they exist the request cannot
     * hold (they are ahead of it and entries ahead never come back), so no call was told it did.
     */
    CompletableFuture<Ended> endWhileBlocked(String nodePath, String sessionId, String uuid, List<String> blockerPaths) {
        return endWhileBlocked(List.of(nodePath), sessionId, uuid, blockerPaths);
    }

    /**
     * As above, for a request with an entry at each of {@code nodePaths} (a multi-lock request's, all ended together);
     * {@code blockerPaths}: what keeps one of its entries that does not hold from holding.
     */
    CompletableFuture<Ended> endWhileBlocked(List<String> nodePaths, String sessionId, String uuid, List<String> blockerPaths) {
        List<CuratorOp> ops = new java.util.ArrayList<>(blockerPaths.size() + nodePaths.size() + 2);
        try {
            for (String blockerPath : blockerPaths) {
                ops.add(zk.ops().check().forPath(blockerPath));
            }
            ops.addAll(nodePaths.size() == 1 ? tombstones.endOps(nodePaths.get(0), sessionId, uuid)
                    : tombstones.endOps(nodePaths, sessionId, uuid));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        int checks = blockerPaths.size();
        return zk.multi(ops).handle((r, err) -> {
            if (err == null) {
                nodePaths.forEach(nodes::forget);
                tombstones.ended(sessionId, r.get(checks + nodePaths.size() + 1).getResultPath());
                return CompletableFuture.completedFuture(Ended.ENDED);
            }
            if (Zk.unwrap(err) instanceof Zk.MultiFailure mf && mf.code() == Code.NONODE) {
                if (mf.failedIndex() < checks) {
                    // The blocker went (or a first attempt was applied and this is Curator's resend): look again.
                    return CompletableFuture.completedFuture(Ended.UNBLOCKED);
                }
                if (mf.maybeApplied()) {
                    String record = CellPaths.sessionRequest(sessionId, uuid);
                    return zk.exists(record).thenApply(stat -> stat != null
                            && stat.getVersion() == Tombstones.TOMBSTONE_VERSION ? Ended.ENDED : Ended.GONE);
                }
                return CompletableFuture.completedFuture(Ended.GONE);
            }
            throw Zk.translate(err);
        }).thenCompose(f -> f);
    }

    /**
     * {@link #find}, and when it finds nothing (no such grant, or no such session) {@code sync} and find again: this
     * gateway's server may be a follower behind the leader, which has not applied the grant (or the session) another
     * gateway just made, and a "not found" must hold as of the call (found by the proof suite, ProofSoakIT seed
     * 20261203: a release by a valid token answered {@code released:false} through a gateway on a lagging follower and
     * left the hold in place; {@code StaleFollowerIT.aReleaseAndACancelAtAGatewayOnALaggingFollower_*}). A hit needs no
     * sync: the queue node is there, and ending it is a write, decided by the leader.
     */
    private CompletableFuture<QueueEntry> findSynced(String sessionId, String lockPath, long token) {
        return find(sessionId, lockPath, token).handle((entry, err) -> {
            if (err == null && entry != null) {
                return CompletableFuture.completedFuture(entry);
            }
            if (err != null && !(Zk.unwrap(err) instanceof WardenException we
                    && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND)) {
                return CompletableFuture.<QueueEntry>failedFuture(err);
            }
            return zk.sync(lockPath).thenCompose(v -> find(sessionId, lockPath, token));
        }).thenCompose(f -> f);
    }

    /** Reads which of the session's queue nodes on this lock has this token; null when none. */
    private CompletableFuture<QueueEntry> find(String sessionId, String lockPath, long token) {
        CompletableFuture<List<String>> requests = sessionListing.children(sessionId,
                "a hold made through another gateway cannot be found to release").exceptionally(err -> {
            if (Zk.code(err) == Code.NONODE) {
                throw WardenException.sessionNotFound(sessionId);
            }
            throw Zk.translate(err);
        });
        CompletableFuture<List<String>> queue = queues.childrenOrEmpty(lockPath,
                "a hold made through another gateway cannot be found to release");
        return requests.thenCombine(queue, (uuids, children) -> {
            Set<String> mine = new HashSet<>(uuids);
            List<QueueEntry> candidates = new ArrayList<>();
            for (QueueEntry e : LockQueue.of(children).entries()) {
                if (e.id() != null && mine.contains(e.id())) {
                    candidates.add(e);
                }
            }
            return candidates;
        }).thenCompose(candidates -> matchToken(lockPath, candidates, token, 0));
    }

    private CompletableFuture<QueueEntry> matchToken(String lockPath, List<QueueEntry> candidates, long token, int i) {
        if (i >= candidates.size()) {
            return CompletableFuture.completedFuture(null);
        }
        QueueEntry e = candidates.get(i);
        return nodes.get(lockPath, e).thenCompose(info -> info != null && rules.names(token, info.token())
                ? CompletableFuture.completedFuture(e)
                : matchToken(lockPath, candidates, token, i + 1));
    }
}
