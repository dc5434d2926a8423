package io.warden.client;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * HTTP calls to the gateways of one cell, with failover: every call goes to the current endpoint; a transport
 * failure or any answer but one of Warden's final verdicts ({@link Failures#retryable}: a 503, a 500, a 404 without
 * Warden's code, ...) moves the current endpoint on to the next one (round robin), and {@link #withRetries}
 * repeats the call there after a bounded backoff. Gateways hold no truth, so any of them can answer any call; a
 * keepalive at a new gateway makes it take the session over.
 *
 * <p>Calls, event streams and the keepalive WebSocket go through the client's own {@link Http1Client}.
 *
 * <p>Concurrency: thread-safe. {@code current} is the only mutable state besides {@code open} (a concurrent set of the
 * calls not yet done) and {@code closed} (false → true once); a failed attempt moves it on with a
 * compare-and-set from the index it used, so concurrent failures at one endpoint skip it once, not once each.
 * Replies are handled on the threads of the {@link Http1Client}'s connections, retries are scheduled on the client's
 * scheduler.
 */
final class HttpGateway {
    /** One call of docs/api.md; {@code what} names it in messages. */
    record Call<T>(String method, String path, Object body, Class<T> type, String what) {
    }

    /** A successful answer and how many attempts it took (more than one: an earlier attempt may have been applied). */
    record Reply<T>(T value, int attempts) {
    }

    /** One attempt of a call: what to send and how long to wait for the answer. */
    record Attempt<T>(Call<T> call, Duration timeout) {
    }

    private static final byte[] NO_BODY = new byte[0];
    private static final AtomicInteger SOCKETS = new AtomicInteger();
    private static final String[] JSON_HEADERS = {"Accept", "application/json", "Content-Type", "application/json"};

    private final List<String> endpoints;
    private final AtomicInteger current = new AtomicInteger();
    /** Calls, event streams and the keepalive socket. */
    private final Http1Client http1;
    /** {@link #JSON_HEADERS} and the credentials, if any. */
    private final String[] callHeaders;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier ticker;
    /** The calls with retries not yet done: {@link #close()} fails them (a retry it would drop never completes them). */
    private final Set<CompletableFuture<?>> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** {@code Bearer TOKEN}, sent with every call, stream and socket; null without a token. */
    private final String authorization;

    HttpGateway(List<URI> endpoints, ScheduledExecutorService scheduler, LongSupplier ticker) {
        this(endpoints, scheduler, ticker, null, null);
    }

    HttpGateway(List<URI> endpoints, ScheduledExecutorService scheduler, LongSupplier ticker, String bearerToken,
                javax.net.ssl.SSLContext ssl) {
        this.endpoints = endpoints.stream().map(u -> u.toString().replaceAll("/+$", "")).toList();
        this.scheduler = scheduler;
        this.ticker = ticker;
        this.authorization = bearerToken == null ? null : "Bearer " + bearerToken;
        this.http1 = new Http1Client(ssl, scheduler);
        this.callHeaders = authorization == null ? JSON_HEADERS
                : new String[]{"Accept", "application/json", "Content-Type", "application/json", "Authorization", authorization};
    }

    /**
     * Closes the connections of calls and streams; calls in flight fail, and so do calls waiting for a retry (the
     * client's scheduler is shut down after this, which drops the retries it holds: without this, a caller blocked on
     * such a call, e.g. a {@link Hold#release()}, would wait forever).
     */
    void close() {
        closed = true;
        for (CompletableFuture<?> call : open) {
            call.completeExceptionally(new WardenClientException("the call was not done when the client closed"));
        }
        http1.close();
    }

    /** The headers of an event stream's request: what it accepts, and the credentials, if any. */
    String[] streamHeaders(String accept) {
        return authorization == null ? new String[]{"Accept", accept}
                : new String[]{"Accept", accept, "Authorization", authorization};
    }

    /** A response to read as a stream (a watch) from the endpoint {@code base}, on a connection of its own. */
    Http1Client.Stream stream(String base) {
        return http1.stream(base);
    }

    /** Connections of calls open now (tests, diagnostics). */
    int callConnections() {
        return http1.connections();
    }

    /**
     * Opens the WebSocket {@code target} at the endpoint {@code base}, with the credentials, if any; see
     * {@link Http1WebSocket#connect}.
     */
    CompletableFuture<Http1WebSocket> webSocket(String base, String target, Duration timeout, Http1WebSocket.Listener listener) {
        String[] headers = authorization == null ? new String[0] : new String[]{"Authorization", authorization};
        return Http1WebSocket.connect(http1, base, target, headers, timeout, listener,
                "warden-keepalive-" + SOCKETS.incrementAndGet());
    }

    /** The endpoint the next call goes to. */
    String currentEndpoint() {
        return endpoints.get(current.get());
    }

    /** The index of {@link #currentEndpoint()}; with {@link #endpoint(int)} and {@link #moveOn(int)} for streams. */
    int currentIndex() {
        return current.get();
    }

    /** The base URL of endpoint {@code index}, without a trailing slash. */
    String endpoint(int index) {
        return endpoints.get(index);
    }

    int endpointCount() {
        return endpoints.size();
    }

    /** One attempt at the current endpoint. A retryable failure moves the current endpoint on. */
    <T> CompletableFuture<T> once(Call<T> call, Duration timeout) {
        int index = current.get();
        String base = endpoints.get(index);
        CompletableFuture<Http1Client.Response> sent;
        try {
            byte[] body = call.body() != null ? Wire.JSON.writeValueAsBytes(call.body())
                    : "GET".equals(call.method()) ? null : NO_BODY;
            sent = http1.send(base, call.method(), call.path(), callHeaders, body, timeout);
        } catch (IOException | IllegalArgumentException e) {
            return CompletableFuture.failedFuture(new WardenClientException(call.what() + ": cannot build the request: " + e, e));
        }
        return sent.handle((response, error) -> {
            if (error != null) {
                moveOn(index);
                throw new CompletionException(Failures.unwrap(error));
            }
            return decode(call, base, index, response.status(), response.body());
        });
    }

    /**
     * Attempts {@code call} until it succeeds, fails for good (an answer that is no {@link Failures#retryable}
     * failure), or the next attempt would start after {@code deadlineNanos} (on the client's ticker). There is always
     * at least one attempt. Cancelling the returned future stops further attempts (the one in flight runs on).
     */
    <T> CompletableFuture<Reply<T>> withRetries(Call<T> call, Duration attemptTimeout, long deadlineNanos) {
        Attempt<T> same = new Attempt<>(call, attemptTimeout);
        return withRetries(() -> same, deadlineNanos);
    }

    /**
     * As {@link #withRetries(Call, Duration, long)}, with each attempt made when it starts: a call whose body depends
     * on the time (an acquire sends what remains of the caller's wait) is made afresh each time.
     */
    <T> CompletableFuture<Reply<T>> withRetries(Supplier<Attempt<T>> attempts, long deadlineNanos) {
        CompletableFuture<Reply<T>> result = new CompletableFuture<>();
        open.add(result);
        result.whenComplete((reply, error) -> open.remove(result));
        if (closed) {
            // Note on concurrency: close() may have gone through `open` before the add; failing it twice is harmless.
            result.completeExceptionally(new WardenClientException("the client is closed"));
            return result;
        }
        attempt(attempts, deadlineNanos, 1, result);
        return result;
    }

    private <T> void attempt(Supplier<Attempt<T>> attempts, long deadline, int n, CompletableFuture<Reply<T>> result) {
        if (result.isDone()) {
            return;
        }
        Attempt<T> next = attempts.get();
        Call<T> call = next.call();
        once(call, next.timeout()).whenComplete((value, error) -> {
            if (error == null) {
                result.complete(new Reply<>(value, n));
                return;
            }
            if (!Failures.retryable(error)) {
                result.completeExceptionally(Failures.unwrap(error));
                return;
            }
            long delayMs = Backoff.delayMs(n);
            if (ticker.getAsLong() + TimeUnit.MILLISECONDS.toNanos(delayMs) - deadline > 0) {
                result.completeExceptionally(exhausted(call, n, error));
                return;
            }
            try {
                scheduler.schedule(() -> attempt(attempts, deadline, n + 1, result), delayMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                result.completeExceptionally(new WardenClientException(call.what() + ": the client is closed", error));
            }
        });
    }

    /** Moves the current endpoint on from {@code from}, unless another failure already did. */
    void moveOn(int from) {
        current.compareAndSet(from, (from + 1) % endpoints.size());
    }

    private <T> T decode(Call<T> call, String base, int index, int status, byte[] body) {
        if (status >= 200 && status < 300) {
            try {
                return Wire.JSON.readValue(body, call.type());
            } catch (IOException e) {
                moveOn(index); // not a gateway's answer (a proxy's page?): the next endpoint may do better
                throw new CompletionException(new WardenClientException(
                        call.what() + " at " + base + ": unreadable answer (HTTP " + status + "): " + e.getMessage(),
                        null, status, e));
            }
        }
        WardenClientException failure = Failures.fromAnswer(call.what() + " at " + base, status, problem(body));
        if (Failures.retryable(failure)) {
            moveOn(index);
        }
        throw new CompletionException(failure);
    }

    private static Wire.Problem problem(byte[] body) {
        try {
            return body.length == 0 ? null : Wire.JSON.readValue(body, Wire.Problem.class);
        } catch (IOException notAProblemDocument) {
            return null;
        }
    }

    private WardenClientException exhausted(Call<?> call, int attempts, Throwable last) {
        Throwable cause = Failures.unwrap(last);
        String code = cause instanceof WardenClientException e ? e.code().orElse(null) : null;
        int status = cause instanceof WardenClientException e ? e.status() : 0;
        return new WardenClientException(call.what() + ": no gateway answered after " + attempts + " attempts on "
                + endpoints + "; last: " + cause, code, status, cause);
    }
}
