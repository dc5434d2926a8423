package io.warden.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Heartbeats over the WebSocket stream {@code GET /v1/sessions/{id}/keepalive} (docs/api.md): one socket per session,
 * each heartbeat a text frame, each reply frame {@code {"ttl_ms_remaining":N}} matched to the oldest unanswered
 * heartbeat (the gateway answers in order).
 *
 * <p>Failures:
 * <ul>
 *   <li>close code 4404: the session is gone; this heartbeat and every later one fail with
 *       {@link SessionLostException} (the session is LOST).</li>
 *   <li>the upgrade fails (refused, timed out, a gateway without the stream), the socket closes with any other code
 *       (1001 when the gateway drains), breaks, or answers {@code {"error":...}} (503): the socket is dropped, the
 *       gateway client moves on to the next endpoint, and the unanswered heartbeats are sent again as unary
 *       {@code POST .../keepalive} (the fallback). The next heartbeat opens a socket at the new endpoint; after a
 *       failed upgrade only once a backoff (1 s, doubling, at most 30 s) has passed, unary until then.</li>
 *   <li>no reply within the heartbeat's timeout: that heartbeat fails (retryable), the socket is dropped as
 *       suspect and the endpoint moves on; when the socket had not even opened, this counts as a failed upgrade.</li>
 * </ul>
 * Sending a heartbeat late, at a unary fallback, is safe for the local deadline: {@link Session} counts from the first
 * send time, which is earlier.
 *
 * <p>Concurrency: thread-safe. {@code socket}, {@code closed}, {@code upgradeFailures} and {@code socketRetryAt} are
 * guarded by {@code this}; each {@link Socket}'s queue and state by that socket. Frames are sent one at a time through
 * the socket's send chain. Replies arrive on the socket's own thread ({@link Http1WebSocket}) and complete the
 * heartbeats' futures there.
 */
final class WebSocketKeepaliveTransport implements KeepaliveTransport {
    static final int CLOSE_SESSION_NOT_FOUND = 4404;
    private static final System.Logger log = System.getLogger(WebSocketKeepaliveTransport.class.getName());
    private static final long MAX_SOCKET_RETRY_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final String HEARTBEAT = "{}";

    private final HttpGateway gateway;
    private final KeepaliveTransport unary;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier ticker;
    private final Duration connectTimeout;
    private final AtomicLong socketAcks = new AtomicLong();
    private final AtomicLong unaryHeartbeats = new AtomicLong();
    private final AtomicLong socketsOpened = new AtomicLong();

    private Socket socket;
    /** Written while holding {@code this}; read by sockets without it. */
    private volatile boolean closed;
    private int upgradeFailures;
    private long socketRetryAt;
    /** Set once a gateway closed a socket with 4404; every later heartbeat fails with it. */
    private volatile SessionLostException gone;

    WebSocketKeepaliveTransport(HttpGateway gateway, KeepaliveTransport unary, ScheduledExecutorService scheduler,
                                LongSupplier ticker, Duration connectTimeout) {
        this.gateway = gateway;
        this.unary = unary;
        this.scheduler = scheduler;
        this.ticker = ticker;
        this.connectTimeout = connectTimeout;
    }

    @Override
    public CompletableFuture<Long> heartbeat(String sessionId, Duration timeout) {
        SessionLostException lost = gone;
        if (lost != null) {
            return CompletableFuture.failedFuture(lost);
        }
        Socket s;
        boolean connect = false;
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new WardenClientException("keepalive of session " + sessionId
                        + ": the client is closed"));
            }
            if (socket == null || !socket.sessionId.equals(sessionId)) {
                if (upgradeFailures > 0 && ticker.getAsLong() - socketRetryAt < 0) {
                    return viaUnary(sessionId, timeout);
                }
                if (socket != null) {
                    socket.end(new IOException("a heartbeat of another session"), true);
                }
                int index = gateway.currentIndex();
                socket = new Socket(sessionId, index, gateway.endpoint(index));
                connect = true;
            }
            s = socket;
        }
        if (connect) {
            s.connect();
        }
        return s.heartbeat(timeout);
    }

    private CompletableFuture<Long> viaUnary(String sessionId, Duration timeout) {
        unaryHeartbeats.incrementAndGet();
        return unary.heartbeat(sessionId, timeout);
    }

    private synchronized void upgraded(Socket s) {
        if (socket == s) {
            upgradeFailures = 0;
        }
    }

    private synchronized void ended(Socket s, boolean upgradeFailed) {
        if (socket == s) {
            socket = null;
        }
        if (upgradeFailed) {
            upgradeFailures++;
            long backoff = Math.min(MAX_SOCKET_RETRY_NANOS, TimeUnit.SECONDS.toNanos(1) << Math.min(upgradeFailures - 1, 5));
            socketRetryAt = ticker.getAsLong() + backoff;
        }
    }

    /** Heartbeats answered over a socket (tests, diagnostics). */
    long socketAcks() {
        return socketAcks.get();
    }

    /** Heartbeats sent as unary calls: fallbacks and heartbeats while sockets are backed off (tests, diagnostics). */
    long unaryHeartbeats() {
        return unaryHeartbeats.get();
    }

    /** Sockets that completed the upgrade (tests, diagnostics). */
    long socketsOpened() {
        return socketsOpened.get();
    }

    /** The endpoint of the live socket, or null (tests, diagnostics). */
    synchronized String socketEndpoint() {
        return socket == null || !socket.isOpen() ? null : socket.endpoint;
    }

    @Override
    public void close() {
        Socket s;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            s = socket;
            socket = null;
        }
        if (s != null) {
            s.end(new WardenClientException("the client is closed"), false);
        }
        unary.close();
    }

    /** A heartbeat waiting for its reply frame. */
    private record Pending(CompletableFuture<Long> result, Duration timeout) {
    }

    /**
     * One socket to one gateway, for one session. Concurrency: {@code pending}, {@code ws}, {@code dead} and
     * {@code sendTail} are guarded by the instance; the socket's thread calls the listener methods one at a time.
     */
    private final class Socket implements Http1WebSocket.Listener {
        final String sessionId;
        final int index;
        final String endpoint;
        private final CompletableFuture<Http1WebSocket> opened = new CompletableFuture<>();
        private final ArrayDeque<Pending> pending = new ArrayDeque<>();
        private Http1WebSocket ws;
        private boolean dead;
        private CompletableFuture<?> sendTail = CompletableFuture.completedFuture(null);

        Socket(String sessionId, int index, String endpoint) {
            this.sessionId = sessionId;
            this.index = index;
            this.endpoint = endpoint;
        }

        void connect() {
            try {
                gateway.webSocket(endpoint, "/v1/sessions/" + sessionId + "/keepalive", connectTimeout, this)
                        .whenComplete((w, error) -> {
                            if (error != null) {
                                log.log(System.Logger.Level.DEBUG, "warden session {0}: no keepalive socket at {1}, "
                                        + "heartbeats go unary: {2}", sessionId, endpoint, Failures.unwrap(error).toString());
                                end(Failures.unwrap(error), true);
                            } else {
                                boolean late;
                                synchronized (this) {
                                    if (ws == null) {
                                        ws = w;
                                    }
                                    late = dead;
                                }
                                if (late) {
                                    w.abort(); // dropped (the client closed) while the upgrade ran
                                    return;
                                }
                                socketsOpened.incrementAndGet();
                                upgraded(this);
                                opened.complete(w);
                            }
                        });
            } catch (RuntimeException e) {
                end(e, true);
            }
        }

        synchronized boolean isOpen() {
            return ws != null && !dead;
        }

        CompletableFuture<Long> heartbeat(Duration timeout) {
            Pending p = new Pending(new CompletableFuture<>(), timeout);
            synchronized (this) {
                if (dead) {
                    return viaUnary(sessionId, timeout);
                }
                pending.addLast(p);
            }
            armTimeout(p);
            opened.thenAccept(w -> send(w, p));
            return p.result();
        }

        private void send(Http1WebSocket w, Pending p) {
            synchronized (this) {
                if (dead || p.result().isDone()) {
                    return;
                }
                sendTail = sendTail.handle((v, e) -> null)
                        .thenCompose(v -> w.sendText(HEARTBEAT))
                        .whenComplete((v, error) -> {
                            if (error != null) {
                                end(Failures.unwrap(error), false);
                            }
                        });
            }
        }

        private void armTimeout(Pending p) {
            try {
                ScheduledFuture<?> timer = scheduler.schedule(() -> {
                    if (p.result().completeExceptionally(new HttpTimeoutException("keepalive of session " + sessionId
                            + " at " + endpoint + ": no reply within " + p.timeout().toMillis() + " ms"))) {
                        boolean upgrading;
                        synchronized (this) {
                            upgrading = ws == null;
                        }
                        // a socket that never opened counts as a failed upgrade: unary until the backoff has passed
                        end(new HttpTimeoutException("a heartbeat was not answered in time"), upgrading);
                    }
                }, p.timeout().toNanos(), TimeUnit.NANOSECONDS);
                p.result().whenComplete((v, e) -> timer.cancel(false));
            } catch (RejectedExecutionException closing) {
                // the client is closing; close() fails the heartbeat
            }
        }

        /**
         * Drops this socket (idempotent). Unanswered heartbeats fall back to unary calls at the next endpoint, or,
         * when {@code cause} is a {@link SessionLostException} or the client closes, fail with it.
         */
        void end(Throwable cause, boolean upgradeFailed) {
            List<Pending> unanswered;
            Http1WebSocket w;
            synchronized (this) {
                if (dead) {
                    return;
                }
                dead = true;
                unanswered = new ArrayList<>(pending);
                pending.clear();
                w = ws;
            }
            ended(this, upgradeFailed);
            opened.completeExceptionally(cause);
            boolean fallBack = !(cause instanceof SessionLostException) && !closed;
            if (fallBack) {
                gateway.moveOn(index);
            }
            if (w != null) {
                if (closed && !w.isOutputClosed()) {
                    w.sendClose(Http1WebSocket.NORMAL_CLOSURE, "client closed");
                    w.abort();
                } else {
                    w.abort();
                }
            }
            for (Pending p : unanswered) {
                if (p.result().isDone()) {
                    continue;
                }
                if (fallBack) {
                    viaUnary(sessionId, p.timeout()).whenComplete((v, e) -> {
                        if (e == null) {
                            p.result().complete(v);
                        } else {
                            p.result().completeExceptionally(Failures.unwrap(e));
                        }
                    });
                } else {
                    p.result().completeExceptionally(cause);
                }
            }
        }

        // --- Http1WebSocket.Listener (the socket's thread, one call at a time) ---------------------------------------

        @Override
        public void onText(String message) {
            reply(message);
        }

        private void reply(String frame) {
            JsonNode json;
            try {
                json = Wire.JSON.readTree(frame);
            } catch (IOException | RuntimeException e) {
                end(new IOException("unreadable keepalive frame from " + endpoint + ": " + frame), false);
                return;
            }
            if (json.hasNonNull("ttl_ms_remaining")) {
                Pending p;
                synchronized (this) {
                    p = pending.pollFirst();
                }
                if (p != null && p.result().complete(json.get("ttl_ms_remaining").asLong())) {
                    socketAcks.incrementAndGet();
                }
                return;
            }
            // {"error":"UNAVAILABLE",...}: this gateway cannot keep sessions alive now; fail over.
            String code = json.path("error").asText("UNKNOWN");
            end(new WardenClientException("keepalive of session " + sessionId + " at " + endpoint + " failed: " + code
                    + ": " + json.path("detail").asText(""), code, 503, null), false);
        }

        @Override
        public void onClose(int statusCode, String reason) {
            if (statusCode == CLOSE_SESSION_NOT_FOUND) {
                SessionLostException lost = new SessionLostException("keepalive of session " + sessionId + " at "
                        + endpoint + ": the session is gone (" + reason + ")", Failures.SESSION_NOT_FOUND, 404, null);
                gone = lost;
                end(lost, false);
            } else {
                log.log(System.Logger.Level.DEBUG, "warden session {0}: keepalive socket at {1} closed ({2} {3}); "
                        + "failing over", sessionId, endpoint, statusCode, reason);
                end(new IOException("keepalive socket at " + endpoint + " closed: " + statusCode + " " + reason), false);
            }
        }

        @Override
        public void onError(Throwable error) {
            end(error instanceof IOException ? error : new IOException(error), false);
        }
    }
}
