package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.view.AsOf;
import io.warden.console.view.WaitForGraph;
import io.warden.console.view.WaitsView;

/**
 * {@code GET /console/waits}: the gateway's wait-for graph ({@link ConsoleBackend#waitFor()}), deadlocks first.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class WaitsPage {
    private final ConsoleBackend backend;
    private final Pages pages;

    WaitsPage(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    void handle(Context ctx) {
        var page = pages.page(ctx, "Wait-for", "waits", "", true);
        pages.await(ctx, backend::waitFor,
                graph -> pages.show(ctx, "waits", page, new WaitsView(WaitForGraph.of(graph),
                        new AsOf(graph.computedAt(), graph.revision(), pages.now()))),
                failure -> pages.unavailable(ctx, "waits", page, failure));
    }
}
