package io.warden.client;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One acquire of a {@link MultiLock}, from the first call to its outcome, as {@link AcquireCall} is for one name: it
 * repeats {@code POST /v1/acquire} with {@code names} and one generated request_id (after a transport failure, a QUEUED
 * answer of a {@code KEEP} round, or at the next gateway), each call asking for what remains of the caller's wait.
 * Whatever ends it without a hold for the caller (a give-up, no gateway answering in time, a late answer) ends the
 * whole request by its request_id, in the background until a gateway answers (or the session ends); a gateway that
 * does not know the request yet leaves a tombstone, so a call overtaken by that release fails when it arrives.
 *
 * <p>Concurrency: calls run one after another (each is started from the completion of the previous one).
 * {@code result} is the single outcome, completed once by whoever is first: the call chain, the end of the session, or
 * the caller's cancel; {@code cleanedUp} completes once the clean-up after a give-up was answered.
 */
final class MultiAcquireCall implements PendingAcquire {
    private final LockCalls calls;
    private final List<String> names;
    private final LockMode mode;
    private final Duration wait;
    private final long deadlineNanos;
    private final long maxWaitMs;
    private final String requestId = "sdk-" + UUID.randomUUID();
    private final CompletableFuture<MultiHold> result = new CompletableFuture<>();
    private final CompletableFuture<Void> cleanedUp = new CompletableFuture<>();

    MultiAcquireCall(LockCalls calls, List<String> names, LockMode mode, Duration wait, long maxWaitMs) {
        this.calls = calls;
        this.names = List.copyOf(names);
        this.mode = mode;
        this.wait = wait;
        this.maxWaitMs = maxWaitMs;
        this.deadlineNanos = calls.ticker().getAsLong() + wait.toNanos();
    }

    CompletableFuture<MultiHold> result() {
        return result;
    }

    MultiAcquireCall start() {
        Session session = calls.session();
        if (!session.track(this)) {
            result.completeExceptionally(new SessionLostException("cannot acquire locks " + names + ": session "
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

    @Override
    public void sessionEnded(SessionLostException failure) {
        result.completeExceptionally(failure);
    }

    /**
     * The caller gives up (its thread was interrupted while it waited): the request is ended, or, when the grant won
     * the race, the hold is released. Waits (boundedly) until that was answered. Run on the caller's thread, with its
     * interrupt flag clear.
     */
    void giveUp() {
        if (result.cancel(true)) {
            try {
                cleanedUp.get(calls.requestTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // the release goes on in the background
            }
            return;
        }
        MultiHold hold;
        try {
            hold = result.join(); // complete: does not block
        } catch (RuntimeException failed) {
            return; // failed: the failure's own path cleaned up (or the session ended)
        }
        try {
            hold.release();
        } catch (RuntimeException lostMeanwhile) {
            // lost already: what was left was released all the same
        }
    }

    private void next() {
        if (result.isDone()) {
            return;
        }
        long retryDeadline = Math.max(calls.ticker().getAsLong(), deadlineNanos) + calls.requestTimeout().toNanos();
        calls.acquireMany(names, mode, requestId, deadlineNanos, maxWaitMs, retryDeadline).whenComplete(this::answered);
    }

    private void answered(HttpGateway.Reply<Wire.AcquiredMany> reply, Throwable error) {
        if (result.isDone()) {
            answeredAfterGiveUp(reply, error);
            return;
        }
        if (error != null) {
            Throwable cause = Failures.unwrap(error);
            if (Failures.sessionGone(cause)) {
                calls.session().markLost(cause.getMessage());
            } else if (Failures.retryable(cause)) {
                calls.releaseRequestInBackground(requestId); // one of the attempts may have queued the request
            }
            result.completeExceptionally(cause);
            return;
        }
        Wire.AcquiredMany a = reply.value();
        switch (a.status() == null ? "" : a.status()) {
            case Wire.Acquired.GRANTED -> granted(a);
            case Wire.Acquired.QUEUED -> {
                if (calls.ticker().getAsLong() - deadlineNanos >= 0) {
                    calls.releaseRequest(requestId).whenComplete((r, e) -> {
                        if (e != null && Failures.retryable(e)) {
                            calls.releaseRequestInBackground(requestId);
                        }
                        result.completeExceptionally(timeout());
                    });
                } else {
                    next(); // KEEP: the request stays queued; ask again with what is left of the wait
                }
            }
            case Wire.Acquired.TIMED_OUT -> result.completeExceptionally(timeout());
            default -> {
                calls.releaseRequestInBackground(requestId);
                result.completeExceptionally(new WardenClientException("acquire of locks " + names
                        + ": unexpected status " + a.status()));
            }
        }
    }

    private void granted(Wire.AcquiredMany a) {
        if (a.tokens() == null || !a.tokens().keySet().containsAll(names)) {
            calls.releaseRequestInBackground(requestId);
            result.completeExceptionally(new WardenClientException("acquire of locks " + names
                    + ": GRANTED without a token for every name: " + a.tokens()));
            return;
        }
        // The revision is a zxid; without one (an older gateway) the smallest token stands in for it, as for one name.
        long grantRevision = a.revision() != null && a.revision() > 0 ? a.revision()
                : a.tokens().values().stream().mapToLong(Long::longValue).min().orElseThrow();
        HttpMultiHold hold = new HttpMultiHold(calls, requestId, mode, a.tokens(), grantRevision).track();
        if (!result.complete(hold)) {
            // Note on concurrency: the caller cancelled (or the session ended) between the check in answered() and
            // here; nobody will ever see this hold, so give it back.
            hold.untrack();
            calls.releaseRequestInBackground(requestId);
        }
    }

    private AcquireTimeoutException timeout() {
        return new AcquireTimeoutException(String.join(",", names), wait);
    }

    /** The caller gave up (cancel or interrupt): end the request, granted or not. */
    private void abandon() {
        if (calls.session().ended()) {
            cleanedUp.complete(null);
            return;
        }
        calls.releaseRequest(requestId).whenComplete((reply, error) -> {
            if (error != null && Failures.retryable(error)) {
                calls.releaseRequestInBackground(requestId);
            }
            cleanedUp.complete(null);
        });
    }

    /** An answer that arrived after the caller gave up: whatever it queued or granted must go. */
    private void answeredAfterGiveUp(HttpGateway.Reply<Wire.AcquiredMany> reply, Throwable error) {
        if (calls.session().ended()) {
            return;
        }
        if (error == null && Wire.Acquired.TIMED_OUT.equals(reply.value().status())) {
            return;
        }
        if (error != null && !Failures.retryable(error)) {
            return;
        }
        calls.releaseRequestInBackground(requestId);
    }
}
