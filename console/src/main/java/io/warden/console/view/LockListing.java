package io.warden.console.view;

import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One page of a namespace's live locks: filtered by name prefix, sorted by name, continued after a cursor.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param prefix    the full-name prefix applied ({@code payments/inv}), or empty for all of the namespace
 * @param after     the cursor this page continues after, or empty for the first page
 * @param matching  how many locks of the namespace match the prefix, on all pages
 * @param nextAfter the cursor of the next page, or null on the last
 */
public record LockListing(String namespace, String prefix, String after, int limit, List<LockRow> rows,
                          int matching, String nextAfter, AsOf snapshot) {
    public static final int DEFAULT_LIMIT = 50;
    public static final int MAX_LIMIT = 500;

    public LockListing {
        rows = List.copyOf(rows);
    }

    /**
     * Parses the {@code limit} parameter: absent or blank means {@link #DEFAULT_LIMIT}.
     *
     * @throws InvalidInput naming {@code limit} and the allowed range when it is not an integer from 1 to
     *                      {@link #MAX_LIMIT}
     */
    public static int parseLimit(String raw) {
        return Limits.parse(raw, DEFAULT_LIMIT, MAX_LIMIT);
    }

    /**
     * The full-name prefix a user meant: {@code payments/inv} as is; {@code inv} typed on the page of namespace
     * {@code payments} as {@code payments/inv}; the namespace alone (or nothing) as no filter.
     */
    public static String fullPrefix(String namespace, String prefix) {
        String p = prefix == null ? "" : prefix.trim();
        if (p.isEmpty() || p.equals(namespace) || p.equals(namespace + "/")) {
            return "";
        }
        return p.startsWith(namespace + "/") ? p : namespace + "/" + p;
    }

    public static LockListing page(CellSnapshot cell, String namespace, String prefix, String after, int limit,
                                   Instant now) {
        Objects.requireNonNull(namespace, "namespace");
        String full = fullPrefix(namespace, prefix);
        String cursor = after == null ? "" : after;
        List<LockState> matching = cell.locks().stream()
                .filter(l -> l.namespace().equals(namespace) && l.name().startsWith(full))
                .sorted((a, b) -> a.name().compareTo(b.name()))
                .toList();
        List<LockState> rest = cursor.isEmpty() ? matching
                : matching.stream().filter(l -> l.name().compareTo(cursor) > 0).toList();
        List<LockRow> rows = rest.stream().limit(limit).map(LockRow::of).toList();
        String next = rest.size() > limit ? rows.get(rows.size() - 1).name() : null;
        return new LockListing(namespace, full, cursor, limit, rows, matching.size(), next, AsOf.of(cell, now));
    }
}
