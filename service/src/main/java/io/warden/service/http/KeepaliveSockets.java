package io.warden.service.http;

import io.javalin.websocket.WsConfig;
import io.javalin.websocket.WsContext;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * {@code GET /v1/sessions/{session_id}/keepalive} as a WebSocket (contract §3): every text frame from the client is a
 * heartbeat, answered with one frame {@code {"ttl_ms_remaining":N}}. Close codes:
 * <ul>
 *   <li>4404 when the session is gone (expired or closed);</li>
 *   <li>4400 when the path's session id is malformed;</li>
 *   <li>1001 when this gateway drains (the client reconnects to another);</li>
 *   <li>1008 when a client has more than {@link #MAX_IN_FLIGHT} heartbeats unanswered;</li>
 *   <li>4401 without credentials a principal has, 4403 when the session is another principal's (with an auth file;
 *       checked once, at connect, before the first heartbeat is answered).</li>
 * </ul>
 * A 503 from the engine (no ZooKeeper, or this gateway lost its ZooKeeper session) is a frame
 * {@code {"error":"UNAVAILABLE","detail":...}} and the socket stays open: the client may keep trying or fail over.
 *
 * <p>Concurrency: Jetty calls the handlers on its own threads; replies may be sent from engine threads (Jetty's
 * {@code sendText} is asynchronous and thread-safe). Per socket, heartbeats are answered in order: each waits for the
 * one before ({@link Socket#tail}, guarded by the socket). No thread is held per socket.
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
    private static final Logger log = LoggerFactory.getLogger(KeepaliveSockets.class);

    private final Warden warden;
    private final Json json;
    private final BooleanSupplier draining;
    /** Open sockets by Javalin's socket id. */
    private final Map<String, Socket> sockets = new ConcurrentHashMap<>();

    private final Access access;

    KeepaliveSockets(Warden warden, Json json, BooleanSupplier draining, Access access) {
        this.access = access;
        this.warden = warden;
        this.json = json;
        this.draining = draining;
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
            Socket socket = new Socket(ctx, sessionId);
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

    private void reply(Socket s, Long ttl, Throwable err) {
        if (err == null) {
            s.ctx.send(new String(json.write(new Replies.Keepalive(ttl)), java.nio.charset.StandardCharsets.UTF_8));
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
        s.ctx.send(new String(json.write(Map.of("error", code, "detail", detail)), java.nio.charset.StandardCharsets.UTF_8));
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

    /** One open socket. {@code tail} and {@code inFlight} are guarded by the instance. */
    private static final class Socket {
        final WsContext ctx;
        final String sessionId;
        CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
        int inFlight;

        Socket(WsContext ctx, String sessionId) {
            this.ctx = ctx;
            this.sessionId = sessionId;
        }
    }
}
