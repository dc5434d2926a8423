package io.warden.service.watch;

import io.warden.service.api.LockView;
import io.warden.service.cell.Tokens;
import io.warden.service.queue.QueueEntry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * This gateway's copy of every lock queue in the cell, kept by the watch on {@code /locks}, and the events its changes
 * make. Pure: no I/O; {@link LockFeed} feeds it whole ZooKeeper transactions in zxid order ({@link #apply}).
 *
 * <p>Events per transaction: each lock's events are derived from its state before and after the whole transaction
 * ({@link MirroredLock#apply}), so a request that the transaction removed is never GRANTED on the way, and a session
 * close that held L and waited on L with T waiting is RELEASED(hold), CANCELLED(wait), GRANTED(T) — what the close
 * reply says. Locks come in the order the transaction first touched them.
 *
 * <p>Telling an expiry from a release or cancel: the expiry {@code multi} creates {@code /expired/{session}} in the same
 * transaction, and a lock-delay's holds are deleted together with {@code /lockdelay/{session}} (the record existed
 * before that transaction). A deletion is EXPIRED when its session's marker is created by the same transaction, or its
 * session had a lock-delay record before it.
 *
 * <p>After a rebuild from a full read ({@link #load}) the transactions that were already under way are replayed on
 * top; each lock remembers the zxid its read reflects ({@code pzxid}) and ignores older changes.
 *
 * <p><b>Locks too large to read.</b> A lock the rebuild could not list (more entries than the gateway reads in one
 * ZooKeeper reply) is loaded as a count: {@link MirroredLock#unlisted()} entries the mirror does not have. Its later
 * changes are applied (creations are known nodes, deletions of nodes the mirror does not have count down), but none of
 * its events are published, since who holds it is not known; its views say it is too large. When the last of the
 * entries it did not have is gone (or its node is removed), its queue is exact again: the lock is named by
 * {@link #drainCompleted()}, and the hub gives the watches that cover it a RESYNC. A lock whose node has children
 * that are not queue nodes stays too large until the next rebuild.
 *
 * <p><b>Size.</b> {@link #estimatedBytes()} is the heap the mirror takes, estimated from its locks (with their names'
 * lengths), queue nodes and sessions ({@link #estimate}; measured by {@code MirrorSizeTest}); {@link #overBudget()} once
 * it passes {@code maxBytes} (watch-mirror-bytes). The feed then drops the mirror. Locks with at least
 * {@code reportFrom} entries are also kept in {@link #large}, which other threads read ({@link #entriesIfLarge}).
 *
 * <p>Concurrency: not thread-safe; confined to the watch hub's thread, except {@link #large}, a concurrent map written
 * on the hub's thread and read from any (bounded by the locks with at least {@code reportFrom} entries). Bounded by the
 * cell's live locks and queue nodes, and by {@code maxBytes} through the feed (docs/operations.md, "Sizing").
 */
final class LockMirror {
    /** A full read of the cell: per lock its queue and the pzxid of the read; the sessions with a lock-delay record. */
    record Snapshot(Map<String, LockRead> locks, Set<String> lockDelayed) {
    }

    /**
     * One lock as a full read found it: the pzxid the read reflects and its queue nodes; or, for a lock too large to
     * list, no nodes and {@code unlisted} entries.
     */
    record LockRead(long pzxid, List<MirroredLock.Node> nodes, int unlisted) {
        LockRead(long pzxid, List<MirroredLock.Node> nodes) {
            this(pzxid, nodes, 0);
        }
    }

    /*
     * The heap the mirror takes, estimated (MirrorSizeTest measures it and checks the estimate against it): per lock its
     * map entries, the lock and its sorted queue, plus its name (one byte a character: names are ASCII, and one String
     * instance serves the map key, the lock and the session index); per queue node its entry, the node name (58
     * characters), its record and the tree entry; per session with nodes its index entry and id.
     */
    static final int LOCK_BYTES = 260;
    static final int NODE_BYTES = 250;
    static final int SESSION_BYTES = 130;
    /** An empty lock node in a full read (not reaped yet): only the read's zxid is kept for it, until the mirror settles. */
    static final int READ_AT_BYTES = 100;

    /** What a lock with this name, {@code nodes} queue nodes and {@code sessions} new sessions adds to the mirror. */
    static long estimate(String name, int nodes, int sessions) {
        return LOCK_BYTES + name.length() + (long) nodes * NODE_BYTES + (long) sessions * SESSION_BYTES;
    }

    private final int reportFrom;
    private final long maxBytes;
    /** Locks with at least {@code reportFrom} entries, with how many: read by other threads (see the class comment). */
    private final Map<String, Integer> large = new java.util.concurrent.ConcurrentHashMap<>();
    /** Locks too large to read, whose queue the mirror does not have whole. */
    private final TreeSet<String> partial = new TreeSet<>();
    /** Locks whose queue became exact again since the last {@link #drainCompleted()}. */
    private final List<String> completed = new ArrayList<>();
    /** Queue nodes held, over all locks, and the characters of the locks' names: for {@link #estimatedBytes()}. */
    private long nodeCount;
    private long nameChars;

    /** A mirror with no bound and no report of large locks (tests). */
    LockMirror() {
        this(Integer.MAX_VALUE, 0);
    }

    /** A mirror with no bound (tests). */
    LockMirror(int reportFrom) {
        this(reportFrom, 0);
    }

    /**
     * @param reportFrom locks with at least this many entries are kept in {@link #entriesIfLarge}
     * @param maxBytes   the bound of {@link #overBudget()}, in estimated bytes; 0 for none
     */
    LockMirror(int reportFrom, long maxBytes) {
        this.reportFrom = reportFrom;
        this.maxBytes = maxBytes;
    }

    /** By name, sorted: a prefix's locks are one range (a RESYNC costs the locks it shows, not every lock). */
    private final TreeMap<String, MirroredLock> locks = new TreeMap<>();
    /** Per lock, the zxid its last full read reflects; changes at or before it are already in the mirror. */
    private final Map<String, Long> readAt = new HashMap<>();
    /**
     * Locks whose exact queue has waiters: the only ones with edges in the wait-for graph ({@link DeadlockGraph}), so a
     * computation of it walks them, not every lock. Bounded by the locks.
     */
    private final Set<String> contended = new HashSet<>();
    /** Sessions whose lock-delay record exists: their remaining nodes end their expiry when deleted. */
    private final Set<String> lockDelayed = new HashSet<>();
    /**
     * Per session, the locks where it has queue nodes, with how many: a session's RESYNC (its client's watch of its own
     * holds, after a rebuild or past the history) costs that session's locks, not a walk of every lock. Kept from the
     * events (QUEUED adds a node, RELEASED, CANCELLED and EXPIRED remove one), so it is exactly the queues' content.
     * A value is the lock's name while the session has one node in all (the usual case, and no map to pay for: about
     * 60 bytes per such session instead of 160), else a map of lock name to node count.
     */
    private final Map<String, Object> bySession = new HashMap<>();
    /** Locks looked at by {@link #views} (tests: what a RESYNC costs). */
    private long locksExamined;
    /** A node's token from its czxid (the cell's token floor added); volatile: the loader reads it on Curator's threads. */
    private volatile Tokens tokens = Tokens.CZXID;

    /** Sets how a node's token is made from its czxid (before the first {@link #load}). */
    void tokens(Tokens tokens) {
        this.tokens = tokens;
    }

    /**
     * The token of a node made at {@code czxid}. Best effort: a floor raise this gateway has not read yet is missing, but
     * the mirror is rebuilt, after the floor has been read again, before anything it holds is shown (see LockFeed).
     */
    long token(long czxid) {
        return tokens.bestEffort(czxid);
    }

    /** Replaces everything with a full read. */
    void load(Snapshot snapshot) {
        clear();
        lockDelayed.addAll(snapshot.lockDelayed());
        for (Map.Entry<String, LockRead> e : snapshot.locks().entrySet()) {
            String name = e.getKey();
            LockRead read = e.getValue();
            readAt.put(name, read.pzxid());
            if (read.nodes().isEmpty() && read.unlisted() == 0) {
                continue;
            }
            MirroredLock lock = new MirroredLock(name, read.unlisted());
            for (MirroredLock.Node node : read.nodes()) {
                lock.load(node);
                index(node.sessionId(), name, 1);
            }
            locks.put(name, lock);
            nameChars += name.length();
            nodeCount += lock.nodeCount();
            if (lock.partial()) {
                partial.add(name);
            }
            report(name, lock);
            contention(name, lock);
        }
    }

    /** Keeps {@link #contended} up to date for the lock ({@code null}: gone). */
    private void contention(String name, MirroredLock lock) {
        if (lock != null && !lock.partial() && lock.nodeCount() > lock.holderCount()) {
            contended.add(name);
        } else {
            contended.remove(name);
        }
    }

    /** The locks with waiters whose queue the mirror has whole. On the hub's thread. */
    List<MirroredLock> contendedLocks() {
        List<MirroredLock> out = new ArrayList<>(contended.size());
        for (String name : contended) {
            out.add(locks.get(name));
        }
        return out;
    }

    /** Every queue node of the request {@code uuid} of {@code session}, by lock (one per name; several for a multi-lock). */
    List<Map.Entry<String, MirroredLock.Node>> nodesOfRequest(String session, String uuid) {
        List<Map.Entry<String, MirroredLock.Node>> out = new ArrayList<>();
        for (String name : locksOf(session)) {
            MirroredLock lock = locks.get(name);
            if (lock == null) {
                continue;
            }
            for (MirroredLock.Node n : lock.nodes()) {
                if (session.equals(n.sessionId()) && uuid.equals(n.request())) {
                    out.add(Map.entry(name, n));
                }
            }
        }
        return out;
    }

    /** Forgets everything (the mirror is dropped, or replaced by a full read). */
    void clear() {
        locks.clear();
        readAt.clear();
        lockDelayed.clear();
        bySession.clear();
        large.clear();
        contended.clear();
        partial.clear();
        completed.clear();
        nodeCount = 0;
        nameChars = 0;
    }

    /** The heap the mirror takes, estimated (see {@link #estimate}). O(1). */
    long estimatedBytes() {
        return (long) locks.size() * LOCK_BYTES + nameChars + nodeCount * NODE_BYTES + (long) bySession.size() * SESSION_BYTES;
    }

    /** What a full read would take once loaded, estimated (an upper bound on its sessions). */
    static long estimatedBytes(Snapshot snapshot) {
        long bytes = 0;
        for (Map.Entry<String, LockRead> e : snapshot.locks().entrySet()) {
            int nodes = e.getValue().nodes().size();
            bytes += nodes == 0 && e.getValue().unlisted() == 0 ? READ_AT_BYTES : estimate(e.getKey(), nodes, nodes);
        }
        return bytes;
    }

    /** Whether the mirror takes more than its bound. */
    boolean overBudget() {
        return maxBytes > 0 && estimatedBytes() > maxBytes;
    }

    /**
     * The lock's entries when it has at least {@code reportFrom} (as of the last transaction applied), else -1. Any
     * thread.
     */
    int entriesIfLarge(String name) {
        Integer n = large.get(name);
        return n == null ? -1 : n;
    }

    int reportFrom() {
        return reportFrom;
    }

    /** The locks whose queue became exact again (the last entry the mirror did not have is gone) since the last call. */
    List<String> drainCompleted() {
        if (completed.isEmpty()) {
            return List.of();
        }
        List<String> out = List.copyOf(completed);
        completed.clear();
        return out;
    }

    private void report(String name, MirroredLock lock) {
        int entries = lock == null ? 0 : lock.entries();
        if (entries >= reportFrom) {
            large.put(name, entries);
        } else if (!large.isEmpty()) {
            large.remove(name);
        }
    }

    /** Every change up to now is newer than any full read: forget the read zxids. */
    void settled() {
        readAt.clear();
    }

    /** Applies one whole transaction; its events in order (see the class comment). */
    List<WatchEvent> apply(Transaction t) {
        List<WatchEvent> events = new ArrayList<>();
        for (Map.Entry<String, Transaction.LockChange> e : t.locks.entrySet()) {
            String name = e.getKey();
            if (t.zxid <= readAt.getOrDefault(name, 0L)) {
                continue; // the rebuild's read of this lock already reflects the transaction
            }
            Transaction.LockChange change = e.getValue();
            MirroredLock lock = locks.get(name);
            if (lock == null) {
                if (change.created().isEmpty()) {
                    continue;
                }
                lock = new MirroredLock(name, 0);
                locks.put(name, lock);
                nameChars += name.length();
            }
            boolean wasPartial = lock.partial();
            int nodesBefore = lock.nodeCount();
            List<MirroredLock.Node> created = new ArrayList<>(change.created().size());
            for (QueueEntry entry : change.created()) {
                // The token of a node is its czxid, the zxid of the transaction that created it, plus the token floor.
                String session = entry.id() == null ? null : t.sessionsByRequest.get(entry.id());
                String client = session == null ? null : t.clientsByRequest.get(entry.id());
                boolean fail = entry.id() != null && t.failOnDeadlock.contains(entry.id());
                created.add(new MirroredLock.Node(entry, token(t.zxid), session, client, fail));
            }
            List<WatchEvent> lockEvents = lock.apply(t.zxid, created, change.deleted(), change.changed(), n -> n.sessionId() != null
                    && (t.expiring.contains(n.sessionId()) || lockDelayed.contains(n.sessionId())));
            for (WatchEvent ev : lockEvents) {
                switch (ev.type()) {
                    case QUEUED -> index(ev.sessionId(), name, 1);
                    case RELEASED, CANCELLED, EXPIRED -> index(ev.sessionId(), name, -1);
                    default -> {
                        // GRANTED: the node was there already
                    }
                }
            }
            nodeCount += lock.nodeCount() - nodesBefore;
            if (!wasPartial) {
                events.addAll(lockEvents);
            } else if (!lock.partial()) {
                // The last entry the mirror did not have is gone: exact again (its events resume after a RESYNC).
                partial.remove(name);
                completed.add(name);
            }
            if (lock.isEmpty()) {
                locks.remove(name);
                nameChars -= name.length();
            }
            report(name, lock.isEmpty() ? null : lock);
            contention(name, lock.isEmpty() ? null : lock);
        }
        for (String name : t.lockNodesDeleted) {
            // A lock node goes only when it has no children: a lock the mirror did not have whole is now empty.
            MirroredLock lock = locks.get(name);
            if (lock != null && lock.partial() && t.zxid > readAt.getOrDefault(name, 0L)) {
                nodeCount -= lock.nodeCount();
                nameChars -= name.length();
                locks.remove(name);
                partial.remove(name);
                completed.add(name);
                report(name, null);
                contention(name, null);
            }
        }
        // After the events: a deletion is judged by whether the lock-delay record existed before the transaction.
        lockDelayed.removeAll(t.lockDelaysDeleted);
        lockDelayed.addAll(t.lockDelaysCreated);
        return events;
    }

    /** One more ({@code +1}) or one fewer ({@code -1}) queue node of {@code session} on {@code lock}. */
    @SuppressWarnings("unchecked")
    private void index(String session, String lock, int delta) {
        if (session == null) {
            return; // not Warden's node (a plain Curator client's)
        }
        Object own = bySession.get(session);
        if (delta > 0) {
            if (own == null) {
                bySession.put(session, lock);
                return;
            }
            Map<String, Integer> counts = own instanceof String one ? new HashMap<>(Map.of(one, 1)) : (Map<String, Integer>) own;
            counts.merge(lock, 1, Integer::sum);
            bySession.put(session, counts);
            return;
        }
        if (own instanceof String one) {
            if (one.equals(lock)) {
                bySession.remove(session);
            }
        } else if (own != null) {
            Map<String, Integer> counts = (Map<String, Integer>) own;
            counts.computeIfPresent(lock, (k, n) -> n <= 1 ? null : n - 1);
            if (counts.isEmpty()) {
                bySession.remove(session);
            }
        }
    }

    /** The names of the locks where {@code session} has queue nodes. */
    @SuppressWarnings("unchecked")
    private Set<String> locksOf(String session) {
        Object own = bySession.get(session);
        return own == null ? Set.of() : own instanceof String one ? Set.of(one) : ((Map<String, Integer>) own).keySet();
    }

    /** The state of the locks {@code filter} covers (a named lock also when free), sorted by name. */
    List<LockView> views(WatchFilter filter, long revision) {
        if (filter.name() != null) {
            MirroredLock l = locks.get(filter.name());
            if (filter.sessionId() != null) {
                boolean involved = locksOf(filter.sessionId()).contains(filter.name()) || partial.contains(filter.name());
                return l != null && involved ? List.of(l.view(revision, lockDelayed::contains)) : List.of();
            }
            return List.of(l != null ? l.view(revision, lockDelayed::contains)
                    : new LockView(filter.name(), LockView.LockMode.FREE, List.of(), List.of(), revision));
        }
        List<LockView> views = new ArrayList<>();
        if (filter.sessionId() != null) {
            // A session's own view: its locks only (bySession), however many locks the cell has; and every lock too
            // large to read that the filter covers, since the session may have entries there the mirror does not know.
            TreeSet<String> names = new TreeSet<>(locksOf(filter.sessionId()));
            names.addAll(partial);
            for (String name : names) {
                locksExamined++;
                MirroredLock l = locks.get(name);
                if (l != null && filter.matches(name)) {
                    views.add(l.view(revision, lockDelayed::contains));
                }
            }
            return views;
        }
        String from = filter.rangeStart();
        for (Map.Entry<String, MirroredLock> e : locks.tailMap(from, true).entrySet()) {
            if (!e.getKey().startsWith(from)) {
                break;
            }
            locksExamined++;
            if (filter.matches(e.getKey())) {
                views.add(e.getValue().view(revision, lockDelayed::contains));
            }
        }
        return views;
    }

    /** Cell-wide: live locks (with at least one node), holds and waiting requests. O(locks) on the hub's thread. */
    Counts counts() {
        long holds = 0;
        long nodes = 0;
        for (MirroredLock l : locks.values()) {
            if (l.partial()) {
                continue; // who holds it is not known: counted as a lock only
            }
            holds += l.holderCount();
            nodes += l.nodeCount();
        }
        return new Counts(locks.size(), holds, nodes - holds);
    }

    /** Locks too large to read, whose queue the mirror does not have whole. */
    int partialCount() {
        return partial.size();
    }

    /** What {@link #counts()} returns. */
    record Counts(long locks, long holds, long waiters) {
    }

    int lockCount() {
        return locks.size();
    }

    /** Sessions with at least one queue node (the size of the session index). */
    int sessionCount() {
        return bySession.size();
    }

    long locksExamined() {
        return locksExamined;
    }
}
