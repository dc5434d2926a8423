package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.model.SessionState;
import io.warden.console.view.LockListing;
import io.warden.console.view.LockNames;
import io.warden.console.view.Urls;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The search box of every page. {@code GET /console/go?q=} redirects to what {@code q} names: a live lock's page; a
 * session's page; the sessions of a client id; else the namespace page filtered by {@code q} as a name prefix.
 * {@code GET /console/suggest?q=} answers {@code <option>}s for the box's datalist.
 *
 * <p>Concurrency: stateless apart from its immutable collaborators; safe from any thread.
 */
final class SearchRoutes {
    static final int MAX_SUGGESTIONS = 20;

    private final ConsoleBackend backend;
    private final Pages pages;

    SearchRoutes(ConsoleBackend backend, Pages pages) {
        this.backend = backend;
        this.pages = pages;
    }

    void go(Context ctx) {
        String q = normalize(Pages.param(ctx, "q"));
        if (q.isEmpty()) {
            Pages.seeOther(ctx, Urls.overview());
            return;
        }
        pages.await(ctx, backend::snapshot, cell -> Pages.seeOther(ctx, target(cell, q)),
                failure -> Pages.seeOther(ctx, target(null, q))); // the target page will show the failure itself
    }

    void suggest(Context ctx) {
        String q = normalize(Pages.param(ctx, "q"));
        if (q.isEmpty()) {
            pages.html(ctx, 200, "suggest", null, List.of());
            return;
        }
        pages.await(ctx, backend::snapshot, cell -> pages.html(ctx, 200, "suggest", null, suggestions(cell, q)),
                failure -> pages.html(ctx, 200, "suggest", null, List.of()));
    }

    /** Pasted names often come with a slash too many, or as a console URL. */
    static String normalize(String q) {
        String s = q.trim();
        int at = s.indexOf("/console/locks/");
        if (at >= 0) {
            s = s.substring(at + "/console/locks/".length());
        }
        while (s.startsWith("/")) {
            s = s.substring(1);
        }
        while (s.endsWith("/") && s.length() > 1) {
            s = s.substring(0, s.length() - 1);
        }
        return s;
    }

    /**
     * Where a search for {@code q} leads; {@code cell} may be null when no snapshot could be read (then only the
     * syntax of {@code q} decides).
     */
    static String target(CellSnapshot cell, String q) {
        if (cell != null) {
            if (cell.locks().stream().anyMatch(l -> l.name().equals(q))) {
                return Urls.lock(q);
            }
            if (cell.sessions().stream().anyMatch(s -> s.sessionId().equals(q))) {
                return Urls.session(q);
            }
            if (cell.sessions().stream().anyMatch(s -> s.clientId().equals(q))) {
                return Urls.sessions(null, q);
            }
        } else if (LockNames.isLockName(q)) {
            return Urls.lock(q); // the lock page reads the lock itself, fresh
        }
        String ns = LockNames.namespaceOf(q);
        String prefix = q.contains("/") ? q : null;
        return Urls.namespace(ns, prefix, null, LockListing.DEFAULT_LIMIT);
    }

    /** Lock names starting with {@code q}, then containing it, then namespaces, sessions and client ids. */
    static List<String> suggestions(CellSnapshot cell, String q) {
        String lower = q.toLowerCase(Locale.ROOT);
        Set<String> out = new LinkedHashSet<>();
        cell.locks().stream().map(LockState::name).filter(n -> n.startsWith(q)).sorted()
                .limit(MAX_SUGGESTIONS).forEach(out::add);
        cell.locks().stream().map(LockState::namespace).filter(n -> n.startsWith(lower)).distinct().sorted()
                .forEach(out::add);
        cell.locks().stream().map(LockState::name).filter(n -> n.toLowerCase(Locale.ROOT).contains(lower)).sorted()
                .limit(MAX_SUGGESTIONS).forEach(out::add);
        cell.sessions().stream().map(SessionState::sessionId).filter(id -> id.startsWith(q)).sorted()
                .limit(MAX_SUGGESTIONS).forEach(out::add);
        cell.sessions().stream().map(SessionState::clientId).filter(c -> c.startsWith(q)).distinct().sorted()
                .limit(MAX_SUGGESTIONS).forEach(out::add);
        return out.stream().limit(MAX_SUGGESTIONS).toList();
    }
}
