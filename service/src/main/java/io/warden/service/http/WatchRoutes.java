package io.warden.service.http;

import io.warden.service.auth.Caller;
import io.warden.service.auth.Role;

import io.javalin.http.Context;
import io.warden.service.watch.WatchFilter;
import io.warden.service.watch.WatchMemory;
import io.warden.service.watch.WatchSource;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * {@code GET /v1/watch?name=|prefix=&session_id=&since_revision=} (docs/api.md): validates the query, subscribes a
 * {@link SseStream} to the gateway's watches and keeps the response open as a Server-Sent Events stream. A
 * {@code Last-Event-ID} header (what {@code EventSource} sends when it reconnects) counts as {@code since_revision}
 * when the query has none. With {@code session_id} only that session's events pass (and a RESYNC lists only the locks
 * where it holds or waits); name and prefix are then optional (the SDK watches its own holds this way).
 *
 * <p>Concurrency: {@link #open} is a concurrent set (bounded by the hub's watch limit); streams add and remove
 * themselves from any thread. {@code memory} is the one budget of all streams ({@link WatchMemory}, thread-safe).
 */
final class WatchRoutes {
    static final Set<String> PARAMS = Set.of("name", "prefix", "session_id", "since_revision", "cell");
    static final String LAST_EVENT_ID = "Last-Event-ID";

    private final WatchSource watches;
    private final Exchange exchange;
    private final Json json;
    private final Executor executor;
    private final Set<SseStream> open = ConcurrentHashMap.newKeySet();
    private final WatchMemory memory;

    private final Access access;

    WatchRoutes(WatchSource watches, Exchange exchange, Json json, Executor executor, WatchMemory memory, Access access) {
        this.access = access;
        this.watches = watches;
        this.exchange = exchange;
        this.json = json;
        this.executor = executor;
        this.memory = memory;
    }

    void watch(Context ctx) throws IOException {
        QueryParams q = QueryParams.of(exchange.query(ctx), PARAMS);
        String session = q.optional("session_id");
        WatchFilter filter = WatchFilter.of(q.optional("name"), q.optional("prefix"),
                session == null ? null : Fields.sessionId("session_id", session));
        String cell = q.optional("cell");
        if (cell != null && (filter.sessionId() == null || filter.namespace() != null)) {
            throw io.warden.service.api.WardenException.invalid("cell", "is only for a watch of a whole session "
                    + "(session_id without name or prefix): a name or prefix is watched in its namespace's cell");
        }
        Long since = null;
        String sinceText = q.optional("since_revision");
        if (sinceText != null) {
            since = Fields.parseLong("since_revision", sinceText, 0, Long.MAX_VALUE);
        } else {
            String lastEventId = ctx.header(LAST_EVENT_ID);
            if (lastEventId != null && !lastEventId.isBlank()) {
                since = Fields.parseLong(LAST_EVENT_ID, lastEventId.trim(), 0, Long.MAX_VALUE);
            }
        }
        Caller caller = Access.caller(ctx);
        boolean redacted = authorize(caller, filter);
        SseStream stream = new SseStream(json, executor, memory, redacted);
        WatchSource.Subscription subscription;
        try {
            subscription = watches.subscribe(cell, filter, since, stream); // may refuse: a problem document
        } catch (RuntimeException e) {
            memory.unregister(stream.account());
            throw e;
        }
        open.add(stream);
        try {
            stream.open(ctx, "watching " + filter + (since == null ? " from now" : " after revision " + since), () -> {
                subscription.cancel();
                open.remove(stream);
            });
        } catch (IOException | RuntimeException e) {
            subscription.cancel();
            open.remove(stream);
            throw e;
        }
    }

    /**
     * Checks that the caller may watch this (read in the watched namespace; a session's own watch, that the session is
     * the caller's or it an admin) and answers whether its stream leaves session ids out: yes unless the caller is an
     * admin of the namespace, or the watch is of its own session. The session check reads the session's record when
     * this gateway does not track it: the request thread waits for that read (at most the ZooKeeper call's bound), as
     * a watch is opened once and then lasts.
     */
    private boolean authorize(Caller caller, WatchFilter filter) {
        if (caller.open()) {
            return false;
        }
        String ns = filter.namespace();
        if (filter.sessionId() != null) {
            if (ns != null) {
                access.need(caller, ns, Role.READ, "watch " + filter);
            }
            try {
                access.session(caller, filter.sessionId(), ns, "watch session").join();
            } catch (java.util.concurrent.CompletionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : e;
            }
            return false;
        }
        access.need(caller, ns, Role.READ, "watch " + filter);
        return !caller.may(ns, Role.ADMIN);
    }

    /** Ends every open stream (drain or stop); each writes what it has queued first. */
    void closeAll(String reason) {
        for (SseStream s : open) {
            s.close(reason);
        }
    }

    int openCount() {
        return open.size();
    }
}
