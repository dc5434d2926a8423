package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.view.AsOf;
import io.warden.console.view.CellsView;

/**
 * {@code GET /console/cells}: the cells the gateway serves ({@link ConsoleBackend#cells()}), whether each serves, and
 * the namespaces routed to each. Each cell's ensemble and chroot are shown to admins only, as {@code GET /v1/cells}
 * shows them only to admins of every namespace.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class CellsPage {
    private final ConsoleBackend backend;
    private final Pages pages;

    CellsPage(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    void handle(Context ctx) {
        var page = pages.page(ctx, "Cells", "cells", "", true);
        pages.await(ctx, backend::cells, cells -> {
            var now = pages.now();
            pages.show(ctx, "cells", page, new CellsView(cells, new AsOf(now, -1, now)));
        }, failure -> pages.unavailable(ctx, "cells", page, failure));
    }
}
