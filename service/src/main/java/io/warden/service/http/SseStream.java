package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import io.warden.service.watch.WatchSink;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * One {@code GET /v1/watch} response: a Server-Sent Events stream written with the Servlet API's non-blocking output,
 * so a slow or stalled consumer costs a bounded queue, never a thread.
 *
 * <p>Frames: {@code id: <revision>}, {@code event: <type>}, {@code data: <json>} and a blank line per event (the id is
 * what a browser's {@code EventSource} sends back as {@code Last-Event-ID}; of several events with one revision only
 * the last carries it); comments ({@code : ...}) as heartbeats.
 *
 * <p>Backpressure: frames wait in a queue of at most {@link #MAX_QUEUED_BYTES} (a single larger frame, such as a big
 * RESYNC, is still taken when the queue is empty). A frame that does not fit means the consumer is too slow: the
 * connection is cut, and the client resumes from the last revision it got.
 *
 * <p>Concurrency: the hub's thread offers frames; a drain, on {@code executor} or in Jetty's {@code onWritePossible},
 * writes them. At most one drain runs at a time: {@code draining} is true from when one is started (or, at first, until
 * Jetty's first {@code onWritePossible}) until it finds the queue empty and the output flushed. The queue and flags are
 * guarded by {@code this}; {@code unflushed} belongs to the running drain.
 */
final class SseStream implements WatchSink, WriteListener, AsyncListener {
    static final int MAX_QUEUED_BYTES = 1 << 20;
    private static final Logger log = LoggerFactory.getLogger(SseStream.class);

    private final Json json;
    private final Executor executor;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
    private long queuedBytes;
    private boolean draining = true;
    private boolean closing;
    private boolean closed;
    private boolean unflushed;
    private volatile Runnable onClose = () -> { };
    private volatile Context ctx;
    private volatile ServletOutputStream out;

    SseStream(Json json, Executor executor) {
        this.json = json;
        this.executor = executor;
    }

    /**
     * Starts the response (200, {@code text/event-stream}) on the request thread, without a timeout, and hands it to
     * Jetty's non-blocking output. {@code onClose} runs once when the stream ends, however it ends.
     */
    void open(Context ctx, String greeting, Runnable onClose) throws IOException {
        this.ctx = ctx;
        this.onClose = onClose;
        ctx.status(200);
        ctx.res().setCharacterEncoding("UTF-8");
        ctx.res().setContentType("text/event-stream");
        ctx.res().setHeader("Cache-Control", "no-cache");
        ctx.res().setHeader("X-Accel-Buffering", "no");
        AsyncContext async = ctx.req().isAsyncStarted() ? ctx.req().getAsyncContext() : ctx.req().startAsync();
        async.setTimeout(0); // a watch lasts as long as the client wants; heartbeats keep it busy
        async.addListener(this);
        comment(greeting);
        // Javalin ends the exchange (AsyncContext.complete) when this future completes.
        ctx.future(() -> done);
        out = ctx.res().getOutputStream();
        out.setWriteListener(this);
    }

    // ------------------------------------------------------------------ WatchSink (the hub's thread)

    @Override
    public boolean events(List<WatchEvent> events) {
        StringBuilder frames = new StringBuilder(256 * events.size());
        for (int i = 0; i < events.size(); i++) {
            WatchEvent e = events.get(i);
            // Several events can share a revision (one transaction). Only the last of them carries the id, so a client
            // cut off in the middle resumes (Last-Event-ID) from the revision before and gets all of them again: it may
            // see a few twice (same revision, same event), never miss one.
            boolean lastOfRevision = i + 1 == events.size() || events.get(i + 1).revision() != e.revision();
            frame(frames, lastOfRevision ? e.revision() : null, e.type().name(), json.write(Replies.WatchEventReply.of(e)));
        }
        return offer(frames.toString().getBytes(StandardCharsets.UTF_8), false);
    }

    @Override
    public boolean resync(Resync resync) {
        StringBuilder frame = new StringBuilder(512);
        frame(frame, resync.revision(), Replies.ResyncReply.TYPE, json.write(Replies.ResyncReply.of(resync)));
        return offer(frame.toString().getBytes(StandardCharsets.UTF_8), false);
    }

    @Override
    public void heartbeat() {
        offer(": keepalive\n\n".getBytes(StandardCharsets.UTF_8), true);
    }

    /** Ends the stream after what is queued has been written, with a last comment saying why. */
    @Override
    public void close(String reason) {
        comment("closing: " + reason);
        boolean start;
        synchronized (this) {
            if (closed || closing) {
                return;
            }
            closing = true;
            start = !draining;
            draining = true;
        }
        if (start) {
            dispatchDrain();
        }
    }

    private static void frame(StringBuilder sb, Long id, String event, byte[] data) {
        if (id != null) {
            sb.append("id: ").append(id).append('\n');
        }
        sb.append("event: ").append(event).append('\n')
                .append("data: ").append(new String(data, StandardCharsets.UTF_8)).append("\n\n");
    }

    private void comment(String text) {
        offer((": " + text.replace('\n', ' ').replace('\r', ' ') + "\n\n").getBytes(StandardCharsets.UTF_8), false);
    }

    /**
     * Queues a frame and makes sure a drain will write it. {@code optional} frames (heartbeats) are skipped when
     * something is queued anyway. False when the stream is closed or the frame does not fit (the stream is then cut).
     */
    private boolean offer(byte[] frame, boolean optional) {
        boolean start = false;
        synchronized (this) {
            if (closed || closing) {
                return false;
            }
            if (optional && !queue.isEmpty()) {
                return true;
            }
            if (!queue.isEmpty() && queuedBytes + frame.length > MAX_QUEUED_BYTES) {
                closed = true;
                queue.clear();
                queuedBytes = 0;
            } else {
                queue.addLast(frame);
                queuedBytes += frame.length;
                if (!draining && out != null) {
                    draining = true;
                    start = true;
                }
                return finishOffer(start);
            }
        }
        log.debug("watch stream cut: its consumer is too slow (more than {} bytes queued)", MAX_QUEUED_BYTES);
        abort();
        return false;
    }

    private boolean finishOffer(boolean start) {
        if (start) {
            dispatchDrain();
        }
        return true;
    }

    private void dispatchDrain() {
        executor.execute(this::drain);
    }

    // ------------------------------------------------------------------ writing (one drain at a time)

    @Override
    public void onWritePossible() {
        drain();
    }

    private void drain() {
        ServletOutputStream o = out;
        if (o == null) {
            return; // not open yet: Jetty's first onWritePossible, after open, drains
        }
        try {
            while (o.isReady()) { // when false, Jetty calls onWritePossible later and that drain goes on
                byte[] next;
                boolean finish = false;
                synchronized (this) {
                    if (closed) {
                        draining = false;
                        return;
                    }
                    next = queue.pollFirst();
                    if (next != null) {
                        queuedBytes -= next.length;
                    } else if (!unflushed) {
                        draining = false;
                        if (!closing) {
                            return;
                        }
                        closed = true;
                        finish = true;
                    }
                }
                if (finish) {
                    finished();
                    return;
                }
                if (next == null) {
                    unflushed = false;
                    o.flush();
                } else {
                    o.write(next);
                    unflushed = true;
                }
            }
        } catch (IOException | IllegalStateException e) {
            log.debug("watch stream ended by the client: {}", e.toString());
            synchronized (this) {
                closed = true;
                draining = false;
                queue.clear();
            }
            finished();
        }
    }

    /** Cuts the connection at once (a stalled consumer would otherwise hold it until the idle timeout). */
    private void abort() {
        Context c = ctx;
        try {
            ServletContextRequest request = c == null ? null : ServletContextRequest.getServletContextRequest(c.req());
            if (request != null) {
                request.getConnectionMetaData().getConnection().getEndPoint().close();
            }
        } catch (RuntimeException e) {
            log.debug("could not cut a watch stream: {}", e.toString());
        }
        finished();
    }

    /** Runs once: the hub forgets the watch, and Javalin completes the exchange. */
    private void finished() {
        if (done.complete(null)) {
            onClose.run();
        }
    }

    // ------------------------------------------------------------------ container callbacks

    @Override
    public void onError(Throwable t) {
        synchronized (this) {
            closed = true;
            draining = false;
            queue.clear();
        }
        finished();
    }

    @Override
    public void onComplete(AsyncEvent event) {
        synchronized (this) {
            closed = true;
        }
        finished();
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        onComplete(event);
    }

    @Override
    public void onError(AsyncEvent event) {
        onError(event.getThrowable());
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        // nothing: one async cycle per stream
    }
}
