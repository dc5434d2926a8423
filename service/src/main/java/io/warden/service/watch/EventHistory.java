package io.warden.service.watch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * The last events of this gateway, for resuming watches. It holds every event with a revision above {@link #floor()}:
 * the revision at which the mirror was last rebuilt, or, once the ring is full, the revision of the newest event it
 * dropped. A resume from revision {@code R >= floor} therefore misses nothing.
 *
 * <p>Concurrency: not thread-safe; confined to the watch hub's thread.
 */
final class EventHistory {
    private final int capacity;
    private final ArrayDeque<WatchEvent> events;
    private long floor;

    EventHistory(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("history capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        this.events = new ArrayDeque<>(Math.min(capacity, 1024));
    }

    /** Forgets everything: from now on the history starts at {@code revision}. */
    void reset(long revision) {
        events.clear();
        floor = revision;
    }

    void add(WatchEvent event) {
        if (events.size() == capacity) {
            floor = Math.max(floor, events.removeFirst().revision());
        }
        events.addLast(event);
    }

    long floor() {
        return floor;
    }

    int size() {
        return events.size();
    }

    /** The kept events after {@code revision} that {@code filter} covers, or empty when some may be gone. */
    Optional<List<WatchEvent>> after(long revision, WatchFilter filter) {
        if (revision < floor) {
            return Optional.empty();
        }
        List<WatchEvent> out = new ArrayList<>();
        Iterator<WatchEvent> newestFirst = events.descendingIterator();
        while (newestFirst.hasNext()) {
            WatchEvent e = newestFirst.next();
            if (e.revision() <= revision) {
                break;
            }
            if (filter.matches(e.name())) {
                out.add(e);
            }
        }
        Collections.reverse(out);
        return Optional.of(out);
    }
}
