package io.warden.it.support;

import java.util.ArrayList;
import java.util.List;

/**
 * What happened when, relative to the start of a test: faults, phases and problems, for failure messages and logs.
 *
 * <p>Concurrency: all state guarded by {@code this}.
 */
public final class Timeline {
    private final long start = System.nanoTime();
    private final List<String> events = new ArrayList<>();

    /** Records {@code event} at the current time and returns its offset in ms. */
    public synchronized long mark(String event) {
        long ms = (System.nanoTime() - start) / 1_000_000;
        events.add(String.format("%7d ms  %s", ms, event));
        return ms;
    }

    public synchronized List<String> events() {
        return List.copyOf(events);
    }

    @Override
    public synchronized String toString() {
        return String.join("\n", events);
    }
}
