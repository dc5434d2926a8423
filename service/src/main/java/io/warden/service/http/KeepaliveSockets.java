package io.warden.service.http;

import io.javalin.websocket.WsConfig;
import io.javalin.websocket.WsContext;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.micrometer.core.instrument.Counter;
import org.eclipse.jetty.websocket.api.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * {@code GET /v1/sessions/{session_id}/keepalive} as a WebSocket (docs/api.md): every text frame from the client is a
 * heartbeat, answered with one frame {@code {"ttl_ms_remaining":N}}. Close codes:
 * <ul>
 *   <li>4404 when the session is gone (expired or closed);</li>
 *   <li>4400 when the path's session id is malformed;</li>
 *   <li>1001 when this gateway drains (the client reconnects to another);</li>
 *   <li>1008 when a client has more than {@link #MAX_IN_FLIGHT} heartbeats unanswered, or more than
 *       {@link #MAX_BACKLOG} replies queued that it has not read (a client that sends and never reads).</li>
 *   <li>4401 without credentials a principal has, 4403 when the session is another principal's (with an auth file;
 *       checked once, at connect, before the first heartbeat is answered).</li>
 * </ul>
 * Jetty closes the connection as soon as it has written a close frame with a code other than 1000 or 1001, without
 * waiting for the client's: a client still sending heartbeats may see a reset instead of the frame.
 * A 503 from the engine (no ZooKeeper, or this gateway lost its ZooKeeper session) is a frame
 * {@code {"error":"UNAVAILABLE","detail":...}} and the socket stays open: the client may keep trying or fail over.
 *
 * <p>Events: a socket opened with {@code ?events=revoke} also gets, unasked, one frame
 * {@code {"event":"REVOKE_REQUESTED","name":...,"token":...,"revision":...}} when a hold of its session is asked to let
 * go ({@code POST /v1/revoke}). Only when asked: a client that knows only heartbeat replies would take such a frame for
 * an error. The frame counts against the backlog like a reply; finding the session's sockets walks the open sockets
 * (revokes are rare admin actions).
 *
 * <p>Concurrency: Jetty calls the handlers on its own threads; replies may be sent from engine threads (Jetty's
 * {@code sendText} is asynchronous and thread-safe). Per socket, heartbeats are answered in order: each waits for the
 * one before ({@link Socket#tail}, guarded by the socket). No thread is held per socket.
 * Each socket's {@link Socket#backlog} counts replies handed to Jetty and not yet written (guarded by the socket;
 * Jetty's write callbacks take it off again), so what Jetty queues per socket is bounded by {@link #MAX_BACKLOG}
 * frames of at most a few hundred bytes; {@code sockets} holds only open sockets.
 */
final class KeepaliveSockets {
    static final int CLOSE_SESSION_NOT_FOUND = 4404;
    static final int CLOSE_INVALID = 4400;
    static final int CLOSE_GOING_AWAY = 1001;
    static final int CLOSE_POLICY = 1008;
    static final int CLOSE_UNAUTHENTICATED = 4401;
    /** The request attribute that carries the upgrade request's verified client certificates to {@link #configure}. */
    static final String CERTIFICATES = "warden.upgrade.certificates";
    static final int CLOSE_PERMISSION_DENIED = 4403;
    static final int MAX_IN_FLIGHT = 16;
    /** Replies queued for a socket and not yet written; a client that reads each reply keeps it at 0 or 1. */
    static final int MAX_BACKLOG = 32;
    static final String BACKLOG_REASON = "replies not being read; read each reply before the next heartbeat";
    private static final Logger log = LoggerFactory.getLogger(KeepaliveSockets.class);

    private final Warden warden;
    private final Json json;
    private final BooleanSupplier draining;
    /** Open sockets by Javalin's socket id. */
    private final Map<String, Socket> sockets = new ConcurrentHashMap<>();

    private final Access access;
    private final Counter closedForBacklog;

    KeepaliveSockets(Warden warden, Json json, BooleanSupplier draining, Access access, Counter closedForBacklog) {
        this.access = access;
        this.warden = warden;
        this.json = json;
        this.draining = draining;
        this.closedForBacklog = closedForBacklog;
    }

    /** The largest backlog of any open socket (a gauge; iterates the open sockets). */
    int maxBacklog() {
        int max = 0;
        for (Socket s : sockets.values()) {
            synchronized (s) {
                max = Math.max(max, s.backlog);
            }
        }
        return max;
    }

    void configure(WsConfig ws) {
        ws.onConnect(ctx -> {
            if (draining.getAsBoolean()) {
                ctx.closeSession(CLOSE_GOING_AWAY, "gateway draining; reconnect to another gateway");
                return;
            }
            String sessionId = ctx.pathParam("session_id");
            if (!Fields.SESSION_ID.matcher(sessionId).matches()) {
                ctx.closeSession(CLOSE_INVALID, "session_id: not a session id (32 lowercase hex digits)");
                return;
            }
            io.warden.service.auth.Caller caller;
            try {
                caller = access.authenticate(ctx.header("Authorization"), certificates(ctx));
            } catch (WardenException e) {
                ctx.closeSession(CLOSE_UNAUTHENTICATED, "unauthenticated: " + e.getMessage());
                return;
            }
            String events = ctx.queryParam("events");
            if (events != null && !events.equals("revoke")) {
                ctx.closeSession(CLOSE_INVALID, "events: the only events a keepalive socket sends are 'revoke'");
                return;
            }
            Socket socket = new Socket(ctx, sessionId, events != null);
            sockets.put(ctx.sessionId(), socket);
            // Heartbeats wait behind the check (the socket's tail); a refusal closes the socket before any is answered.
            CompletableFuture<Void> check = access.session(caller, sessionId, null, "keep alive session over WebSocket").handle((v, err) -> {
                if (err != null) {
                    sockets.remove(ctx.sessionId());
                    Throwable cause = Problems.unwrap(err);
                    if (cause instanceof WardenException we && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
                        ctx.closeSession(CLOSE_SESSION_NOT_FOUND, "session not found (expired or closed)");
                    } else if (cause instanceof WardenException we && we.code() == WardenException.ErrorCode.PERMISSION_DENIED) {
                        ctx.closeSession(CLOSE_PERMISSION_DENIED, abbreviate(we.getMessage()));
                    } else {
                        ctx.closeSession(CLOSE_GOING_AWAY, "could not check the session's owner; reconnect");
                    }
                    throw new java.util.concurrent.CompletionException(cause);
                }
                socket.allowed = true;
                return null;
            });
            synchronized (socket) {
                socket.tail = check;
            }
        });
        ws.onMessage(ctx -> heartbeat(ctx.sessionId()));
        ws.onBinaryMessage(ctx -> heartbeat(ctx.sessionId()));
        ws.onClose(ctx -> sockets.remove(ctx.sessionId()));
        ws.onError(ctx -> sockets.remove(ctx.sessionId()));
    }

    private void heartbeat(String socketId) {
        Socket s = sockets.get(socketId);
        if (s == null) {
            return; // refused at connect, or closing
        }
        synchronized (s) {
            if (s.backlog >= MAX_BACKLOG) {
                closeForBacklog(s);
                return;
            }
            if (s.inFlight >= MAX_IN_FLIGHT) {
                sockets.remove(socketId);
                s.ctx.closeSession(CLOSE_POLICY, "too many unanswered heartbeats; wait for the replies");
                return;
            }
            s.inFlight++;
            s.tail = s.tail.thenCompose(v -> keepalive(s));
        }
    }

    /** One keepalive and its reply; never fails (the next heartbeat's reply waits for it). */
    private CompletableFuture<Void> keepalive(Socket s) {
        CompletableFuture<Long> call;
        try {
            call = warden.keepalive(s.sessionId, null);
        } catch (RuntimeException e) {
            call = CompletableFuture.failedFuture(e);
        }
        return call.handle((ttl, err) -> {
            synchronized (s) {
                s.inFlight--;
            }
            try {
                reply(s, ttl, err);
            } catch (RuntimeException e) {
                log.debug("keepalive socket of session {}: could not reply: {}", s.sessionId, e.toString());
            }
            return null;
        });
    }

    /** Sends the REVOKE_REQUESTED frame to the session's sockets that asked for events. */
    void revokeRequested(String sessionId, String name, long token, long revision) {
        Map<String, Object> frame = Map.of("event", "REVOKE_REQUESTED", "name", name, "token", token, "revision", revision);
        for (Socket s : sockets.values()) {
            if (s.events && s.allowed && s.sessionId.equals(sessionId)) {
                try {
                    send(s, frame);
                } catch (RuntimeException e) {
                    log.debug("keepalive socket of session {}: could not send a revoke: {}", sessionId, e.toString());
                }
            }
        }
    }

    /** Hands one frame to Jetty unless the socket's backlog is full, which closes it with 1008 instead. */
    private void send(Socket s, Object frame) {
        synchronized (s) {
            if (s.backlog >= MAX_BACKLOG) {
                closeForBacklog(s);
                return;
            }
            s.backlog++;
        }
        Runnable written = () -> {
            synchronized (s) {
                s.backlog--;
            }
        };
        s.ctx.session.sendText(new String(json.write(frame), java.nio.charset.StandardCharsets.UTF_8),
                Callback.from(written, failure -> written.run()));
    }

    /** Called holding the socket's lock; closes at most once (the socket leaves {@code sockets} first). */
    private void closeForBacklog(Socket s) {
        if (sockets.remove(s.ctx.sessionId()) == null) {
            return;
        }
        closedForBacklog.increment();
        log.debug("keepalive socket of session {}: {} replies unread; closing with 1008", s.sessionId, s.backlog);
        s.ctx.closeSession(CLOSE_POLICY, BACKLOG_REASON);
    }

    private void reply(Socket s, Long ttl, Throwable err) {
        if (err == null) {
            send(s, new Replies.Keepalive(ttl));
            return;
        }
        Throwable cause = Problems.unwrap(err);
        if (cause instanceof WardenException we && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
            sockets.remove(s.ctx.sessionId());
            s.ctx.closeSession(CLOSE_SESSION_NOT_FOUND, "session not found (expired or closed)");
            return;
        }
        String code = cause instanceof WardenException we ? we.code().name() : "UNAVAILABLE";
        String detail = cause instanceof WardenException ? cause.getMessage() : "the keepalive failed; try again or another gateway";
        if (!(cause instanceof WardenException)) {
            log.warn("keepalive of session {} over WebSocket failed unexpectedly", s.sessionId, cause);
        }
        send(s, Map.of("error", code, "detail", detail));
    }

    /** A close reason is at most 123 bytes of UTF-8 (RFC 6455). */
    private static String abbreviate(String reason) {
        return reason.length() <= 120 ? reason : reason.substring(0, 117) + "...";
    }

    private static java.security.cert.X509Certificate[] certificates(io.javalin.websocket.WsConnectContext ctx) {
        try {
            Object certs = ctx.getUpgradeCtx$javalin().getExtractedData().getAttributeMap().get(CERTIFICATES);
            return certs instanceof java.security.cert.X509Certificate[] chain ? chain : null;
        } catch (RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** Closes every socket with 1001 (drain or stop): clients reconnect to another gateway. */
    void closeAll(String reason) {
        for (Socket s : sockets.values()) {
            try {
                s.ctx.closeSession(CLOSE_GOING_AWAY, reason);
            } catch (RuntimeException e) {
                log.debug("closing a keepalive socket failed: {}", e.toString());
            }
        }
        sockets.clear();
    }

    int openCount() {
        return sockets.size();
    }

    /** One open socket. {@code tail}, {@code inFlight} and {@code backlog} are guarded by the instance. */
    private static final class Socket {
        final WsContext ctx;
        final String sessionId;
        /** Whether the client asked for event frames ({@code ?events=revoke}). */
        final boolean events;
        /** Set once the caller was found allowed to use the session: no event goes out before. */
        volatile boolean allowed;
        CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
        int inFlight;
        int backlog;

        Socket(WsContext ctx, String sessionId, boolean events) {
            this.ctx = ctx;
            this.sessionId = sessionId;
            this.events = events;
        }
    }
}
