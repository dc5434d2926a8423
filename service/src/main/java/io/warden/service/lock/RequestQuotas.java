package io.warden.service.lock;

import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.SessionListing;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Holds plus queued requests per owner, so that one principal — in open mode one client address — cannot fill a
 * gateway, and through it the cell, with locks and waiters for everyone, at most {@code max-requests-per-principal} of
 * them. The owner of a request is the owner of its session ({@link SessionRecord#quotaOwner}: the session's principal,
 * else the address that opened it), whoever makes the call (an admin acquiring on another principal's session counts
 * against that principal).
 *
 * <p><b>What is counted</b>: the requests made through this gateway (an acquire's {@code multi} that created its request
 * record and queue node here) that this gateway has not seen end, plus places reserved by acquires whose {@code multi}
 * is under way. A request stops counting when this gateway releases, cancels or times it out, refuses it (too many
 * waiters, sequence exhausted), or its session ends here (closed, expired, or its record deleted while this gateway
 * tracked it). An acquire reserves its place before it writes to ZooKeeper and gives it back when the write fails, so
 * concurrent acquires cannot overshoot the limit, and a refusal writes nothing.
 *
 * <p><b>What the bound does not cover</b>: it is per gateway (a principal using N gateways may have N times the limit
 * in the cell); a retry of an existing request (same {@code request_id}) is let through at the limit and not counted
 * again (it makes nothing new; it was counted where it was made); sessions whose records name neither a principal nor
 * an address ({@link SessionRecord#UNKNOWN_OWNER}: written by gateways that predate auth files, or opened through the
 * Java API without them) are not counted at all; a session evicted from this map (more than
 * {@link Hints#PER_SESSION} sessions with counted requests) stops counting its requests, which undercounts, never
 * refuses wrongly.
 *
 * <p><b>Ends elsewhere</b>: a request made here may end where this gateway does not hear it (released or cancelled
 * through another gateway; its session closed or expired by another gateway after a takeover). Its place is then held
 * too long, never given twice. So before refusing, an owner at its limit is counted again from ZooKeeper
 * ({@link #recount}): one {@code getChildren} per session of that owner with requests counted here, at most once per
 * {@link #RECOUNT_INTERVAL} per owner, concurrent refusals sharing one recount; its requests that ZooKeeper no longer
 * has live stop counting. A recount only ever removes requests that had been made before it began, so it cannot
 * uncount one whose {@code multi} it raced. None of this is on the path of an acquire below the limit, nor of a release:
 * those cost no ZooKeeper request here.
 *
 * <p><b>Bounds</b>: {@link #sessions} holds at most {@link Hints#PER_SESSION} sessions (least recently used evicted,
 * its requests uncounted); each session's set holds only requests counted against an owner, so at most
 * {@code max-requests-per-principal} per owner over all its sessions; {@link #owners} holds one entry per owner with a
 * counted or reserved request or a recount under way, so at most as many as the sessions plus the acquires in flight.
 *
 * <p><b>Concurrency</b>: called from request threads and Curator's event thread. Every field of this class and of its
 * entries is guarded by this object's monitor, held only for short in-memory work, never across I/O; a recount's reads
 * run outside it and apply their result under it.
 */
final class RequestQuotas {
    /** How often, at most, an owner at its limit is counted again from ZooKeeper. */
    static final Duration RECOUNT_INTERVAL = Duration.ofSeconds(1);

    private final Zk zk;
    private final SessionListing listing;
    private final Clock clock;
    private final int maxPerOwner;

    /** Guarded by this. */
    private static final class OwnerCount {
        /** Counted requests over all {@link #sessionIds}, plus reserved places. */
        int counted;
        int reserved;
        final Set<String> sessionIds = new HashSet<>();
        /** When the last recount began (clock ns), or {@link Long#MIN_VALUE}; its future while it runs. */
        long recountedAt = Long.MIN_VALUE;
        CompletableFuture<Void> recount;

        int total() {
            return counted + reserved;
        }

        boolean idle() {
            return counted == 0 && reserved == 0 && recount == null;
        }
    }

    /** Guarded by this: one session's counted requests (their protection uuids) and its owner. */
    private record SessionCount(String owner, Set<String> uuids) {
    }

    /** Guarded by this; access order, so the eldest is the least recently used. */
    private final LinkedHashMap<String, SessionCount> sessions = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, SessionCount> eldest) {
            if (size() <= Hints.PER_SESSION) {
                return false;
            }
            uncount(eldest.getKey(), eldest.getValue());
            return true;
        }
    };
    /** Guarded by this. */
    private final Map<String, OwnerCount> owners = new HashMap<>();

    RequestQuotas(Zk zk, SessionListing listing, Clock clock, int maxPerOwner) {
        this.zk = zk;
        this.listing = listing;
        this.clock = clock;
        this.maxPerOwner = maxPerOwner;
    }

    private static boolean counted(String owner) {
        return owner != null && !owner.equals(SessionRecord.UNKNOWN_OWNER);
    }

    /**
     * Takes a place for a request of {@code owner}: -1 when taken (or the owner is not counted), else how many it has,
     * the limit reached. A place taken must be {@link #commit}ted or {@link #unreserve}d.
     */
    synchronized int reserve(String owner) {
        if (!counted(owner)) {
            return -1;
        }
        OwnerCount oc = owners.computeIfAbsent(owner, o -> new OwnerCount());
        if (oc.total() >= maxPerOwner) {
            return oc.total();
        }
        oc.reserved++;
        return -1;
    }

    /** The request {@code uuid} of the session was made: the owner's reserved place becomes that request. */
    synchronized void commit(String owner, String sessionId, String uuid) {
        if (!counted(owner)) {
            return;
        }
        OwnerCount oc = owners.computeIfAbsent(owner, o -> new OwnerCount());
        oc.reserved = Math.max(0, oc.reserved - 1);
        SessionCount sc = sessions.get(sessionId);
        if (sc == null || !sc.owner.equals(owner)) {
            if (sc != null) {
                uncount(sessionId, sc); // cannot happen: a session's owner never changes
            }
            sc = new SessionCount(owner, new HashSet<>());
            sessions.put(sessionId, sc);
        }
        if (sc.uuids.add(uuid)) {
            oc.counted++;
            oc.sessionIds.add(sessionId);
        }
        dropIfIdle(owner, oc);
    }

    /** The acquire that reserved a place made no request: gives the place back. */
    synchronized void unreserve(String owner) {
        if (!counted(owner)) {
            return;
        }
        OwnerCount oc = owners.get(owner);
        if (oc != null) {
            oc.reserved = Math.max(0, oc.reserved - 1);
            dropIfIdle(owner, oc);
        }
    }

    /** The request {@code uuid} of the session ended (seen here); a request not counted here is ignored. */
    synchronized void ended(String sessionId, String uuid) {
        SessionCount sc = sessions.get(sessionId);
        if (sc == null || !sc.uuids.remove(uuid)) {
            return;
        }
        OwnerCount oc = owners.get(sc.owner);
        if (oc != null) {
            oc.counted--;
        }
        if (sc.uuids.isEmpty()) {
            sessions.remove(sessionId);
            if (oc != null) {
                oc.sessionIds.remove(sessionId);
            }
        }
        if (oc != null) {
            dropIfIdle(sc.owner, oc);
        }
    }

    /** The session ended (seen here): all its requests did. */
    synchronized void sessionEnded(String sessionId) {
        SessionCount sc = sessions.remove(sessionId);
        if (sc != null) {
            uncount(sessionId, sc);
        }
    }

    /** Under the monitor: stops counting a session that has left {@link #sessions}. */
    private void uncount(String sessionId, SessionCount sc) {
        OwnerCount oc = owners.get(sc.owner);
        if (oc == null) {
            return;
        }
        oc.counted -= sc.uuids.size();
        oc.sessionIds.remove(sessionId);
        dropIfIdle(sc.owner, oc);
    }

    private void dropIfIdle(String owner, OwnerCount oc) {
        if (oc.idle()) {
            owners.remove(owner, oc);
        }
    }

    /** What {@code owner} has counted here, reserved places included (tests, messages). */
    synchronized int of(String owner) {
        OwnerCount oc = owners.get(owner);
        return oc == null ? 0 : oc.total();
    }

    /**
     * Counts {@code owner}'s requests again from ZooKeeper (see the class note), unless one did less than
     * {@link #RECOUNT_INTERVAL} ago; completes when done, or at once when there is nothing to do. Never fails: a
     * session whose children cannot be read keeps its count.
     */
    CompletableFuture<Void> recount(String owner) {
        Map<String, Set<String>> snapshot = new HashMap<>();
        CompletableFuture<Void> done;
        synchronized (this) {
            OwnerCount oc = owners.get(owner);
            if (oc == null) {
                return CompletableFuture.completedFuture(null);
            }
            if (oc.recount != null) {
                return oc.recount;
            }
            long now = clock.read();
            if (oc.recountedAt != Long.MIN_VALUE && now - oc.recountedAt < RECOUNT_INTERVAL.toNanos()) {
                return CompletableFuture.completedFuture(null);
            }
            oc.recountedAt = now;
            for (String sid : oc.sessionIds) {
                SessionCount sc = sessions.get(sid);
                if (sc != null) {
                    snapshot.put(sid, Set.copyOf(sc.uuids));
                }
            }
            done = new CompletableFuture<>();
            oc.recount = done;
        }
        List<CompletableFuture<Void>> reads = new ArrayList<>(snapshot.size());
        Map<String, Set<String>> liveBySession = new HashMap<>();
        for (String sid : snapshot.keySet()) {
            CompletableFuture<List<String>> read;
            try {
                read = listing.children(sid, "its requests cannot be counted again");
            } catch (RuntimeException e) {
                read = CompletableFuture.failedFuture(e); // the pass must end, or the owner's refusals would wait on it
            }
            reads.add(read.handle((children, err) -> {
                Set<String> live = err == null ? liveRequests(children)
                        : Zk.code(err) == Code.NONODE ? Set.of() : null; // null: unknown, keep the count
                synchronized (liveBySession) {
                    if (live != null) {
                        liveBySession.put(sid, live);
                    }
                }
                return null;
            }));
        }
        CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).whenComplete((v, err) -> {
            synchronized (this) {
                synchronized (liveBySession) {
                    liveBySession.forEach((sid, live) -> {
                        for (String uuid : snapshot.get(sid)) {
                            if (!live.contains(uuid)) {
                                ended(sid, uuid); // made before the recount began, and not live in ZooKeeper since
                            }
                        }
                    });
                }
                OwnerCount oc = owners.get(owner);
                if (oc != null && oc.recount == done) {
                    oc.recount = null;
                    dropIfIdle(owner, oc);
                }
            }
            done.complete(null);
        });
        return done;
    }

    /** The protection uuids of a session node's live requests: records without an end marker ({@link Tombstones}). */
    static Set<String> liveRequests(List<String> children) {
        Set<String> live = new HashSet<>();
        for (String c : children) {
            if (!Tombstones.isMarker(c)) {
                live.add(c);
            }
        }
        for (String c : children) {
            if (Tombstones.isMarker(c)) {
                live.remove(Tombstones.uuidOf(c));
            }
        }
        return live;
    }
}
