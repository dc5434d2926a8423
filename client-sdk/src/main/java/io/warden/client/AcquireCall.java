package io.warden.client;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One acquire of a {@link FencedLock}, from the first call to its outcome. It repeats {@code POST /v1/acquire} with
 * one generated request_id: after a transport failure or any answer but a final verdict (at the next gateway), and
 * when the wait is longer than the service holds one call (it then asks with {@code on_timeout=KEEP}, keeping its
 * place in the queue). Every call asks for what remains of the caller's wait. The last call of a wait uses
 * {@code on_timeout=CANCEL}, so the gateway itself removes the request when time runs out.
 *
 * <p>When the caller gives up (cancel or interrupt), or no gateway answered in time, the request is cancelled by
 * request_id, in the background until a gateway answers (or the session ends). The cancel may overtake the call that
 * queues the request (they travel on different connections, and a call can be held up anywhere on its way): a gateway
 * answering a cancel of a request it does not know leaves a tombstone for that request_id, so the overtaken call fails
 * when it arrives and nothing is queued for a caller that gave up. An answer to a call that arrives after the give-up,
 * other than TIMED_OUT, triggers another cancel all the same.
 *
 * <p>Concurrency: calls run one after another (each is started from the completion of the previous one).
 * {@code result} is the single outcome, completed once by whoever is first: the call chain, the end of the session, or
 * the caller's cancel; {@code cleanedUp} completes once the clean-up after a give-up was answered.
 */
final class AcquireCall implements PendingAcquire {
    /** The longest wait the service holds one call for (contract §3 {@code wait_ms} max). */
    static final long SERVICE_MAX_WAIT_MS = 300_000;

    private final LockCalls calls;
    private final String name;
    private final LockMode mode;
    /** A semaphore's permits; 0 for a lock. */
    private final int permits;
    private final Duration wait;
    private final long deadlineNanos;
    private final long maxWaitMs;
    private final String requestId = "sdk-" + UUID.randomUUID();
    private final CompletableFuture<Hold> result = new CompletableFuture<>();
    private final CompletableFuture<Void> cleanedUp = new CompletableFuture<>();

    AcquireCall(LockCalls calls, String name, LockMode mode, int permits, Duration wait, long maxWaitMs) {
        this.calls = calls;
        this.name = name;
        this.mode = mode;
        this.permits = permits;
        this.wait = wait;
        this.maxWaitMs = maxWaitMs;
        this.deadlineNanos = calls.ticker().getAsLong() + wait.toNanos();
    }

    CompletableFuture<Hold> result() {
        return result;
    }

    String requestId() {
        return requestId;
    }

    AcquireCall start() {
        Session session = calls.session();
        if (!session.track(this)) {
            result.completeExceptionally(new SessionLostException("cannot acquire lock '" + name + "': session "
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
     * The caller gives up (its thread was interrupted while it waited) and will not take a hold: the request is
     * cancelled, or, when the grant won the race and completed the result first, the hold is released (the grant can
     * complete the result between the interrupt waking the caller and this cancel; a cancel alone would then do
     * nothing and leave the session holding the lock). Waits (boundedly) until that was answered. Run on the
     * caller's thread, with its interrupt flag clear.
     */
    void giveUp() {
        if (result.cancel(true)) {
            awaitCleanup();
            return;
        }
        // Note on concurrency: the result is complete, so join() does not block.
        Hold hold;
        try {
            hold = result.join();
        } catch (RuntimeException failed) {
            return; // failed: the failure's own path cleaned up (or the session ended)
        }
        try {
            hold.release();
        } catch (RuntimeException lostMeanwhile) {
            // lost already: nothing left to release
        }
    }

    /** Waits (at most one request timeout) until the cancel after a give-up was answered. */
    private void awaitCleanup() {
        try {
            cleanedUp.get(calls.requestTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the cancel goes on in the background
        }
    }

    private void next() {
        if (result.isDone()) {
            return;
        }
        long now = calls.ticker().getAsLong();
        // Retries of this call (same request_id) may go on until one request timeout after the caller's deadline;
        // each asks for what remains of the wait when it is sent.
        long retryDeadline = Math.max(now, deadlineNanos) + calls.requestTimeout().toNanos();
        calls.acquire(name, mode, permits, requestId, deadlineNanos, maxWaitMs, retryDeadline).whenComplete(this::answered);
    }

    private void answered(HttpGateway.Reply<Wire.Acquired> reply, Throwable error) {
        if (result.isDone()) {
            answeredAfterGiveUp(reply, error);
            return;
        }
        if (error != null) {
            failed(Failures.unwrap(error));
            return;
        }
        Wire.Acquired a = reply.value();
        switch (a.status() == null ? "" : a.status()) {
            case Wire.Acquired.GRANTED -> granted(a);
            case Wire.Acquired.QUEUED -> {
                if (calls.ticker().getAsLong() - deadlineNanos >= 0) {
                    timedOutQueued();
                } else {
                    next();
                }
            }
            case Wire.Acquired.TIMED_OUT -> result.completeExceptionally(new AcquireTimeoutException(name, wait));
            default -> {
                calls.cancelInBackground(name, requestId);
                result.completeExceptionally(new WardenClientException("acquire of lock '" + name
                        + "': unexpected status " + a.status()));
            }
        }
    }

    private void granted(Wire.Acquired a) {
        if (a.token() == null) {
            calls.cancelInBackground(name, requestId);
            result.completeExceptionally(new WardenClientException("acquire of lock '" + name + "': GRANTED without a token"));
            return;
        }
        // The revision is a zxid; the token is a zxid plus the cell's token floor, so only without a revision (an older
        // gateway) does the token stand in for it.
        long grantRevision = a.revision() != null && a.revision() > 0 ? a.revision() : a.token();
        HttpHold hold = new HttpHold(name, mode, a.token(), grantRevision, calls);
        calls.session().track(hold);
        if (!result.complete(hold)) {
            // Note on concurrency: the caller cancelled (or the session ended) between the check in answered() and
            // here; nobody will ever see this hold, so give it back.
            calls.session().untrack(hold);
            calls.cancelInBackground(name, requestId);
        }
    }

    private void failed(Throwable cause) {
        if (Failures.sessionGone(cause)) {
            calls.session().markLost(cause.getMessage());
        } else if (Failures.retryable(cause)) {
            // No gateway answered in time; one of the attempts may have queued the request.
            calls.cancelInBackground(name, requestId);
        }
        result.completeExceptionally(cause);
    }

    /** Still queued after the caller's deadline (only after retries): cancel, then report the timeout. */
    private void timedOutQueued() {
        calls.cancel(name, requestId).whenComplete((r, e) -> {
            if (e != null && Failures.retryable(e)) {
                calls.cancelInBackground(name, requestId);
            }
            result.completeExceptionally(new AcquireTimeoutException(name, wait));
        });
    }

    /**
     * The caller gave up (cancel or interrupt): take the request out of the queue, granted or not. One answer settles
     * it: the gateway either ended the request or left a tombstone that makes the call still on its way fail.
     */
    private void abandon() {
        if (calls.session().ended()) {
            cleanedUp.complete(null);
            return;
        }
        calls.cancel(name, requestId).whenComplete((reply, error) -> {
            if (error != null && Failures.retryable(error)) {
                calls.cancelInBackground(name, requestId);
            }
            cleanedUp.complete(null);
        });
    }

    /** An answer that arrived after the caller gave up: whatever it queued or granted must go. */
    private void answeredAfterGiveUp(HttpGateway.Reply<Wire.Acquired> reply, Throwable error) {
        if (calls.session().ended()) {
            return;
        }
        if (error == null && Wire.Acquired.TIMED_OUT.equals(reply.value().status())) {
            return;
        }
        if (error != null && !Failures.retryable(error)) {
            return;
        }
        calls.cancelInBackground(name, requestId);
    }
}
