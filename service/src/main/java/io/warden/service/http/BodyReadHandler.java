package io.warden.service.http;

import io.micrometer.core.instrument.Counter;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.content.ByteBufferContentSource;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Reads every request body in full before the request reaches Javalin, without holding a thread while the bytes
 * trickle in, and within {@code body-read-timeout-ms} (issue 12: 300 connections that sent headers and one byte of
 * their body pinned all of Jetty's threads in {@link Exchange#body}'s blocking read for the connection's long idle
 * timeout). The handlers then read the body from memory, so {@link Exchange#body} never blocks on the network.
 *
 * <ul>
 *   <li>No body expected (no Content-Length above 0, not chunked): passed on at once.</li>
 *   <li>A declared Content-Length above {@code maxBodyBytes}: passed on unread; {@link Exchange#body} answers 413.</li>
 *   <li>Otherwise at most {@code maxBodyBytes + 1} bytes are gathered (one more than allowed, so the handler still
 *       sees a chunked body that is too large and answers 413), then the request is passed on with them.</li>
 *   <li>A body not complete within the timeout: 408 {@code REQUEST_TIMEOUT} with {@code field: body}, and the
 *       connection is closed.</li>
 *   <li>A body that cannot be read (bad chunk sizes, the connection ending early): 400 with {@code field}
 *       {@code Transfer-Encoding} when chunked, else {@code body}, and the connection is closed.</li>
 * </ul>
 *
 * <p>Concurrency: per request, the reading ({@link Reader#run}) happens on whichever Jetty thread delivers content
 * (one at a time: Jetty calls a demand callback once per {@code demand}); the timeout fires on Jetty's scheduler.
 * The two race for {@link Reader#settled}: whoever sets it first either passes the request on or answers 408, and
 * the loser does nothing. The gathered bytes are touched only by the reading side before it settles. Nothing here
 * outlives the request; the handler itself holds no per-request state.
 */
final class BodyReadHandler extends Handler.Wrapper {
    private final int maxBodyBytes;
    private final long timeoutMs;
    private final Problems problems;
    private final Json json;
    private final Counter timeouts;

    BodyReadHandler(int maxBodyBytes, long timeoutMs, Problems problems, Json json, Counter timeouts) {
        this.maxBodyBytes = maxBodyBytes;
        this.timeoutMs = timeoutMs;
        this.problems = problems;
        this.json = json;
        this.timeouts = timeouts;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        Handler next = getHandler();
        if (next == null) {
            return false;
        }
        if (!bodyExpected(request) || request.getLength() > maxBodyBytes) {
            return next.handle(request, response, callback);
        }
        Reader reader = new Reader(next, request, response, callback);
        Scheduler scheduler = request.getComponents().getScheduler();
        reader.timer = scheduler.schedule(reader::expire, timeoutMs, TimeUnit.MILLISECONDS);
        reader.run();
        return true;
    }

    private static boolean bodyExpected(Request request) {
        boolean expected = false;
        for (HttpField field : request.getHeaders()) {
            if (field.getHeader() == HttpHeader.CONTENT_LENGTH) {
                try {
                    expected |= field.getLongValue() > 0;
                } catch (NumberFormatException e) {
                    return false; // Jetty's parser has already refused this request; let it be answered as it is
                }
            } else if (field.getHeader() == HttpHeader.TRANSFER_ENCODING) {
                expected |= field.contains(HttpHeaderValue.CHUNKED.asString());
            }
        }
        return expected;
    }

    /** Gathers one request's body; {@link #run} is the demand callback. */
    private final class Reader implements Runnable {
        private final Handler next;
        private final Request request;
        private final Response response;
        private final Callback callback;
        private final AtomicBoolean settled = new AtomicBoolean();
        /** Written only by the reading side, before it settles. */
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        volatile Scheduler.Task timer;

        Reader(Handler next, Request request, Response response, Callback callback) {
            this.next = next;
            this.request = request;
            this.response = response;
            this.callback = callback;
        }

        @Override
        public void run() {
            while (!settled.get()) {
                Content.Chunk chunk = request.read();
                if (chunk == null) {
                    request.demand(this);
                    return;
                }
                if (Content.Chunk.isFailure(chunk)) {
                    if (settle()) {
                        // Bad chunking, or the connection ended mid-body (then nobody reads this answer).
                        boolean chunked = request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
                        String field = chunked ? "Transfer-Encoding" : "body";
                        Throwable cause = chunk.getFailure();
                        answer(400, "INVALID_ARGUMENT", field, field + ": the " + (chunked ? "chunked " : "")
                                + "body could not be read (" + (cause == null ? "failed" : cause.getMessage()) + ")");
                    }
                    return;
                }
                ByteBuffer bytes = chunk.getByteBuffer();
                int take = Math.min(bytes.remaining(), maxBodyBytes + 1 - body.size());
                byte[] copy = new byte[take];
                bytes.get(copy);
                body.write(copy, 0, take);
                boolean last = chunk.isLast();
                chunk.release();
                if (last || body.size() > maxBodyBytes) {
                    if (settle()) {
                        pass(new BufferedBody(request, ByteBuffer.wrap(body.toByteArray())));
                    }
                    return;
                }
            }
        }

        private boolean settle() {
            if (!settled.compareAndSet(false, true)) {
                return false;
            }
            Scheduler.Task t = timer;
            if (t != null) {
                t.cancel();
            }
            return true;
        }

        private void pass(Request wrapped) {
            try {
                if (!next.handle(wrapped, response, callback)) {
                    Response.writeError(wrapped, response, callback, 404);
                }
            } catch (Throwable t) {
                Response.writeError(wrapped, response, callback, t);
            }
        }

        void expire() {
            if (!settled.compareAndSet(false, true)) {
                return;
            }
            timeouts.increment();
            answer(408, "REQUEST_TIMEOUT", "body", "body: the request body did not arrive within " + timeoutMs + " ms");
        }

        /** Answers with a problem document naming {@code field} and closes the connection (the body is not consumed). */
        private void answer(int status, String code, String field, String detail) {
            ProblemException problem = new ProblemException(status, code, detail, Map.of("field", field));
            byte[] doc = json.write(problems.document(problem, request.getMethod() + " " + request.getHttpURI().getPath()));
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, Problems.CONTENT_TYPE);
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, doc.length);
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
            response.write(true, ByteBuffer.wrap(doc), callback);
        }
    }

    /** The request with its body served from memory. */
    private static final class BufferedBody extends Request.Wrapper {
        private final Content.Source body;

        BufferedBody(Request request, ByteBuffer bytes) {
            super(request);
            this.body = new ByteBufferContentSource(bytes);
        }

        @Override
        public Content.Chunk read() {
            return body.read();
        }

        @Override
        public void demand(Runnable demandCallback) {
            body.demand(demandCallback);
        }

        @Override
        public void fail(Throwable failure) {
            body.fail(failure);
        }
    }

}
