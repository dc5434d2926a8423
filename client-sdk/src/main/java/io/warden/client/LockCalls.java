package io.warden.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The lock calls of one session (docs/api.md, {@code /v1/acquire}, {@code /v1/release}), each with retries and
 * failover. All of them are safe to repeat: an acquire carries its request_id, a release names a token, a cancel
 * a request_id. A release or cancel that cannot be completed in time goes on in the background for as long as the
 * session lives (a lock left granted to a live session would stay held until the client closes).
 *
 * <p>Concurrency: stateless beyond immutable configuration; safe from any thread.
 */
final class LockCalls {
    private static final System.Logger log = System.getLogger(LockCalls.class.getName());
    /** Pause between rounds of a background release or cancel. */
    private static final long BACKGROUND_ROUND_MS = 1000;

    private final HttpGateway gateway;
    private final Session session;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier ticker;
    private final Duration requestTimeout;

    LockCalls(HttpGateway gateway, Session session, ScheduledExecutorService scheduler, LongSupplier ticker,
              Duration requestTimeout) {
        this.gateway = gateway;
        this.session = session;
        this.scheduler = scheduler;
        this.ticker = ticker;
        this.requestTimeout = requestTimeout;
    }

    Session session() {
        return session;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    LongSupplier ticker() {
        return ticker;
    }

    /**
     * One acquire call that the gateway holds open for what remains of the caller's wait (at most {@code maxWaitMs};
     * beyond that with {@code on_timeout=KEEP}, keeping the place in the queue), retried (same request_id) until
     * {@code retryDeadlineNanos}. Every attempt asks for what remains of the wait <em>when it is sent</em>, so retries
     * after a failed attempt do not start the wait over (with the full {@code wait_ms} on every retry,
     * {@code acquire(wait)} could block for about 2 x wait + 2 x the request timeout).
     */
    CompletableFuture<HttpGateway.Reply<Wire.Acquired>> acquire(String name, LockMode mode, int permits, String requestId,
                                                                long waitDeadlineNanos, long maxWaitMs,
                                                                long retryDeadlineNanos, boolean failOnDeadlock) {
        String what = "acquire of lock '" + name + "' (request " + requestId + ")";
        return gateway.withRetries(() -> {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(Math.max(0, waitDeadlineNanos - ticker.getAsLong()));
            boolean keep = remainingMs > maxWaitMs;
            long waitMs = Math.min(remainingMs, maxWaitMs);
            var body = new Wire.Acquire(session.id(), name, mode, permits == 0 ? null : permits, waitMs, requestId,
                    keep ? "KEEP" : "CANCEL", failOnDeadlock ? "FAIL" : null);
            var call = new HttpGateway.Call<>("POST", "/v1/acquire", body, Wire.Acquired.class, what);
            return new HttpGateway.Attempt<>(call, requestTimeout.plusMillis(waitMs));
        }, retryDeadlineNanos);
    }

    /** Releases a hold by its token, retrying for one request timeout. */
    /** A multi-lock acquire, as {@link #acquire}: the same request id on every retry. */
    CompletableFuture<HttpGateway.Reply<Wire.AcquiredMany>> acquireMany(java.util.List<String> names, LockMode mode,
                                                                        String requestId, long waitDeadlineNanos,
                                                                        long maxWaitMs, long retryDeadlineNanos,
                                                                        boolean failOnDeadlock) {
        String what = "acquire of locks " + names + " (request " + requestId + ")";
        return gateway.withRetries(() -> {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(Math.max(0, waitDeadlineNanos - ticker.getAsLong()));
            boolean keep = remainingMs > maxWaitMs;
            long waitMs = Math.min(remainingMs, maxWaitMs);
            var body = new Wire.AcquireMany(session.id(), names, mode, waitMs, requestId, keep ? "KEEP" : "CANCEL",
                    failOnDeadlock ? "FAIL" : null);
            var call = new HttpGateway.Call<>("POST", "/v1/acquire", body, Wire.AcquiredMany.class, what);
            return new HttpGateway.Attempt<>(call, requestTimeout.plusMillis(waitMs));
        }, retryDeadlineNanos);
    }

    /** Ends a whole request (every name of a multi-lock request): releases what it holds, cancels what it waits for. */
    CompletableFuture<HttpGateway.Reply<Wire.Released>> releaseRequest(String requestId) {
        return gateway.withRetries(releaseRequestCall(requestId), requestTimeout, deadline());
    }

    void releaseRequestInBackground(String requestId) {
        background(releaseRequestCall(requestId), 1);
    }

    private HttpGateway.Call<Wire.Released> releaseRequestCall(String requestId) {
        return new HttpGateway.Call<>("POST", "/v1/release", new Wire.ReleaseRequest(session.id(), requestId),
                Wire.Released.class, "release of request " + requestId);
    }

    CompletableFuture<HttpGateway.Reply<Wire.Released>> release(String name, long token) {
        return gateway.withRetries(releaseCall(name, token), requestTimeout, deadline());
    }

    /** Cancels a request by its request_id (queued or already granted), retrying for one request timeout. */
    CompletableFuture<HttpGateway.Reply<Wire.Released>> cancel(String name, String requestId) {
        return gateway.withRetries(cancelCall(name, requestId), requestTimeout, deadline());
    }

    /** Releases in the background until a gateway answers or the session ends. */
    void releaseInBackground(String name, long token) {
        background(releaseCall(name, token), 1);
    }

    /** Cancels in the background until a gateway answers or the session ends. */
    void cancelInBackground(String name, String requestId) {
        background(cancelCall(name, requestId), 1);
    }

    private void background(HttpGateway.Call<Wire.Released> call, int round) {
        if (session.ended()) {
            return; // the session's end released or cancelled everything
        }
        gateway.withRetries(call, requestTimeout, deadline()).whenComplete((reply, error) -> {
            if (error == null || !Failures.retryable(error)) {
                if (error != null && !Failures.sessionGone(error) && !session.ended()) {
                    log.log(System.Logger.Level.WARNING, "{0} failed for good: {1}", call.what(), Failures.unwrap(error).toString());
                }
                return;
            }
            log.log(System.Logger.Level.DEBUG, "{0}: round {1} failed, retrying in the background", call.what(), round);
            try {
                scheduler.schedule(() -> background(call, round + 1), BACKGROUND_ROUND_MS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                // the client is closing: closing the session releases everything
            }
        });
    }

    private HttpGateway.Call<Wire.Released> releaseCall(String name, long token) {
        return new HttpGateway.Call<>("POST", "/v1/release", new Wire.ReleaseToken(session.id(), name, token),
                Wire.Released.class, "release of lock '" + name + "' (token " + token + ")");
    }

    private HttpGateway.Call<Wire.Released> cancelCall(String name, String requestId) {
        return new HttpGateway.Call<>("POST", "/v1/release", new Wire.CancelRequest(session.id(), name, requestId),
                Wire.Released.class, "cancel of request " + requestId + " for lock '" + name + "'");
    }

    private long deadline() {
        return ticker.getAsLong() + requestTimeout.toNanos();
    }
}
