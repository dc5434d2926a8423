package io.warden.service.lock;

import io.warden.service.api.WardenException;
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

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ended requests: each leaves a tombstone, so that a late duplicate of its acquire (same {@code request_id}: a paused
 * gateway waking up, a resent call) fails instead of queueing again; the oldest are pruned.
 *
 * <p>Below a session node {@code /sessions/{sh}/{sid}}:
 * <ul>
 *   <li>{@code {uuid}}: the request record ({@link RequestRecord}), created at version 0 and set once in the acquire's
 *   {@code multi} (version 1, live); ending the request sets it to {@link RequestRecord#TOMBSTONE} (version
 *   {@value #TOMBSTONE_VERSION}) in the same {@code multi} that deletes its queue node;</li>
 *   <li>{@code ~{uuid}_{seq}}: the end marker, PERSISTENT_SEQUENTIAL and empty, created in that same {@code multi}.
 *   Markers say which records are tombstones and in what order they ended, from the names alone.</li>
 * </ul>
 * A cancel of a request id the session has no request for leaves the same pair ({@link #unknownOps}), so the acquire
 * it overtook, arriving late, fails instead of queueing.
 *
 * <p>So ending a request costs no extra request (three operations in one {@code multi}), and pruning costs one
 * {@code exists}, one {@code getChildren} ({@link SessionListing}: never one over the packet limit) and a {@code multi}
 * of at most {@link #PAIRS_PER_MULTI} pairs every {@value #PRUNE_EVERY} or so ended requests, with no data reads: the
 * oldest markers beyond {@value #KEPT} are deleted together with their records, each record at version
 * {@value #TOMBSTONE_VERSION}, so a prune working from an old listing can never delete a live record (one re-created
 * by a late duplicate after its tombstone was pruned: that live record is at version 1). A marker and its record go in
 * one transaction, so no marker ever points at a live record.
 *
 * <p><b>When to prune</b>: when the new marker's sequence number (it counts the session node's child creates) is in
 * the first two of every {@code 2 × PRUNE_EVERY} numbers, which any gateway ending the session's requests sees alike
 * (a request makes two children, so that is about every {@value #PRUNE_EVERY} ends); and when this gateway has ended
 * {@value #PRUNE_EVERY} of the session's requests since it last pruned it (at one gateway the two rules fire at the
 * same end), or its last prune failed (then at its next end). The second rule is what bounds a session: the numbers
 * step over the window when other children are made between ends (concurrent requests, records of acquires that
 * failed), and a session pruned by the window alone can grow past what a gateway can list. With it, a session keeps
 * at most {@value #KEPT} tombstones, plus {@value #PRUNE_EVERY} for each gateway ending its requests, plus those whose
 * prune is under way.
 *
 * <p><b>One prune of a session at a time</b> at a gateway ({@link #pruning}): an end that would start a prune while
 * one of that session is under way starts none (its count goes on, so a later end does). Two prunes from one listing
 * would delete the same pairs, and the second's {@code multi} would fail on a deleted node; in a group-commit batch
 * that failure costs every call of the batch a request of its own, and the prune one {@code multi} per pair after
 * it. A busy session's ends (one session for every thread of a process, as the Java client has it) came often enough
 * to start overlapping prunes, by both rules. Prunes of one session at two gateways may still overlap (rarely: the
 * window rule at both): the second fails harmlessly as above.
 *
 * <p><b>Bounds</b>: {@link #endsSincePrune} holds at most {@link Hints#PER_SESSION} sessions, the least recently
 * used evicted; an evicted session's count starts again (its prune comes up to {@value #PRUNE_EVERY} ends later).
 * {@link #pruning} holds the sessions whose prune is under way here, each removed when its prune completes (a prune
 * always completes: it never fails, see {@link #prune(String)}).
 *
 * <p>Thread-safety: {@link #endsSincePrune} is a concurrent map of atomic counters, {@link #pruning} a concurrent
 * set whose add decides which end starts a prune.
 */
final class Tombstones {
    private static final Logger log = LoggerFactory.getLogger(Tombstones.class);
    /** Markers (and so tombstones) kept per session: late duplicates are caught for a session's newest requests. */
    static final int KEPT = 64;
    /** About how many ended requests between prunes. */
    static final int PRUNE_EVERY = 32;
    /** The version of an ended request's record: created (0), set with the request (1), set to the tombstone (2). */
    static final int TOMBSTONE_VERSION = 2;
    static final String MARKER = "~";
    /**
     * Pairs (a tombstone and its marker) deleted per {@code multi}: 100 operations of about 100 bytes, far below any
     * ZooKeeper server's request limit.
     */
    static final int PAIRS_PER_MULTI = 50;

    private final Zk zk;
    private final SessionListing listing;
    /** Requests of each session this gateway ended since it last pruned it (bounded: see the class comment). */
    private final Map<String, AtomicInteger> endsSincePrune = Hints.bounded(Hints.PER_SESSION);
    /** Sessions this gateway is pruning now: one prune of a session at a time (see the class comment). */
    private final java.util.Set<String> pruning = java.util.concurrent.ConcurrentHashMap.newKeySet();

    Tombstones(Zk zk, SessionListing listing) {
        this.zk = zk;
        this.listing = listing;
    }

    /** The operations that end a request, in this order: delete its queue node, tombstone its record, mark the end. */
    List<CuratorOp> endOps(String nodePath, String sessionId, String uuid) throws Exception {
        return List.of(zk.ops().delete().forPath(nodePath),
                zk.ops().setData().withVersion(TOMBSTONE_VERSION - 1).forPath(CellPaths.sessionRequest(sessionId, uuid),
                        Json.write(RequestRecord.TOMBSTONE)),
                zk.ops().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                        .forPath(CellPaths.sessionRequest(sessionId, MARKER + uuid + "_")));
    }

    /**
     * The operations that end a multi-lock request: delete each of {@code nodePaths} (the entries it still has), then
     * tombstone its record and mark the end, as {@link #endOps} does for one entry.
     */
    List<CuratorOp> endOps(List<String> nodePaths, String sessionId, String uuid) throws Exception {
        List<CuratorOp> ops = new ArrayList<>(nodePaths.size() + 2);
        for (String nodePath : nodePaths) {
            ops.add(zk.ops().delete().forPath(nodePath));
        }
        ops.add(zk.ops().setData().withVersion(TOMBSTONE_VERSION - 1).forPath(CellPaths.sessionRequest(sessionId, uuid),
                Json.write(RequestRecord.TOMBSTONE)));
        ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                .forPath(CellPaths.sessionRequest(sessionId, MARKER + uuid + "_")));
        return ops;
    }

    /**
     * The operations that remember a cancel of a request that was never made (or not yet: its acquire may still be on
     * its way, overtaken by the cancel): create its record as a tombstone, brought to version
     * {@value #TOMBSTONE_VERSION} like every other tombstone (so pruning treats it alike), and mark the end. A late
     * acquire with that request id then fails on the existing record, as a late duplicate of an ended request does.
     * Fails with NODEEXISTS on the first operation when the record exists (the acquire came first, or the request
     * already ended), and with NONODE when the session is gone.
     */
    List<CuratorOp> unknownOps(String sessionId, String uuid) throws Exception {
        String record = CellPaths.sessionRequest(sessionId, uuid);
        byte[] tombstone = Json.write(RequestRecord.TOMBSTONE);
        return List.of(zk.ops().create().withMode(CreateMode.PERSISTENT).forPath(record, tombstone),
                zk.ops().setData().withVersion(0).forPath(record, tombstone),
                zk.ops().setData().withVersion(TOMBSTONE_VERSION - 1).forPath(record, tombstone),
                zk.ops().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                        .forPath(CellPaths.sessionRequest(sessionId, MARKER + uuid + "_")));
    }

    /** A request of {@code sessionId} ended, and its marker is {@code markerPath}: prunes when it is time. */
    void ended(String sessionId, String markerPath) {
        long seq = sequence(markerPath.substring(markerPath.lastIndexOf('/') + 1));
        AtomicInteger ends = endsSincePrune.computeIfAbsent(sessionId, k -> new AtomicInteger());
        boolean window = seq >= 0 && seq % (2L * PRUNE_EVERY) < 2;
        if ((ends.incrementAndGet() >= PRUNE_EVERY || window) && pruning.add(sessionId)) {
            ends.set(0);
            prune(sessionId).whenComplete((pruned, err) -> {
                pruning.remove(sessionId);
                if (!Boolean.TRUE.equals(pruned)) {
                    ends.accumulateAndGet(PRUNE_EVERY, Math::max); // the next end tries again
                }
            });
        }
    }

    /** The session ended: nothing more to count for it here. */
    void forget(String sessionId) {
        endsSincePrune.remove(sessionId);
    }

    static boolean isMarker(String child) {
        return child.startsWith(MARKER);
    }

    /** The request uuid a marker is for. */
    static String uuidOf(String marker) {
        return marker.substring(MARKER.length(), marker.lastIndexOf('_'));
    }

    private static long sequence(String marker) {
        try {
            return Long.parseLong(marker.substring(marker.lastIndexOf('_') + 1));
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** The live (not ended) requests among a session node's children: records without a marker. */
    static int live(List<String> children) {
        int markers = 0;
        for (String c : children) {
            if (isMarker(c)) {
                markers++;
            }
        }
        return children.size() - 2 * markers;
    }

    /**
     * Prunes the session's oldest tombstones; completes with false when it could not list or delete them and should try
     * again soon (true when it did, when the session is gone, or when it has too many children to list). Never fails.
     */
    CompletableFuture<Boolean> prune(String sessionId) {
        return listing.children(sessionId, "its ended requests cannot be pruned")
                .thenCompose(children -> prune(sessionId, children)).thenApply(v -> true)
                .exceptionally(e -> {
                    if (Zk.code(e) == Code.NONODE) {
                        endsSincePrune.remove(sessionId);
                        return true;
                    }
                    if (Zk.unwrap(e) instanceof WardenException we
                            && we.code() == WardenException.ErrorCode.RESOURCE_EXHAUSTED) {
                        return true; // too large to list (logged): asking again at the next end would not help
                    }
                    log.debug("could not prune the ended requests of session {}: {}", sessionId, Zk.unwrap(e).toString());
                    return false;
                });
    }

    /** Deletes the tombstones of the oldest markers among {@code children} beyond {@link #KEPT}, with their markers. */
    CompletableFuture<Void> prune(String sessionId, List<String> children) {
        List<String> markers = new ArrayList<>();
        for (String c : children) {
            if (isMarker(c)) {
                markers.add(c);
            }
        }
        if (markers.size() <= KEPT) {
            return CompletableFuture.completedFuture(null);
        }
        markers.sort(Comparator.comparingLong(Tombstones::sequence));
        List<String> old = markers.subList(0, markers.size() - KEPT);
        List<CompletableFuture<Void>> chunks = new ArrayList<>();
        for (int from = 0; from < old.size(); from += PAIRS_PER_MULTI) {
            chunks.add(pruneChunk(sessionId, old.subList(from, Math.min(old.size(), from + PAIRS_PER_MULTI))));
        }
        return CompletableFuture.allOf(chunks.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> pruneChunk(String sessionId, List<String> old) {
        List<CuratorOp> ops = new ArrayList<>();
        try {
            for (String m : old) {
                ops.addAll(pairOps(sessionId, m));
            }
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.multi(ops).handle((r, err) -> {
            if (err == null) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (Zk.code(err) != Code.NONODE && Zk.code(err) != Code.BADVERSION) {
                return CompletableFuture.<Void>failedFuture(err);
            }
            // One pair is off (pruned meanwhile by another call, or its record live again): prune the others one by one.
            List<CompletableFuture<?>> each = new ArrayList<>();
            for (String m : old) {
                try {
                    each.add(zk.multi(pairOps(sessionId, m)).exceptionally(e -> null));
                } catch (Exception e) {
                    return CompletableFuture.<Void>failedFuture(e);
                }
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
        }).thenCompose(f -> f);
    }

    private List<CuratorOp> pairOps(String sessionId, String marker) throws Exception {
        return List.of(zk.ops().delete().withVersion(TOMBSTONE_VERSION).forPath(CellPaths.sessionRequest(sessionId, uuidOf(marker))),
                zk.ops().delete().forPath(CellPaths.sessionRequest(sessionId, marker)));
    }
}
