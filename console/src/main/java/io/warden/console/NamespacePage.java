package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.model.CellInfo;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.view.CellsView;
import io.warden.console.view.LockListing;
import io.warden.console.view.NamespaceView;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code GET /console/ns/{ns}?prefix=&after=&limit=}: the namespace's live locks, filtered by name prefix, sorted by
 * name, {@code limit} per page (default 50, at most 500; anything else is a 400 naming {@code limit}), and the cell
 * that serves the namespace. The cells are read next to the snapshot; when they cannot be read the page leaves the
 * cell out.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class NamespacePage {
    private final ConsoleBackend backend;
    private final Pages pages;

    NamespacePage(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    void handle(Context ctx) {
        String ns = ctx.pathParam("ns");
        String prefix = Pages.param(ctx, "prefix");
        String after = Pages.param(ctx, "after");
        int limit = LockListing.parseLimit(ctx.queryParam("limit"));
        String full = LockListing.fullPrefix(ns, prefix);
        var page = pages.page(ctx, "Namespace " + ns, "overview", full.isEmpty() ? ns + "/" : full, true)
                .withSubject(ns);
        CompletableFuture<List<CellInfo>> cells = Pages.bounded(Pages.attempt(backend::cells)).exceptionally(t -> null);
        pages.await(ctx, () -> Pages.attempt(backend::snapshot).thenCombine(cells, Read::new), read -> {
            CellSnapshot cell = read.snapshot();
            LockListing listing = LockListing.page(cell, ns, prefix, after, limit, pages.now());
            var namespaces = cell.locks().stream().map(LockState::namespace).distinct().sorted().toList();
            CellInfo serving = read.cells() == null ? null : CellsView.servingCell(read.cells(), ns);
            boolean unread = serving != null && cell.unreadCells().contains(serving.name());
            pages.show(ctx, "namespace", page, new NamespaceView(listing, namespaces, serving, unread));
        }, failure -> pages.unavailable(ctx, "namespace", page, failure));
    }

    /** The snapshot, and the gateway's cells or null when they could not be read. */
    private record Read(CellSnapshot snapshot, List<CellInfo> cells) {
    }
}
