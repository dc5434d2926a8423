package io.warden.client;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Turns gateway answers and transport errors into the client's exceptions, and says which are worth a retry.
 *
 * <p>What to do with an answer is decided from Warden's problem {@code code}, not from the HTTP status alone: a 500, or
 * a 404 without Warden's code, comes from a broken gateway or from something between the client and the gateways (a
 * proxy, a load balancer, a server that is not a gateway), and the next endpoint may well answer; only Warden's own
 * verdicts on the call are final.
 *
 * <p>Concurrency: stateless.
 */
final class Failures {
    static final String SESSION_NOT_FOUND = "SESSION_NOT_FOUND";
    /** A request removed to break a deadlock: every repeat of it gets the same answer (its tombstone says so). */
    static final String DEADLOCK = "DEADLOCK";
    /**
     * The codes of a gateway's verdict on the call itself (docs/api.md, and the HTTP layer's 405/413/415): the same
     * call gets the same answer at any gateway, so it is not repeated. Every other answer (UNAVAILABLE, INTERNAL,
     * NOT_FOUND for a route the endpoint does not have, an unknown code, no problem document at all) moves on to the
     * next endpoint.
     */
    static final Set<String> FINAL_CODES = Set.of("INVALID_ARGUMENT", "UNAUTHENTICATED", "PERMISSION_DENIED",
            SESSION_NOT_FOUND, DEADLOCK, "CONFLICT", "RESOURCE_EXHAUSTED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE",
            "METHOD_NOT_ALLOWED");

    private Failures() {
    }

    /** A failed answer of a gateway: the problem document's code when there is one. */
    static WardenClientException fromAnswer(String what, int status, Wire.Problem problem) {
        String code = problem != null && problem.code() != null ? problem.code() : null;
        String detail = problem != null && problem.detail() != null ? problem.detail() : "HTTP " + status;
        String message = what + " failed: " + (code != null ? code + ": " : "") + detail;
        if (status == 409 && DEADLOCK.equals(code)) {
            return new DeadlockException(message, status, problem.cycle());
        }
        if (status == 404 && SESSION_NOT_FOUND.equals(code)) {
            return new SessionLostException(message, code, status, null);
        }
        return new WardenClientException(message, code, status, null);
    }

    /**
     * Worth another try, at the next gateway: the transport failed (refused, reset, timed out), or an endpoint answered
     * with anything but one of Warden's {@link #FINAL_CODES} (503 UNAVAILABLE without a quorum or while draining, a 500,
     * a 404 without Warden's code, a 502/504 from a proxy, an unreadable answer), or retries of such failures ran out of
     * time (no gateway answered: the call may or may not have been applied). Every call this client retries is
     * safe to repeat: acquires carry a request_id, releases name a token or a request_id.
     */
    static boolean retryable(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof IOException) {
            return true;
        }
        if (!(c instanceof WardenClientException e)) {
            return false;
        }
        if (e.status() == 0) {
            // Not an answer: retries that ran out of time (their last failure is the cause), or a request that could
            // not be made at all (no cause worth another try).
            return e.getCause() != null && e.getCause() != e && retryable(e.getCause());
        }
        return e.code().map(code -> !FINAL_CODES.contains(code)).orElse(true);
    }

    static boolean sessionGone(Throwable t) {
        return unwrap(t) instanceof SessionLostException;
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** For rethrowing what an async call failed with on the caller's thread: our own exceptions as they are. */
    static RuntimeException rethrow(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof RuntimeException r) {
            return r;
        }
        if (c instanceof Error e) {
            throw e;
        }
        return new WardenClientException(c.toString(), c);
    }
}
