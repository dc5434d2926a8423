package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.watch.EventBatch;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import io.warden.service.watch.WatchMemory;
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
 * <p>Frames: {@code event: <type>}, {@code data: <json>} and a blank line per event, and {@code id: <revision>} on the
 * last event of each ZooKeeper transaction only (the id is what a browser's {@code EventSource} sends back as
 * {@code Last-Event-ID}: it never names a transaction the stream did not send whole); a RESYNC carries its revision as
 * its id; comments ({@code : ...}) as heartbeats. Events come whole per transaction ({@link #events}); their frames are
 * made once per event for every stream ({@link EventBatch#frames}).
 *
 * <p>Backpressure: what waits to be written counts twice. Against this stream's own bound, {@link #MAX_QUEUED_BYTES} of
 * live events (a single larger item, such as a big RESYNC or transaction, is still taken when the queue is empty;
 * transactions replayed from the history do not count, the history keeps them anyway). And against the gateway's
 * {@link WatchMemory}, everything, shared frames once. An item that does not fit means the consumer is too slow, or
 * this stream holds more than its share while memory is short: the connection is cut, and the client resumes from the
 * last id it got.
 *
 * <p>Concurrency: the hub's thread offers items; a drain, on {@code executor} or in Jetty's {@code onWritePossible},
 * writes them. At most one drain runs at a time: {@code draining} is true from when one is started (or, at first, until
 * Jetty's first {@code onWritePossible}) until it finds the queue empty and the output flushed. The queue, its byte
 * counts and the flags are guarded by {@code this} ({@code pinned} is also volatile, for the budget's unlocked look);
 * {@code unflushed} and a {@link Slice}'s cursor belong to the running drain. {@link WatchMemory#take} is never called
 * with this monitor held (it may cut other streams); {@link WatchMemory#give} may be (it takes no other lock).
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
    /** Live bytes queued: what {@link #MAX_QUEUED_BYTES} bounds. */
    private long queuedBytes;
    /** Everything queued, shared frames in full: what this stream keeps from being freed. */
    private volatile long pinned;
    private final WatchMemory memory;
    private final WatchMemory.Account account = new WatchMemory.Account() {
        @Override
        public long pinnedBytes() {
            return pinned;
        }

        @Override
        public void cutForMemory() {
            cut("it holds more than its share of the gateway's watch memory");
        }
    };
    private boolean draining = true;
    private boolean closing;
    private boolean closed;
    private boolean unflushed;
    /** Whether the head frame ({@code byte[]}) has been handed to the output; guarded by this. */
    private boolean headWritten;
    private volatile Runnable onClose = () -> { };
    private volatile Context ctx;
    private volatile ServletOutputStream out;

    WatchMemory.Account account() {
        return account;
    }

    /** Whether this stream leaves session ids out; fixed at construction. */
    private final boolean redacted;

    SseStream(Json json, Executor executor, WatchMemory memory) {
        this(json, executor, memory, false);
    }

    /**
     * {@code redacted}: events and RESYNCs without session ids (a watcher that may not see them: docs/api.md,
     * authorization).
     */
    SseStream(Json json, Executor executor, WatchMemory memory, boolean redacted) {
        this.json = json;
        this.executor = executor;
        this.memory = memory;
        this.redacted = redacted;
        memory.register(account);
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
     * every stream, and only the last carries the id, so {@code Last-Event-ID} never names a revision whose events were
     * not all sent.
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
        byte[][] frames = redacted ? batch.redactedFrames(SseStream::encodeRedacted) : batch.frames(SseStream::encode);
        int n = selected == null ? frames.length : selected.length;
        if (n == 0) {
            return true;
        }
        byte[] idLine = ("id: " + batch.revision() + "\n").getBytes(StandardCharsets.US_ASCII);
        long bytes = idLine.length;
        for (int k = 0; k < n; k++) {
            bytes += frames[selected == null ? k : selected[k]].length;
        }
        return offer(new Slice(frames, selected, n, idLine, bytes, replayed, batch), false);
    }

    @Override
    public boolean resync(Resync resync) {
        byte[] head = ("id: " + resync.revision() + "\nevent: " + Replies.ResyncReply.TYPE + "\ndata: ")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] data = json.write(Replies.ResyncReply.of(resync, redacted));
        byte[] frame = new byte[head.length + data.length + 2];
        System.arraycopy(head, 0, frame, 0, head.length);
        System.arraycopy(data, 0, frame, head.length, data.length);
        frame[frame.length - 2] = '\n';
        frame[frame.length - 1] = '\n';
        return offer(frame, false);
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

    /** The frame of one event without its id: {@code event: TYPE}, {@code data: JSON}, a blank line. */
    static byte[] encode(WatchEvent e) {
        return encode(e, Replies.WatchEventReply.of(e));
    }

    /** As {@link #encode}, without the session id: for a watcher that may not see it. */
    static byte[] encodeRedacted(WatchEvent e) {
        return encode(e, Replies.WatchEventReply.redacted(e));
    }

    private static byte[] encode(WatchEvent e, Replies.WatchEventReply reply) {
        ENCODED.incrementAndGet();
        byte[] data = JSON.write(reply);
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
        /** From the history: not counted against {@link #MAX_QUEUED_BYTES}. */
        final boolean replayed;
        final EventBatch batch;
        int next;

        Slice(byte[][] frames, int[] selected, int count, byte[] idLine, long bytes, boolean replayed, EventBatch batch) {
            this.frames = frames;
            this.selected = selected;
            this.count = count;
            this.idLine = idLine;
            this.bytes = bytes;
            this.replayed = replayed;
            this.batch = batch;
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
        offer((": " + text.replace('\n', ' ').replace('\r', ' ') + "\n\n").getBytes(StandardCharsets.UTF_8), false);
    }

    /**
     * Queues an item (a frame, or a {@link Slice}) and makes sure a drain will write it. {@code optional} items
     * (heartbeats) are skipped when something is queued anyway. False when the stream is closed or the item does not
     * fit (the stream is then cut).
     */
    private boolean offer(Object item, boolean optional) {
        long live = liveBytes(item);
        synchronized (this) {
            if (closed || closing) {
                return false;
            }
            if (optional && !queue.isEmpty()) {
                return true;
            }
            if (live > 0 && !queue.isEmpty() && queuedBytes + live > MAX_QUEUED_BYTES) {
                live = -1;
            }
        }
        if (live < 0) {
            cut("its consumer is too slow (more than " + MAX_QUEUED_BYTES + " bytes queued)");
            return false;
        }
        // Outside this monitor: the budget may cut other streams to make room.
        if (!memory.take(account, privateBytes(item), item instanceof Slice slice ? slice.batch : null)) {
            cut("the gateway's watch memory is full (" + memory.limit() + " bytes)");
            return false;
        }
        boolean start = false;
        synchronized (this) {
            if (closed || closing) {
                giveBack(item);
                return false;
            }
            queue.addLast(item);
            queuedBytes += live;
            pinned += allBytes(item);
            if (!draining && out != null) {
                draining = true;
                start = true;
            }
        }
        return finishOffer(start);
    }

    /** Cuts the connection now, dropping (and giving back) everything queued; the client resumes from its last id. */
    private void cut(String why) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            discardQueue();
        }
        log.debug("watch stream cut: {}", why);
        abort();
    }

    /** Under this monitor: drops everything queued and gives it back to the budget. */
    private void discardQueue() {
        for (Object item : queue) {
            giveBack(item);
        }
        queue.clear();
        headWritten = false;
        queuedBytes = 0;
        pinned = 0;
    }

    private void giveBack(Object item) {
        memory.give(privateBytes(item), item instanceof Slice slice ? slice.batch : null);
    }

    private static long liveBytes(Object item) {
        return item instanceof Slice slice ? (slice.replayed ? 0 : slice.bytes) : ((byte[]) item).length;
    }

    private static long allBytes(Object item) {
        return item instanceof Slice slice ? slice.bytes : ((byte[]) item).length;
    }

    /** What only this stream holds: a frame, or a slice's id line (its frames are the batch's, counted once). */
    private static long privateBytes(Object item) {
        return item instanceof Slice slice ? slice.idLine.length : ((byte[]) item).length;
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
                    // The head leaves the queue (and the budget) only once its last write has completed: isReady()
                    // was true just now. Until then Jetty may still hold its bytes.
                    Object head = queue.peekFirst();
                    while (head != null && (head instanceof Slice slice ? slice.done() : headWritten)) {
                        queue.pollFirst();
                        headWritten = false;
                        queuedBytes -= liveBytes(head);
                        pinned -= allBytes(head);
                        giveBack(head);
                        head = queue.peekFirst();
                    }
                    if (head instanceof byte[] frame) {
                        next = frame;
                        headWritten = true;
                    } else if (head instanceof Slice slice) {
                        next = slice.nextPiece();
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
                discardQueue();
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

    /** Runs once: the budget and the hub forget the watch, and Javalin completes the exchange. */
    private void finished() {
        if (done.complete(null)) {
            synchronized (this) {
                closed = true;
                discardQueue();
            }
            memory.unregister(account);
            onClose.run();
        }
    }

    // ------------------------------------------------------------------ container callbacks

    @Override
    public void onError(Throwable t) {
        synchronized (this) {
            closed = true;
            draining = false;
            discardQueue();
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
