package io.warden.client;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One acquire over HTTP, from the first call to its outcome, whatever it asks for ({@link AcquireCall}: one name,
 * {@link MultiAcquireCall}: several in one request). It repeats {@code POST /v1/acquire} with one generated request_id:
 * after a transport failure or any answer but a final verdict (at the next gateway), and when the wait is longer than
 * the service holds one call (it then asks with {@code on_timeout=KEEP}, keeping its place in the queue). Every call
 * asks for what remains of the caller's wait; the last one of a wait uses {@code on_timeout=CANCEL}, so the gateway
 * itself removes the request when time runs out.
 *
 * <p>Whatever ends it without a hold for the caller (a give-up by cancel or interrupt, no gateway answering in time, a
 * late answer) ends the request by its request_id ({@link #end}), in the background until a gateway answers (or the
 * session ends). That end may overtake the call that queues the request (they travel on different connections, and a
 * call can be held up anywhere on its way): a gateway asked to end a request it does not know leaves a tombstone for
 * that request_id, so the overtaken call fails when it arrives and nothing is queued for a caller that gave up. An
 * answer that arrives after the give-up, other than TIMED_OUT, ends the request again all the same.
 *
 * <p>Concurrency: calls run one after another (each is started from the completion of the previous one).
 * {@code result} is the single outcome, completed once by whoever is first: the call chain, the end of the session, or
 * the caller's cancel; {@code cleanedUp} completes once the clean-up after a give-up was answered.
 *
 * @param <A> the gateway's answer to one call
 * @param <H> what the caller gets: the hold
 */
abstract class RetriedAcquire<A, H> implements PendingAcquire {
    final LockCalls calls;
    final Duration wait;
    final long deadlineNanos;
    final long maxWaitMs;
    final String requestId = "sdk-" + UUID.randomUUID();
    final CompletableFuture<H> result = new CompletableFuture<>();
    private final CompletableFuture<Void> cleanedUp = new CompletableFuture<>();

    RetriedAcquire(LockCalls calls, Duration wait, long maxWaitMs) {
        this.calls = calls;
        this.wait = wait;
        this.maxWaitMs = maxWaitMs;
        this.deadlineNanos = calls.ticker().getAsLong() + wait.toNanos();
    }

    /** What is asked for, for messages: {@code lock 'a'}, {@code locks [a, b]}. */
    abstract String what();

    /** One call, asking for what remains of the wait; its retries may go on until {@code retryDeadline}. */
    abstract CompletableFuture<HttpGateway.Reply<A>> send(long retryDeadline);

    /** The answer's status ({@link Wire.Acquired#GRANTED}, ...), or null. */
    abstract String status(A answer);

    /** A GRANTED answer: makes the hold and {@link #deliver}s it, or {@link #refuse}s an answer it cannot use. */
    abstract void granted(A answer);

    /** Ends the request (cancel or release by request_id, granted or not): one attempt. */
    abstract CompletableFuture<?> end();

    /** Ends the request in the background, until a gateway answers or the session ends. */
    abstract void endInBackground();

    /** Gives back a hold the caller will not use (the grant won the race with its give-up). */
    abstract void release(H hold);

    abstract AcquireTimeoutException timeout();

    CompletableFuture<H> result() {
        return result;
    }

    String requestId() {
        return requestId;
    }

    /** Starts the first call; the result fails at once when the session has ended. */
    RetriedAcquire<A, H> start() {
        Session session = calls.session();
        if (!session.track(this)) {
            result.completeExceptionally(new SessionLostException("cannot acquire " + what() + ": session "
                    + session.id() + " is " + session.state(), null, 0, null));
            return this;
        }
        result.whenComplete((hold, error) -> {
            session.untrack(this);
            if (result.isCancelled()) {
                abandon();
            } else {
                cleanedUp.complete(null);
            }
        });
        next();
        return this;
    }

    /** The session ended (lost or closed): nothing is queued any more, nothing to clean up. */
    @Override
    public void sessionEnded(SessionLostException failure) {
        result.completeExceptionally(failure);
    }

    /**
     * The caller gives up (its thread was interrupted while it waited) and will not take a hold: the request is ended,
     * or, when the grant won the race and completed the result first, the hold is released (the grant can complete the
     * result between the interrupt waking the caller and this cancel; ending the request alone would then leave the
     * session holding it). Waits (boundedly) until that was answered. Run on the caller's thread, with its interrupt
     * flag clear.
     */
    void giveUp() {
        if (result.cancel(true)) {
            awaitCleanup();
            return;
        }
        H hold;
        try {
            hold = result.join(); // complete: does not block
        } catch (RuntimeException failed) {
            return; // failed: the failure's own path cleaned up (or the session ended)
        }
        try {
            release(hold);
        } catch (RuntimeException lostMeanwhile) {
            // lost already: nothing left to release
        }
    }

    /** Waits (at most two request timeouts) until the end of the request after a give-up was answered. */
    private void awaitCleanup() {
        try {
            cleanedUp.get(calls.requestTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the end goes on in the background
        }
    }

    private void next() {
        if (result.isDone()) {
            return;
        }
        // Retries of this call (same request_id) may go on until one request timeout after the caller's deadline;
        // each asks for what remains of the wait when it is sent.
        long retryDeadline = Math.max(calls.ticker().getAsLong(), deadlineNanos) + calls.requestTimeout().toNanos();
        send(retryDeadline).whenComplete(this::answered);
    }

    private void answered(HttpGateway.Reply<A> reply, Throwable error) {
        if (result.isDone()) {
            answeredAfterGiveUp(reply, error);
            return;
        }
        if (error != null) {
            failed(Failures.unwrap(error));
            return;
        }
        A a = reply.value();
        String status = status(a);
        switch (status == null ? "" : status) {
            case Wire.Acquired.GRANTED -> granted(a);
            case Wire.Acquired.QUEUED -> {
                if (calls.ticker().getAsLong() - deadlineNanos >= 0) {
                    timedOutQueued();
                } else {
                    next(); // KEEP: the request stays queued; ask again with what is left of the wait
                }
            }
            case Wire.Acquired.TIMED_OUT -> result.completeExceptionally(timeout());
            default -> refuse("unexpected status " + status);
        }
    }

    /** Hands the hold to the caller; when the caller gave up (or the session ended) meanwhile, gives it back. */
    void deliver(H hold, Runnable untrack) {
        if (!result.complete(hold)) {
            // Note on concurrency: the caller cancelled (or the session ended) between the check in answered() and
            // here; nobody will ever see this hold, so give it back.
            untrack.run();
            endInBackground();
        }
    }

    /** An answer this client cannot use: the request is ended and the caller told why. */
    void refuse(String why) {
        endInBackground();
        result.completeExceptionally(new WardenClientException("acquire of " + what() + ": " + why));
    }

    private void failed(Throwable cause) {
        if (Failures.sessionGone(cause)) {
            calls.session().markLost(cause.getMessage());
        } else if (Failures.retryable(cause)) {
            endInBackground(); // no gateway answered in time; one of the attempts may have queued the request
        }
        result.completeExceptionally(cause);
    }

    /** Still queued after the caller's deadline (only after retries): end the request, then report the timeout. */
    private void timedOutQueued() {
        end().whenComplete((r, e) -> {
            if (e != null && Failures.retryable(e)) {
                endInBackground();
            }
            result.completeExceptionally(timeout());
        });
    }

    /**
     * The caller gave up (cancel or interrupt): end the request, granted or not. One answer settles it: the gateway
     * either ended the request or left a tombstone that makes the call still on its way fail.
     */
    private void abandon() {
        if (calls.session().ended()) {
            cleanedUp.complete(null);
            return;
        }
        end().whenComplete((reply, error) -> {
            if (error != null && Failures.retryable(error)) {
                endInBackground();
            }
            cleanedUp.complete(null);
        });
    }

    /** An answer that arrived after the caller gave up: whatever it queued or granted must go. */
    private void answeredAfterGiveUp(HttpGateway.Reply<A> reply, Throwable error) {
        if (calls.session().ended()) {
            return;
        }
        if (error == null && Wire.Acquired.TIMED_OUT.equals(status(reply.value()))) {
            return;
        }
        if (error != null && !Failures.retryable(error)) {
            return;
        }
        endInBackground();
    }
}
