package io.warden.service.queue;

import io.warden.service.api.LockView;
import io.warden.service.api.Mode;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * The queue of one lock, and the one place that decides who holds it: a pure function of the lock node's
 * sorted children (architecture: "who holds the lock is a pure function of the sorted children").
 * <ul>
 *   <li>an EXCLUSIVE entry holds when it is first;</li>
 *   <li>a SHARED entry holds when no EXCLUSIVE or SEMAPHORE entry is before it;</li>
 *   <li>a SEMAPHORE entry of N permits holds when fewer than N entries are before it and every one of them is a
 *   SEMAPHORE entry of N permits.</li>
 * </ul>
 * For locks these are exactly the rules of Curator's {@code InterProcessReadWriteLock}, and a semaphore entry is a
 * writer to Curator ({@link QueueEntry}), so Curator clients and Warden exclude each other on the same path. Entries of
 * different kinds (locks, or semaphores of other permits: {@link QueueEntry#agreesWith}) never hold together: the engine
 * withdraws a request that disagrees with the head ({@link #agreesWithHead}), and until it is gone the rules above keep
 * it and everything behind it from holding. A blocked lock entry waits for one entry only ({@link #blocker}): no herd. A
 * semaphore entry whose every predecessor agrees with it waits for a count ({@link #waitsForCount}): any of the entries
 * ahead may go first.
 *
 * <p><b>Sequence overflow: fail closed.</b> The order is the sequence suffix, which ZooKeeper takes from the lock
 * node's cversion, an {@code int} counting the creates of its children. At {@link #SEQUENCE_LIMIT} the server stops
 * counting, so every later child gets the suffix {@code 2147483647} (and, under concurrent creates, wrapped negative
 * ones such as {@code -2147483648}): their true order is lost. Such entries are <em>damaged</em>: an entry whose
 * sequence is negative or at the limit, or equal to another entry's. Damaged entries were made after every
 * undamaged one (ZooKeeper gives sequences in creation order until the limit), so they sort after them, and nothing
 * at or after the first damaged entry holds — never two holders because of a tie, at the price of a lock that grants
 * nothing new until the damaged entries go. The engine keeps Warden from getting there: it refuses new entries on a
 * lock node once its next sequence is within {@link #ADMISSION_MARGIN} of the limit ({@link #admits}), so the lock
 * drains, ZooKeeper reaps its empty CONTAINER node, and the name starts again at sequence 0.
 *
 * <p>Immutable.
 */
public final class LockQueue {
    /** The largest sequence suffix ZooKeeper can give ({@code Integer.MAX_VALUE}); from here on suffixes repeat. */
    public static final long SEQUENCE_LIMIT = Integer.MAX_VALUE;
    /** New entries are refused on a lock node whose next sequence is this close to {@link #SEQUENCE_LIMIT}. */
    public static final long ADMISSION_MARGIN = 1_000_000;

    private static final Comparator<QueueEntry> ORDER = Comparator.comparing((QueueEntry e) -> !inRange(e.sequence()))
            .thenComparingLong(QueueEntry::sequence).thenComparing(QueueEntry::node);

    private final List<QueueEntry> entries;
    /** Index of the first entry that is not SHARED (EXCLUSIVE or SEMAPHORE), or entries.size() when there is none. */
    private final int firstWriter;
    /** How many entries at the head agree with the first ({@link QueueEntry#agreesWith}); 0 when empty. */
    private final int headRun;
    /** Index of the first damaged entry (see the class comment), or entries.size() when there is none. */
    private final int firstDamaged;

    private LockQueue(List<QueueEntry> sorted) {
        this.entries = sorted;
        int first = sorted.size();
        for (int i = 0; i < sorted.size(); i++) {
            if (sorted.get(i).mode() != Mode.SHARED) {
                first = i;
                break;
            }
        }
        this.firstWriter = first;
        int run = 0;
        while (run < sorted.size() && sorted.get(run).agreesWith(sorted.get(0))) {
            run++;
        }
        this.headRun = run;
        int damaged = sorted.size();
        for (int i = 0; i < sorted.size(); i++) {
            if (!inRange(sorted.get(i).sequence()) || tied(sorted, i)) {
                damaged = i;
                break;
            }
        }
        this.firstDamaged = damaged;
    }

    /** The queue order: by sequence, damaged (out-of-range) sequences last, ties by name. */
    public static Comparator<QueueEntry> order() {
        return ORDER;
    }

    /**
     * How many entries hold, for entries already sorted in {@link #order()}: the same rule as {@link #holders()}, read
     * from the head only. It looks at the holders and at most two entries after them, so a caller that keeps its queue
     * sorted (the watch mirror) pays O(holders) per change, not a parse and sort of the whole queue (which, at 10,000
     * waiters, would re-sort all of them on every change).
     */
    public static int holderCount(Iterator<QueueEntry> sorted) {
        if (!sorted.hasNext()) {
            return 0;
        }
        QueueEntry previous = null;
        QueueEntry current = sorted.next();
        QueueEntry head = current;
        int index = 0;
        while (true) {
            QueueEntry next = sorted.hasNext() ? sorted.next() : null;
            boolean damaged = !inRange(current.sequence())
                    || previous != null && previous.sequence() == current.sequence()
                    || next != null && next.sequence() == current.sequence();
            if (damaged) {
                return index; // fail closed: nothing at or after the first damaged entry holds
            }
            if (index == 0 && current.mode() == Mode.EXCLUSIVE) {
                return 1;
            }
            boolean holds = index == 0 || (head.mode() == Mode.SHARED ? current.mode() == Mode.SHARED
                    : current.agreesWith(head) && index < head.permits());
            if (!holds) {
                return index;
            }
            index++;
            if (next == null) {
                return index;
            }
            previous = current;
            current = next;
        }
    }

    /** Builds the queue from a lock node's children; children that are not queue entries are ignored. */
    public static LockQueue of(List<String> children) {
        List<QueueEntry> sorted = new ArrayList<>(children.size());
        for (String child : children) {
            QueueEntry.parse(child).ifPresent(sorted::add);
        }
        sorted.sort(ORDER);
        return new LockQueue(List.copyOf(sorted));
    }

    /** Whether ZooKeeper can have given this sequence in creation order (before its counter reached the limit). */
    private static boolean inRange(long sequence) {
        return sequence >= 0 && sequence < SEQUENCE_LIMIT;
    }

    /** Whether the entry at {@code i} of a sorted list shares its sequence with a neighbour. */
    private static boolean tied(List<QueueEntry> sorted, int i) {
        long seq = sorted.get(i).sequence();
        return i > 0 && sorted.get(i - 1).sequence() == seq || i + 1 < sorted.size() && sorted.get(i + 1).sequence() == seq;
    }

    /** Whether a new entry with this sequence may stay: far enough below the limit that the lock can drain first. */
    public static boolean admits(long sequence) {
        return sequence >= 0 && sequence < SEQUENCE_LIMIT - ADMISSION_MARGIN;
    }

    /**
     * The sequence ZooKeeper gives the next child of a node, from the node's stat as clients see it: the server keeps
     * the count of creates and reports {@code cversion = 2 * creates - children} in {@code int} arithmetic
     * ({@code DataNode.copyStat}), so the count is recovered modulo 2^32.
     */
    public static long nextSequence(int cversion, int numChildren) {
        return Integer.toUnsignedLong(cversion + numChildren) / 2;
    }

    public List<QueueEntry> entries() {
        return entries;
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    public int indexOf(String node) {
        for (int i = 0; i < entries.size(); i++) {
            if (entries.get(i).node().equals(node)) {
                return i;
            }
        }
        return -1;
    }

    /** The entry whose protection id is {@code id}, if queued. */
    public Optional<QueueEntry> byId(String id) {
        for (QueueEntry e : entries) {
            if (id.equals(e.id())) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }

    /**
     * Whether a lock request of {@code mode} added to this queue now (last, as a new node is) would hold at once: an
     * EXCLUSIVE one only on an empty queue, a SHARED one only when every entry is an undamaged SHARED one.
     */
    public boolean wouldHoldAtOnce(Mode mode) {
        return wouldHoldAtOnce(mode, 0);
    }

    /**
     * As {@link #wouldHoldAtOnce(Mode)}; a SEMAPHORE request of {@code permits} only when every entry is an undamaged
     * semaphore entry of as many permits, and fewer than that many.
     */
    public boolean wouldHoldAtOnce(Mode mode, int permits) {
        return switch (mode) {
            case EXCLUSIVE -> entries.isEmpty();
            case SHARED -> firstWriter == entries.size() && firstDamaged == entries.size();
            case SEMAPHORE -> entries.isEmpty() || firstDamaged == entries.size() && headRun == entries.size()
                    && entries.get(0).permits() == permits && entries.size() < permits;
        };
    }

    /** Whether the entry at {@code index} holds the lock. */
    public boolean holds(int index) {
        if (index >= firstDamaged) {
            return false; // fail closed: see the class comment
        }
        QueueEntry e = entries.get(index);
        return switch (e.mode()) {
            case EXCLUSIVE -> index == 0;
            case SHARED -> index < firstWriter;
            case SEMAPHORE -> index < headRun && index < e.permits();
        };
    }

    /**
     * Whether the entry at {@code index} is of the kind of the queue's first entry ({@link QueueEntry#agreesWith}). The
     * engine withdraws a request of its own that does not: a name's requests must agree while it has entries.
     */
    public boolean agreesWithHead(int index) {
        return entries.get(index).agreesWith(entries.get(0));
    }

    /**
     * Whether the entry at {@code index} is a semaphore entry that waits only for its turn: every entry before it
     * agrees with it, and its permits' worth of them hold. It holds once fewer than that many are ahead, whichever of
     * them goes, so it has no one {@link #blocker}: whoever waits for it watches the whole queue.
     */
    public boolean waitsForCount(int index) {
        QueueEntry e = entries.get(index);
        return e.mode() == Mode.SEMAPHORE && index < firstDamaged && !holds(index) && index < headRun;
    }

    /**
     * The one entry that the blocked entry at {@code index} waits for: for EXCLUSIVE the entry just before it,
     * for SHARED the nearest EXCLUSIVE or SEMAPHORE entry before it, for SEMAPHORE the nearest entry before it of
     * another kind. An entry blocked only by damage (see the class comment) waits for the entry it is tied with, else for
     * the one just before it, so it looks again when the damage may be gone. Empty when the entry holds, when it
     * {@link #waitsForCount}, or when a damaged entry has nothing to wait for (alone, it can never hold).
     */
    public Optional<QueueEntry> blocker(int index) {
        if (holds(index) || waitsForCount(index)) {
            return Optional.empty();
        }
        QueueEntry e = entries.get(index);
        if (e.mode() == Mode.EXCLUSIVE && index > 0) {
            return Optional.of(entries.get(index - 1));
        }
        for (int i = index - 1; i >= 0 && e.mode() == Mode.SHARED; i--) {
            if (entries.get(i).mode() != Mode.SHARED) {
                return Optional.of(entries.get(i));
            }
        }
        for (int i = index - 1; i >= 0 && e.mode() == Mode.SEMAPHORE; i--) {
            if (!entries.get(i).agreesWith(e)) {
                return Optional.of(entries.get(i));
            }
        }
        if (index < firstDamaged) {
            throw new IllegalStateException("an undamaged entry that does not hold must have an entry of another kind before it");
        }
        if (index + 1 < entries.size() && entries.get(index + 1).sequence() == e.sequence()) {
            return Optional.of(entries.get(index + 1));
        }
        return index > 0 ? Optional.of(entries.get(index - 1)) : Optional.empty();
    }

    /** The entries that hold the lock, in queue order (always a prefix of the queue). */
    public List<QueueEntry> holders() {
        if (entries.isEmpty() || firstDamaged == 0) {
            return List.of();
        }
        QueueEntry head = entries.get(0);
        return switch (head.mode()) {
            case EXCLUSIVE -> List.of(head);
            case SHARED -> entries.subList(0, Math.min(firstWriter, firstDamaged));
            case SEMAPHORE -> entries.subList(0, Math.min(Math.min(headRun, head.permits()), firstDamaged));
        };
    }

    /** The entries that wait, in queue order. */
    public List<QueueEntry> waiters() {
        return entries.subList(holders().size(), entries.size());
    }

    /** FREE when nobody holds (also when entries wait only because of damage). */
    public LockView.LockMode mode() {
        List<QueueEntry> holders = holders();
        if (holders.isEmpty()) {
            return LockView.LockMode.FREE;
        }
        return switch (holders.get(0).mode()) {
            case EXCLUSIVE -> LockView.LockMode.EXCLUSIVE;
            case SHARED -> LockView.LockMode.SHARED;
            case SEMAPHORE -> LockView.LockMode.SEMAPHORE;
        };
    }
}
