package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.view.AuditView;
import io.warden.console.view.Limits;

/**
 * {@code GET /console/audit?limit=}: the newest admin actions of the cell (default 100, at most 1000). Readable by
 * every viewer: who forced what is no secret to the people on call.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class AuditPage {
    private final ConsoleBackend backend;
    private final Pages pages;

    AuditPage(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    void handle(Context ctx) {
        int limit = limit(ctx.queryParam("limit"));
        var page = pages.page(ctx, "Audit log", "audit", "", true);
        pages.await(ctx, () -> backend.auditLog(limit),
                entries -> pages.show(ctx, "audit", page, new AuditView(entries, limit, pages.now())),
                failure -> pages.unavailable(ctx, "audit", page, failure));
    }

    static int limit(String raw) {
        return Limits.parse(raw, AuditView.DEFAULT_LIMIT, AuditView.MAX_LIMIT);
    }
}
