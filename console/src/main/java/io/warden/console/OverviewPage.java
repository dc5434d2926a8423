package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.model.CellInfo;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.Health;
import io.warden.console.view.Overview;
import io.warden.console.view.OverviewView;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code GET /console}: the namespaces with their counts, the locks held and waited on longest, the health of this
 * gateway and of ZooKeeper, and a warning naming each cell that does not serve. The snapshot, the health and the cells
 * are read at once; each may fail alone and is then shown as a banner in its part of the page (a backend that lists
 * no cells leaves them out).
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class OverviewPage {
    private final ConsoleBackend backend;
    private final Pages pages;

    OverviewPage(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    /** A value or why there is none. */
    private record Outcome<T>(T value, String error) {
        static <T> CompletableFuture<Outcome<T>> of(CompletableFuture<T> future) {
            return Pages.bounded(future).handle((v, t) -> t == null ? new Outcome<>(v, null) : new Outcome<>(null, Pages.describe(t)));
        }
    }

    void handle(Context ctx) {
        var page = pages.page(ctx, "Overview", "overview", "", true);
        CompletableFuture<Outcome<CellSnapshot>> snapshot = Outcome.of(Pages.attempt(backend::snapshot));
        CompletableFuture<Outcome<Health>> health = Outcome.of(Pages.attempt(backend::health));
        CompletableFuture<Outcome<List<CellInfo>>> cells = Pages.bounded(Pages.attempt(backend::cells))
                .handle((v, t) -> t == null ? new Outcome<>(v, null)
                        : Pages.unwrap(t) instanceof UnsupportedOperationException ? new Outcome<>(null, null)
                        : new Outcome<>(null, Pages.describe(t)));
        pages.await(ctx, () -> snapshot.thenCombine(health, (s, h) -> {
            var now = pages.now();
            Overview overview = s.value() == null ? null : Overview.of(s.value(), now);
            return new OverviewView(overview, s.error(), h.value(), h.error(), now);
        }).thenCombine(cells, (v, c) -> new OverviewView(v.overview(), v.snapshotError(), v.health(), v.healthError(),
                v.now(), c.value(), c.error())), view -> {
            boolean nothing = view.overview() == null && view.health() == null;
            if (nothing && Pages.fragment(ctx)) {
                pages.unavailable(ctx, "overview", page, new IllegalStateException(view.snapshotError()));
            } else {
                pages.show(ctx, nothing ? 503 : 200, "overview", page, view);
            }
        }, failure -> pages.unavailable(ctx, "overview", page, failure));
    }
}
