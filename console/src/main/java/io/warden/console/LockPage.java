package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.view.LockNames;
import io.warden.console.view.LockView;

/**
 * {@code GET /console/locks/<name>} (the name takes the rest of the path, slashes included): the lock read fresh,
 * its holders, its queue in order and its recent events. A lock without a queue is free: 200 with a page that says
 * so (as the API's {@code GET /v1/locks/{name}} does).
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class LockPage {
    static final String PATH = "/console/locks/<name>";

    private final ConsoleBackend backend;
    private final Pages pages;

    LockPage(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    void handle(Context ctx) {
        String name = LockNames.require("name", ctx.pathParam("name"));
        var page = pages.page(ctx, name, "", name, true).withSubject(name);
        pages.await(ctx, () -> backend.lock(name),
                detail -> pages.show(ctx, "lock", page, LockView.of(name, detail, pages.now())),
                failure -> pages.unavailable(ctx, "lock", page, failure));
    }
}
