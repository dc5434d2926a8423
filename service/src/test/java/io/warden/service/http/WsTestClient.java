package io.warden.service.http;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A WebSocket client for tests on {@link java.net.http.WebSocket}: text frames into a queue, the close code kept. */
final class WsTestClient implements AutoCloseable {
    static final Duration DEADLINE = Duration.ofSeconds(20);

    record Closed(int code, String reason) {
    }

    private final BlockingQueue<String> frames = new LinkedBlockingQueue<>();
    private final CompletableFuture<Closed> closed = new CompletableFuture<>();
    private final WebSocket socket;

    WsTestClient(int port, String path) {
        this(port, path, null);
    }

    /** With {@code token}: the upgrade request carries {@code Authorization: Bearer token}. */
    WsTestClient(int port, String path, String token) {
        WebSocket.Listener listener = new WebSocket.Listener() {
            private final StringBuilder text = new StringBuilder();

            @Override
            public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                text.append(data);
                if (last) {
                    frames.add(text.toString());
                    text.setLength(0);
                }
                ws.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
                closed.complete(new Closed(statusCode, reason));
                return null;
            }

            @Override
            public void onError(WebSocket ws, Throwable error) {
                closed.completeExceptionally(error);
            }
        };
        WebSocket.Builder builder = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
        if (token != null) {
            builder.header("Authorization", "Bearer " + token);
        }
        this.socket = builder.buildAsync(URI.create("ws://127.0.0.1:" + port + path), listener)
                .orTimeout(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    void send(String text) {
        socket.sendText(text, true).orTimeout(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    String nextFrame() {
        try {
            String f = frames.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            if (f == null) {
                throw new AssertionError("no frame within " + DEADLINE + (closed.isDone() ? "; closed: " + closed.getNow(null) : ""));
            }
            return f;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    Closed awaitClose() {
        return closed.orTimeout(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    @Override
    public void close() {
        if (!socket.isOutputClosed()) {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
        }
        socket.abort();
    }
}
