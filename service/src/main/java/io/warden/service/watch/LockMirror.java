package io.warden.service.watch;

import io.warden.service.api.LockView;
import io.warden.service.lock.QueueEntry;
import io.warden.service.lock.QueueNodeData;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * This gateway's copy of every lock queue in the cell, kept by the watch on {@code /locks}, and the events its changes
 * make. Pure: no I/O; {@link LockFeed} feeds it ZooKeeper's notifications in zxid order.
 *
 * <p>Telling an expiry from a release or cancel: the expiry {@code multi} first creates {@code /expired/{session}}, so
 * the notification of that marker arrives just before the deletions of the same transaction (same zxid); and a
 * lock-delay's holds are deleted together with {@code /lockdelay/{session}} (deleted last in that multi), so while that
 * record exists every deletion of the session's nodes is the end of its expiry.
 *
 * <p>After a rebuild from a full read ({@link #load}) the notifications that were already under way are replayed on
 * top; each lock remembers the zxid its read reflects ({@code pzxid}) and ignores older changes.
 *
 * <p>Concurrency: not thread-safe; confined to the watch hub's thread.
 */
final class LockMirror {
    /** A full read of the cell: per lock its queue and the pzxid of the read; the sessions with a lock-delay record. */
    record Snapshot(Map<String, LockRead> locks, Set<String> lockDelayed) {
    }

    record LockRead(long pzxid, List<MirroredLock.Node> nodes) {
    }

    private final Map<String, MirroredLock> locks = new HashMap<>();
    /** Per lock, the zxid its last full read reflects; changes at or before it are already in the mirror. */
    private final Map<String, Long> readAt = new HashMap<>();
    /** Sessions whose lock-delay record exists: their remaining nodes end their expiry when deleted. */
    private final Set<String> lockDelayed = new HashSet<>();
    /** The zxid of the last expiry marker seen, and the sessions it expired. */
    private long expiryZxid = -1;
    private final Set<String> expiring = new HashSet<>();

    /** Replaces everything with a full read. */
    void load(Snapshot snapshot) {
        locks.clear();
        readAt.clear();
        lockDelayed.clear();
        lockDelayed.addAll(snapshot.lockDelayed());
        expiryZxid = -1;
        expiring.clear();
        for (Map.Entry<String, LockRead> e : snapshot.locks().entrySet()) {
            readAt.put(e.getKey(), e.getValue().pzxid());
            if (e.getValue().nodes().isEmpty()) {
                continue;
            }
            MirroredLock lock = new MirroredLock(e.getKey());
            e.getValue().nodes().forEach(lock::load);
            locks.put(e.getKey(), lock);
        }
    }

    /** Every change up to now is newer than any full read: forget the read zxids. */
    void settled() {
        readAt.clear();
    }

    List<WatchEvent> created(String lock, QueueEntry entry, long zxid, long czxid, QueueNodeData data) {
        if (zxid <= readAt.getOrDefault(lock, 0L)) {
            return List.of();
        }
        return locks.computeIfAbsent(lock, MirroredLock::new).created(new MirroredLock.Node(entry, czxid, data), zxid);
    }

    List<WatchEvent> deleted(String lock, String node, long zxid) {
        MirroredLock l = locks.get(lock);
        if (l == null || zxid <= readAt.getOrDefault(lock, 0L)) {
            return List.of();
        }
        List<WatchEvent> events = l.deleted(node, zxid, n -> n.sessionId() != null
                && (lockDelayed.contains(n.sessionId()) || zxid == expiryZxid && expiring.contains(n.sessionId())));
        if (l.isEmpty()) {
            locks.remove(lock);
        }
        return events;
    }

    /** The expiry marker of {@code session} was created at {@code zxid} (before the expiry's deletions). */
    void expiring(String session, long zxid) {
        if (zxid != expiryZxid) {
            expiryZxid = zxid;
            expiring.clear();
        }
        expiring.add(session);
    }

    void lockDelayCreated(String session) {
        lockDelayed.add(session);
    }

    void lockDelayDeleted(String session) {
        lockDelayed.remove(session);
    }

    /** The state of the locks {@code filter} covers (a named lock also when free), sorted by name. */
    List<LockView> views(WatchFilter filter, long revision) {
        if (filter.name() != null) {
            MirroredLock l = locks.get(filter.name());
            return List.of(l != null ? l.view(revision, lockDelayed::contains)
                    : new LockView(filter.name(), LockView.LockMode.FREE, List.of(), List.of(), revision));
        }
        TreeMap<String, MirroredLock> sorted = new TreeMap<>();
        for (Map.Entry<String, MirroredLock> e : locks.entrySet()) {
            if (filter.matches(e.getKey())) {
                sorted.put(e.getKey(), e.getValue());
            }
        }
        List<LockView> views = new ArrayList<>(sorted.size());
        sorted.values().forEach(l -> views.add(l.view(revision, lockDelayed::contains)));
        return views;
    }

    /** Cell-wide: live locks (with at least one node), holds and waiting requests. O(locks) on the hub's thread. */
    Counts counts() {
        long holds = 0;
        long nodes = 0;
        for (MirroredLock l : locks.values()) {
            holds += l.holderCount();
            nodes += l.nodeCount();
        }
        return new Counts(locks.size(), holds, nodes - holds);
    }

    /** What {@link #counts()} returns. */
    record Counts(long locks, long holds, long waiters) {
    }

    int lockCount() {
        return locks.size();
    }
}
