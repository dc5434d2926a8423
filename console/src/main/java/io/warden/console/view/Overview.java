package io.warden.console.view;

import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.model.QueuedRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The overview's numbers, computed from one snapshot: per-namespace counts, the locks held longest and the locks
 * whose oldest waiter has waited longest.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param namespaces     sorted by name
 * @param longestHeld    at most {@link #TOP}, oldest hold first (ties by name)
 * @param longestWaiting at most {@link #TOP}, oldest waiter first (ties by name)
 * @param sessions       every session of the cell, idle ones included
 * @param snapshot       when and at which revision the numbers were read
 * @param unreadCells    cells whose locks could not be read: not in these numbers
 */
public record Overview(List<NamespaceCount> namespaces, List<LockRow> longestHeld, List<LockRow> longestWaiting,
                       int locks, int holders, int waiters, int sessions, AsOf snapshot, List<String> unreadCells) {
    public static final int TOP = 10;

    public Overview {
        namespaces = List.copyOf(namespaces);
        longestHeld = List.copyOf(longestHeld);
        longestWaiting = List.copyOf(longestWaiting);
        unreadCells = List.copyOf(unreadCells);
    }

    public static Overview of(CellSnapshot cell, java.time.Instant now) {
        Map<String, int[]> counts = new TreeMap<>();      // namespace -> {locks, holders, waiters}
        Map<String, Set<String>> sessions = new TreeMap<>();
        List<LockRow> rows = new ArrayList<>(cell.locks().size());
        int holders = 0;
        int waiters = 0;
        for (LockState lock : cell.locks()) {
            int[] c = counts.computeIfAbsent(lock.namespace(), k -> new int[3]);
            Set<String> ids = sessions.computeIfAbsent(lock.namespace(), k -> new HashSet<>());
            c[0]++;
            for (QueuedRequest r : lock.queue()) {
                c[r.holds() ? 1 : 2]++;
                if (r.sessionId() != null) {
                    ids.add(r.sessionId());
                }
            }
            LockRow row = LockRow.of(lock);
            holders += row.holders();
            waiters += row.waiters();
            rows.add(row);
        }
        List<NamespaceCount> namespaces = counts.entrySet().stream()
                .map(e -> new NamespaceCount(e.getKey(), e.getValue()[0], e.getValue()[1], e.getValue()[2],
                        sessions.get(e.getKey()).size()))
                .toList();
        List<LockRow> longestHeld = rows.stream().filter(r -> r.heldSince() != null)
                .sorted(Comparator.comparing(LockRow::heldSince).thenComparing(LockRow::name))
                .limit(TOP).toList();
        List<LockRow> longestWaiting = rows.stream().filter(r -> r.oldestWaitSince() != null)
                .sorted(Comparator.comparing(LockRow::oldestWaitSince).thenComparing(LockRow::name))
                .limit(TOP).toList();
        return new Overview(namespaces, longestHeld, longestWaiting, rows.size(), holders, waiters,
                cell.sessions().size(), AsOf.of(cell, now), cell.unreadCells());
    }
}
