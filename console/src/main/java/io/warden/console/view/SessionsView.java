package io.warden.console.view;

import java.util.List;

/**
 * The sessions page.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param namespace the namespace filter, or empty
 * @param client    the client-id prefix filter, or empty
 * @param rows      at most {@code limit} of the matching sessions
 * @param matching  how many sessions match in all
 * @param total     how many sessions the cell has
 */
public record SessionsView(String namespace, String client, List<SessionRow> rows, int matching, int total,
                           int limit, List<String> namespaces, AsOf asOf) {
    public static final int DEFAULT_LIMIT = 200;

    public SessionsView {
        rows = List.copyOf(rows);
        namespaces = List.copyOf(namespaces);
    }
}
