package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.model.LockState;
import io.warden.console.view.AsOf;
import io.warden.console.view.Limits;
import io.warden.console.view.SessionIndex;
import io.warden.console.view.SessionRow;
import io.warden.console.view.SessionView;
import io.warden.console.view.SessionsView;
import java.util.List;

/**
 * {@code GET /console/sessions?ns=&client=&limit=}: sessions with their TTL, tracking gateway, holds and waits,
 * filtered by namespace (a hold or wait in it) and client-id prefix; and {@code GET /console/sessions/{id}}: one
 * session. Both read the snapshot; a session it does not know is a 404 page that says it may have expired.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class SessionsPage {
    static final int MAX_LIMIT = 1000;

    private final ConsoleBackend backend;
    private final Pages pages;

    SessionsPage(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    void list(Context ctx) {
        String ns = Pages.param(ctx, "ns");
        String client = Pages.param(ctx, "client");
        int limit = limit(ctx.queryParam("limit"));
        var page = pages.page(ctx, "Sessions", "sessions", client, true);
        pages.await(ctx, backend::snapshot, cell -> {
            SessionIndex index = SessionIndex.of(cell);
            List<SessionRow> matching = index.filter(ns, client);
            List<String> namespaces = cell.locks().stream().map(LockState::namespace).distinct().sorted().toList();
            var view = new SessionsView(ns, client, matching.subList(0, Math.min(limit, matching.size())),
                    matching.size(), cell.sessions().size(), limit, namespaces,
                    AsOf.of(cell, pages.now()));
            pages.show(ctx, "sessions", page, view);
        }, failure -> pages.unavailable(ctx, "sessions", page, failure));
    }

    void detail(Context ctx) {
        String id = ctx.pathParam("id");
        var page = pages.page(ctx, "Session " + id, "sessions", id, true).withSubject(id);
        pages.await(ctx, backend::snapshot, cell -> {
            SessionRow row = SessionIndex.of(cell).get(id).orElse(null);
            var view = new SessionView(id, row, AsOf.of(cell, pages.now()));
            // a session that vanishes while watched stays a 200 fragment, so the page says "gone" instead of "stale"
            pages.show(ctx, row == null && !Pages.fragment(ctx) ? 404 : 200, "session", page, view);
        }, failure -> pages.unavailable(ctx, "session", page, failure));
    }

    static int limit(String raw) {
        return Limits.parse(raw, SessionsView.DEFAULT_LIMIT, MAX_LIMIT);
    }
}
