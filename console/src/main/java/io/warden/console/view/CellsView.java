package io.warden.console.view;

import io.warden.console.model.CellInfo;
import java.util.List;

/**
 * The cells page: the cells the gateway serves, the default one first, as the backend listed them.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param asOf when the list was read (a cell's state has no revision)
 */
public record CellsView(List<CellInfo> cells, AsOf asOf) {
    public CellsView {
        cells = List.copyOf(cells);
    }

    /** Whether the gateway serves only its default cell (no cells or routes configured). */
    public boolean single() {
        return cells.size() == 1 && cells.get(0).isDefault();
    }

    /** The cells that do not serve now, in the backend's order. */
    public List<CellInfo> notServing() {
        return notServing(cells);
    }

    public static List<CellInfo> notServing(List<CellInfo> cells) {
        return cells.stream().filter(c -> !c.serving()).toList();
    }

    /**
     * The cell that serves {@code namespace}: the one whose routed namespaces list it, else the default one; null when
     * the list has neither.
     */
    public static CellInfo servingCell(List<CellInfo> cells, String namespace) {
        CellInfo fallback = null;
        for (CellInfo c : cells) {
            if (c.namespaces().contains(namespace)) {
                return c;
            }
            if (c.isDefault()) {
                fallback = c;
            }
        }
        return fallback;
    }
}
