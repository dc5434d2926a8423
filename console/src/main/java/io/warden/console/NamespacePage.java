package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.model.LockState;
import io.warden.console.view.LockListing;
import io.warden.console.view.NamespaceView;

/**
 * {@code GET /console/ns/{ns}?prefix=&after=&limit=}: the namespace's live locks, filtered by name prefix, sorted by
 * name, {@code limit} per page (default 50, at most 500; anything else is a 400 naming {@code limit}).
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
        pages.await(ctx, backend::snapshot, cell -> {
            LockListing listing = LockListing.page(cell, ns, prefix, after, limit, pages.now());
            var namespaces = cell.locks().stream().map(LockState::namespace).distinct().sorted().toList();
            pages.show(ctx, "namespace", page, new NamespaceView(listing, namespaces));
        }, failure -> pages.unavailable(ctx, "namespace", page, failure));
    }
}
