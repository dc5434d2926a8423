package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.watch.EventBatch;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

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
    /** Events serialised, ever (tests: once per event, not once per watch). */
    static final AtomicLong ENCODED = new AtomicLong();
    private static final Json JSON = new Json();
    private static final Logger log = LoggerFactory.getLogger(SseStream.class);

    private final Json json;
    private final Executor executor;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** Frames ({@code byte[]}) and transactions ({@link Slice}) to write, in order. Guarded by this. */
    private final ArrayDeque<Object> queue = new ArrayDeque<>();
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

    /**
     * One transaction's events (those the watch covers) as frames: the events' frames are the batch's, made once for
     * every stream (issue 10, finding 15), and only the last carries the id, so {@code Last-Event-ID} never names a
     * revision whose events were not all sent (finding 10).
     */
    @Override
    public boolean events(EventBatch batch, int[] selected) {
        return slice(batch, selected, false);
    }

    /** A transaction from the history: its frames are kept there anyway, so it does not count against the queue's bound. */
    @Override
    public boolean replay(EventBatch batch, int[] selected) {
        return slice(batch, selected, true);
    }

    private boolean slice(EventBatch batch, int[] selected, boolean replayed) {
        byte[][] frames = batch.frames(SseStream::encode);
        int n = selected == null ? frames.length : selected.length;
        if (n == 0) {
            return true;
        }
        byte[] idLine = ("id: " + batch.revision() + "\n").getBytes(StandardCharsets.US_ASCII);
        long bytes = idLine.length;
        for (int k = 0; k < n; k++) {
            bytes += frames[selected == null ? k : selected[k]].length;
        }
        return offer(new Slice(frames, selected, n, idLine, replayed ? 0 : bytes), replayed ? 0 : bytes, false);
    }

    @Override
    public boolean resync(Resync resync) {
        StringBuilder frame = new StringBuilder(512);
        frame.append("id: ").append(resync.revision()).append('\n');
        frame.append("event: ").append(Replies.ResyncReply.TYPE).append('\n')
                .append("data: ").append(new String(json.write(Replies.ResyncReply.of(resync)), StandardCharsets.UTF_8))
                .append("\n\n");
        byte[] bytes = frame.toString().getBytes(StandardCharsets.UTF_8);
        return offer(bytes, bytes.length, false);
    }

    @Override
    public void heartbeat() {
        byte[] bytes = ": keepalive\n\n".getBytes(StandardCharsets.UTF_8);
        offer(bytes, bytes.length, true);
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

    /** The frame of one event without its id: {@code event: TYPE}, {@code data: JSON}, a blank line. */
    static byte[] encode(WatchEvent e) {
        ENCODED.incrementAndGet();
        byte[] data = JSON.write(Replies.WatchEventReply.of(e));
        byte[] head = ("event: " + e.type().name() + "\ndata: ").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[head.length + data.length + 2];
        System.arraycopy(head, 0, out, 0, head.length);
        System.arraycopy(data, 0, out, head.length, data.length);
        out[out.length - 2] = '\n';
        out[out.length - 1] = '\n';
        return out;
    }

    /**
     * A transaction's frames queued on this stream, written piece by piece: the frames of the selected events, with
     * the id line before the last one. The frames are shared with every other stream; {@code next} belongs to the
     * running drain.
     */
    private static final class Slice {
        final byte[][] frames;
        final int[] selected;
        final int count;
        final byte[] idLine;
        final long bytes;
        int next;

        Slice(byte[][] frames, int[] selected, int count, byte[] idLine, long bytes) {
            this.frames = frames;
            this.selected = selected;
            this.count = count;
            this.idLine = idLine;
            this.bytes = bytes;
        }

        /** The next piece to write; {@link #done()} after the last. */
        byte[] nextPiece() {
            int j = next++;
            if (j < count - 1) {
                return frame(j);
            }
            return j == count - 1 ? idLine : frame(count - 1);
        }

        boolean done() {
            return next > count;
        }

        private byte[] frame(int k) {
            return frames[selected == null ? k : selected[k]];
        }
    }

    private void comment(String text) {
        byte[] bytes = (": " + text.replace('\n', ' ').replace('\r', ' ') + "\n\n").getBytes(StandardCharsets.UTF_8);
        offer(bytes, bytes.length, false);
    }

    /**
     * Queues an item (a frame, or a {@link Slice}) of {@code bytes} and makes sure a drain will write it.
     * {@code optional} items (heartbeats) are skipped when something is queued anyway. False when the stream is closed
     * or the item does not fit (the stream is then cut).
     */
    private boolean offer(Object item, long bytes, boolean optional) {
        boolean start = false;
        synchronized (this) {
            if (closed || closing) {
                return false;
            }
            if (optional && !queue.isEmpty()) {
                return true;
            }
            if (bytes > 0 && !queue.isEmpty() && queuedBytes + bytes > MAX_QUEUED_BYTES) {
                closed = true;
                queue.clear();
                queuedBytes = 0;
            } else {
                queue.addLast(item);
                queuedBytes += bytes;
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
                byte[] next = null;
                boolean finish = false;
                synchronized (this) {
                    if (closed) {
                        draining = false;
                        return;
                    }
                    Object head = queue.peekFirst();
                    if (head instanceof byte[] frame) {
                        queue.pollFirst();
                        queuedBytes -= frame.length;
                        next = frame;
                    } else if (head instanceof Slice slice) {
                        next = slice.nextPiece();
                        if (slice.done()) {
                            queue.pollFirst();
                            queuedBytes -= slice.bytes;
                        }
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
