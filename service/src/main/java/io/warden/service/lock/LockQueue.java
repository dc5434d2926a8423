package io.warden.service.lock;

import io.warden.service.api.LockView;
import io.warden.service.api.Mode;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The queue of one lock, and the one place that decides who holds it: a pure function of the lock node's
 * sorted children (architecture: "who holds the lock is a pure function of the sorted children").
 * <ul>
 *   <li>an EXCLUSIVE entry holds when it is first;</li>
 *   <li>a SHARED entry holds when no EXCLUSIVE entry is before it.</li>
 * </ul>
 * These are exactly the rules of Curator's {@code InterProcessReadWriteLock}, so Curator clients and Warden
 * exclude each other on the same path. A blocked entry waits for one entry only ({@link #blocker}): no herd.
 *
 * <p>Immutable.
 */
public final class LockQueue {
    private final List<QueueEntry> entries;
    /** Index of the first EXCLUSIVE entry, or entries.size() when there is none. */
    private final int firstExclusive;

    private LockQueue(List<QueueEntry> sorted) {
        this.entries = sorted;
        int first = sorted.size();
        for (int i = 0; i < sorted.size(); i++) {
            if (sorted.get(i).mode() == Mode.EXCLUSIVE) {
                first = i;
                break;
            }
        }
        this.firstExclusive = first;
    }

    /** Builds the queue from a lock node's children; children that are not queue entries are ignored. */
    public static LockQueue of(List<String> children) {
        List<QueueEntry> sorted = new ArrayList<>(children.size());
        for (String child : children) {
            QueueEntry.parse(child).ifPresent(sorted::add);
        }
        sorted.sort(Comparator.comparingLong(QueueEntry::sequence).thenComparing(QueueEntry::node));
        return new LockQueue(List.copyOf(sorted));
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

    /** Whether the entry at {@code index} holds the lock. */
    public boolean holds(int index) {
        QueueEntry e = entries.get(index);
        return e.mode() == Mode.EXCLUSIVE ? index == 0 : index < firstExclusive;
    }

    /**
     * The one entry that the blocked entry at {@code index} waits for: for EXCLUSIVE the entry just before it,
     * for SHARED the nearest EXCLUSIVE entry before it. Empty when the entry holds.
     */
    public Optional<QueueEntry> blocker(int index) {
        if (holds(index)) {
            return Optional.empty();
        }
        QueueEntry e = entries.get(index);
        if (e.mode() == Mode.EXCLUSIVE) {
            return Optional.of(entries.get(index - 1));
        }
        for (int i = index - 1; i >= 0; i--) {
            if (entries.get(i).mode() == Mode.EXCLUSIVE) {
                return Optional.of(entries.get(i));
            }
        }
        throw new IllegalStateException("a SHARED entry that does not hold must have an EXCLUSIVE entry before it");
    }

    /** The entries that hold the lock, in queue order. */
    public List<QueueEntry> holders() {
        if (entries.isEmpty()) {
            return List.of();
        }
        if (firstExclusive == 0) {
            return List.of(entries.get(0));
        }
        return entries.subList(0, firstExclusive);
    }

    /** The entries that wait, in queue order. */
    public List<QueueEntry> waiters() {
        return entries.subList(holders().size(), entries.size());
    }

    public LockView.LockMode mode() {
        if (entries.isEmpty()) {
            return LockView.LockMode.FREE;
        }
        return entries.get(0).mode() == Mode.EXCLUSIVE ? LockView.LockMode.EXCLUSIVE : LockView.LockMode.SHARED;
    }
}
