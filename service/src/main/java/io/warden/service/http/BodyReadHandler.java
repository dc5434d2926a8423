package io.warden.service.http;

import io.micrometer.core.instrument.Counter;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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
 * Reads every request body in full before the request reaches Javalin, without holding a thread while the bytes trickle
 * in, and within {@code body-read-timeout-ms} (otherwise 300 connections that send headers and one byte of their body
 * pin all of Jetty's threads in {@link Exchange#body}'s blocking read for the connection's long idle timeout). The
 * handlers then read the body from memory, so {@link Exchange#body} never blocks on the network.
 *
 * <ul>
 *   <li>No body expected (no Content-Length above 0, not chunked): passed on at once.</li>
 *   <li>A declared Content-Length above {@code maxBodyBytes}: answered 413 at once, before the request is routed.</li>
 *   <li>Otherwise the body is gathered; once complete, the request is passed on with it. A chunked body that passes
 *       {@code maxBodyBytes} is answered 413 when it does.</li>
 *   <li>A body not complete within the timeout: 408 {@code REQUEST_TIMEOUT} with {@code field: body}.</li>
 *   <li>A body that cannot be read (bad chunk sizes, the connection ending early): 400 with {@code field}
 *       {@code Transfer-Encoding} when chunked, else {@code body}.</li>
 * </ul>
 *
 * <p>An early answer (413 or 408: the body is still coming) closes the connection, but not at once. Closing a socket
 * with unread bytes in its receive buffer sends a TCP reset instead of an orderly end: a client still writing its body
 * then fails its write (java.net.http then sometimes reports "header parser received no bytes" instead of the
 * answer), and on some systems (Windows) the reset also throws away the answer the client has not read yet. Jetty 12.1
 * does not prevent it: when an exchange completes it only consumes what has already arrived (at most
 * {@code HttpConfiguration.maxUnconsumedRequestContentReads} reads), and if the body is not over, it closes the
 * connection as soon as more of it comes. So the answer goes out with {@code Connection: close} (after it, Jetty
 * half-closes the connection: the client reads the answer and the end of the stream), and the rest of the body is read
 * and dropped until it ends, or {@link #DISCARD_LIMIT_BYTES} more have come, or {@code body-read-timeout-ms} has passed
 * since the answer; only then is the exchange completed and the connection closed (past a limit with the client still
 * sending, the reset comes then, after the client has had that long to read the answer). The connection is not reused
 * even when the whole body was read: the answer already said it would close. A client that sent
 * {@code Expect: 100-continue} and nothing yet is not waited for: it was answered instead of being told to continue.
 *
 * <p>A body that cannot be read (400) is not discarded: its framing is broken, so where it ends cannot be known, and
 * Jetty refuses further reads of it.
 *
 * <p>Concurrency: per request, the reading ({@link Reader#run}) happens on whichever Jetty thread delivers content
 * (one at a time: Jetty calls a demand callback once per {@code demand}); the timers fire on Jetty's scheduler.
 * {@link Reader#phase} says what is done with each chunk: gathered, or dropped after an early answer. While
 * gathering, the reader and the body timer race for it: whoever moves it on first either passes the request on or
 * answers (413 from the reader, 408 from the timer), and the loser does nothing; a chunk the reader holds when it loses
 * is dropped. The gathered bytes are touched only by the reading side while gathering. Discarding ends once, by
 * whoever moves the phase to {@code DONE} (the reader at the end of the body, at the byte limit or on a failure; the
 * discard timer at its deadline); the exchange's callback completes once, when both that has happened and the
 * answer's write has finished ({@link Reader#unfinished}); the deadline that is not needed any more is cancelled.
 * Nothing here outlives the request; the handler itself holds no per-request state.
 */
final class BodyReadHandler extends Handler.Wrapper {
    /**
     * The most body bytes dropped after an early answer before the connection is closed anyway (Tomcat's equivalent,
     * {@code maxSwallowSize}, is 2 MiB). Dropped bytes are not kept; the limit bounds the bandwidth and the time a
     * client that sends without end can cost, and lets clients that send a body of a few MiB all at once read the
     * answer.
     */
    static final long DISCARD_LIMIT_BYTES = 16L << 20;

    private final int maxBodyBytes;
    private final long timeoutMs;
    private final Problems problems;
    private final Json json;
    private final Counter timeouts;
    private final Counter tooLarge;

    BodyReadHandler(int maxBodyBytes, long timeoutMs, Problems problems, Json json, Counter timeouts, Counter tooLarge) {
        this.maxBodyBytes = maxBodyBytes;
        this.timeoutMs = timeoutMs;
        this.problems = problems;
        this.json = json;
        this.timeouts = timeouts;
        this.tooLarge = tooLarge;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        Handler next = getHandler();
        if (next == null) {
            return false;
        }
        if (!bodyExpected(request)) {
            return next.handle(request, response, callback);
        }
        Reader reader = new Reader(next, request, response, callback);
        if (request.getLength() > maxBodyBytes) {
            reader.phase.set(Phase.DISCARDING);
            reader.refuseTooLarge();
        } else {
            Scheduler scheduler = request.getComponents().getScheduler();
            reader.timer = scheduler.schedule(reader::expire, timeoutMs, TimeUnit.MILLISECONDS);
        }
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

    /** What the reader does with a request's body. */
    private enum Phase {
        /** Gathered into memory for the handlers. */
        GATHERING,
        /** Gathered in full and passed on with the request. */
        PASSED,
        /** Answered early (413, 408); what still comes is read and dropped. */
        DISCARDING,
        /** Answered, and nothing more will be read. */
        DONE
    }

    /** Gathers one request's body, or drops it after an early answer; {@link #run} is the demand callback. */
    private final class Reader implements Runnable {
        private final Handler next;
        private final Request request;
        private final Response response;
        private final Callback callback;
        final AtomicReference<Phase> phase = new AtomicReference<>(Phase.GATHERING);
        /** Written only by the reading side, while gathering. */
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        /** Body bytes read (gathered or dropped); only the reading side touches it. */
        private long received;
        /** Bytes dropped since the early answer; only the reading side touches it. */
        private long discarded;
        /** After an early answer: its write and the discarding; the exchange completes when both have finished. */
        private final AtomicInteger unfinished = new AtomicInteger(2);
        private volatile Throwable writeFailure;
        /** The body's deadline while gathering, then the discarding's. */
        volatile Scheduler.Task timer;

        Reader(Handler next, Request request, Response response, Callback callback) {
            this.next = next;
            this.request = request;
            this.response = response;
            this.callback = callback;
        }

        @Override
        public void run() {
            while (true) {
                Phase now = phase.get();
                if (now == Phase.PASSED || now == Phase.DONE) {
                    return;
                }
                Content.Chunk chunk = request.read();
                if (chunk == null) {
                    if (now == Phase.DISCARDING && received == 0 && expectsContinue()) {
                        // The client waits for "100 Continue" before it sends the body, and has had a final answer
                        // instead: nothing will come. (Demanding content now would make Jetty send the 100.)
                        endDiscarding();
                        return;
                    }
                    request.demand(this);
                    return;
                }
                if (Content.Chunk.isFailure(chunk)) {
                    if (phase.compareAndSet(Phase.GATHERING, Phase.DISCARDING)) {
                        cancelTimer();
                        // Bad chunking, or the connection ended mid-body (then nobody reads this answer).
                        boolean chunked = request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
                        String field = chunked ? "Transfer-Encoding" : "body";
                        Throwable cause = chunk.getFailure();
                        answer(400, "INVALID_ARGUMENT", field, field + ": the " + (chunked ? "chunked " : "")
                                + "body could not be read (" + (cause == null ? "failed" : cause.getMessage()) + ")");
                    }
                    endDiscarding(); // nothing more can be read: the body's framing is broken or the connection gone
                    return;
                }
                ByteBuffer bytes = chunk.getByteBuffer();
                int size = bytes.remaining();
                received += size;
                boolean last = chunk.isLast();
                if (now == Phase.GATHERING) {
                    int take = Math.min(size, maxBodyBytes + 1 - body.size());
                    byte[] copy = new byte[take];
                    bytes.get(copy);
                    body.write(copy, 0, take);
                    chunk.release();
                    if (body.size() > maxBodyBytes && phase.compareAndSet(Phase.GATHERING, Phase.DISCARDING)) {
                        cancelTimer();
                        refuseTooLarge();
                        discarded = size - take;
                    } else if (last && phase.compareAndSet(Phase.GATHERING, Phase.PASSED)) {
                        cancelTimer();
                        pass(new BufferedBody(request, ByteBuffer.wrap(body.toByteArray())));
                        return;
                    } else if (phase.get() == Phase.DISCARDING) {
                        discarded += size; // the timer answered 408 while this chunk was being read
                    }
                } else {
                    chunk.release();
                    discarded += size;
                }
                if (phase.get() == Phase.DISCARDING && (last || discarded >= DISCARD_LIMIT_BYTES)) {
                    endDiscarding();
                    return;
                }
            }
        }

        private boolean expectsContinue() {
            return request.getHeaders().contains(HttpHeader.EXPECT, HttpHeaderValue.CONTINUE.asString());
        }

        private void cancelTimer() {
            Scheduler.Task t = timer;
            if (t != null) {
                t.cancel();
            }
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

        /** The body timer: 408 if the body is still being gathered. */
        void expire() {
            if (!phase.compareAndSet(Phase.GATHERING, Phase.DISCARDING)) {
                return;
            }
            timeouts.increment();
            answer(408, "REQUEST_TIMEOUT", "body", "body: the request body did not arrive within " + timeoutMs + " ms");
        }

        /** 413; the caller has moved the phase to {@code DISCARDING}. */
        void refuseTooLarge() {
            tooLarge.increment();
            ProblemException problem = ProblemException.tooLarge(maxBodyBytes);
            write(problem, problem.status());
        }

        private void answer(int status, String code, String field, String detail) {
            write(new ProblemException(status, code, detail, Map.of("field", field)), status);
        }

        /**
         * Answers with the problem document and {@code Connection: close}, and starts the discarding's deadline. The
         * exchange completes when the write has finished and discarding has ended.
         */
        private void write(ProblemException problem, int status) {
            byte[] doc = json.write(problems.document(problem, request.getMethod() + " " + request.getHttpURI().getPath()));
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, Problems.CONTENT_TYPE);
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, doc.length);
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
            Scheduler.Task deadline = request.getComponents().getScheduler()
                    .schedule(this::endDiscarding, timeoutMs, TimeUnit.MILLISECONDS);
            timer = deadline;
            if (phase.get() != Phase.DISCARDING) {
                deadline.cancel(); // discarding ended meanwhile (the 408's race: the last bytes came), before it saw this
            }
            response.write(true, ByteBuffer.wrap(doc), Callback.from(this::finishOne, failure -> {
                writeFailure = failure;
                finishOne();
            }));
        }

        /**
         * Ends discarding, once: by the reader (the body ended, failed or reached the limit) or by the timer. A demand
         * still pending then (the timer's case) makes Jetty end the exchange as failed and close the connection, which
         * is what the deadline is for.
         */
        private void endDiscarding() {
            if (phase.compareAndSet(Phase.DISCARDING, Phase.DONE)) {
                cancelTimer();
                finishOne();
            }
        }

        private void finishOne() {
            if (unfinished.decrementAndGet() == 0) {
                Throwable failure = writeFailure;
                if (failure == null) {
                    callback.succeeded();
                } else {
                    callback.failed(failure);
                }
            }
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
