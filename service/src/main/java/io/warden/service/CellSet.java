package io.warden.service;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The cells a gateway serves, by name, the default first: those of its settings from the start, and cells added while
 * it runs (the cell directory, {@link CellAdditions}). Cells are only ever added, never removed or replaced.
 *
 * <p>Concurrency: the map is replaced whole (copy on write) under the instance's lock and read without one, so a reader
 * sees one consistent set. Listeners are told of an added cell on the adding thread, after it is in the set. Bounded by
 * the settings' cells plus the directory's ({@link io.warden.service.cell.CellDirectory#MAX_ENTRIES}).
 */
final class CellSet {
    private volatile Map<String, CellRuntime> byName;
    private final List<Consumer<CellRuntime>> listeners = new CopyOnWriteArrayList<>();

    CellSet(List<CellRuntime> initial) {
        Map<String, CellRuntime> m = new LinkedHashMap<>();
        for (CellRuntime r : initial) {
            m.put(r.name(), r);
        }
        if (!m.containsKey(CellRuntime.DEFAULT)) {
            throw new IllegalArgumentException("no default cell");
        }
        this.byName = Collections.unmodifiableMap(m);
    }

    CellRuntime home() {
        return byName.get(CellRuntime.DEFAULT);
    }

    /** The cell named {@code name}, or null. */
    CellRuntime get(String name) {
        return byName.get(name);
    }

    /** Every cell now, the default first. */
    Collection<CellRuntime> values() {
        return byName.values();
    }

    Set<String> keySet() {
        return byName.keySet();
    }

    int size() {
        return byName.size();
    }

    /** Adds {@code cell}; false (and nothing changes) when a cell of its name is there already. */
    boolean add(CellRuntime cell) {
        synchronized (this) {
            if (byName.containsKey(cell.name())) {
                return false;
            }
            Map<String, CellRuntime> m = new LinkedHashMap<>(byName);
            m.put(cell.name(), cell);
            byName = Collections.unmodifiableMap(m);
        }
        for (Consumer<CellRuntime> l : listeners) {
            l.accept(cell);
        }
        return true;
    }

    /** Told of every cell added from now on. */
    void onAdded(Consumer<CellRuntime> listener) {
        listeners.add(listener);
    }

    /** Every cell now, as a list (the default first). */
    List<CellRuntime> list() {
        return new ArrayList<>(byName.values());
    }
}
