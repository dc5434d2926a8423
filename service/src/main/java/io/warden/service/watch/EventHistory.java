package io.warden.service.watch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * The last transactions' events of this gateway, for resuming watches, kept whole per transaction
 * ({@link EventBatch}, whose wire form the live streams already made). It holds every event with a revision above
 * {@link #floor()}: the revision at which the mirror was last rebuilt, or, once more than {@code capacity} events are
 * kept, the revision of the newest transaction it dropped. A resume from revision {@code R >= floor} therefore misses
 * nothing.
 *
 * <p>Concurrency: not thread-safe; confined to the watch hub's thread. Bounded: at most {@code capacity} events, or one
 * transaction when a single one is larger.
 */
final class EventHistory {
    /** What a resumed watch is sent of one kept transaction: the events at {@code selected} (all when null). */
    record Replay(EventBatch batch, int[] selected) {
    }

    private final int capacity;
    private final ArrayDeque<EventBatch> batches = new ArrayDeque<>();
    private int events;
    private long floor;

    EventHistory(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("history capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
    }

    /** Forgets everything: from now on the history starts at {@code revision}. */
    void reset(long revision) {
        batches.clear();
        events = 0;
        floor = revision;
    }

    void add(EventBatch batch) {
        batches.addLast(batch);
        events += batch.events().size();
        while (events > capacity && batches.size() > 1) {
            EventBatch old = batches.removeFirst();
            events -= old.events().size();
            floor = Math.max(floor, old.revision());
        }
    }

    long floor() {
        return floor;
    }

    int size() {
        return events;
    }

    /** The kept transactions after {@code revision} with the events {@code filter} covers, or empty when some may be gone. */
    Optional<List<Replay>> after(long revision, WatchFilter filter) {
        if (revision < floor) {
            return Optional.empty();
        }
        List<Replay> out = new ArrayList<>();
        Iterator<EventBatch> newestFirst = batches.descendingIterator();
        while (newestFirst.hasNext()) {
            EventBatch b = newestFirst.next();
            if (b.revision() <= revision) {
                break;
            }
            int[] selected = select(b, filter);
            if (selected == null || selected.length > 0) {
                out.add(new Replay(b, selected));
            }
        }
        Collections.reverse(out);
        return Optional.of(out);
    }

    /** The indexes of the batch's events the filter covers; null for all of them. */
    static int[] select(EventBatch b, WatchFilter filter) {
        List<WatchEvent> list = b.events();
        int[] picked = new int[list.size()];
        int n = 0;
        for (int i = 0; i < list.size(); i++) {
            if (filter.matches(list.get(i))) {
                picked[n++] = i;
            }
        }
        return n == list.size() ? null : java.util.Arrays.copyOf(picked, n);
    }
}
