package io.warden.client;

import java.io.IOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Turns gateway answers and transport errors into the client's exceptions, and says which are worth a retry. */
final class Failures {
    static final String SESSION_NOT_FOUND = "SESSION_NOT_FOUND";

    private Failures() {
    }

    /** A failed answer of a gateway: the problem document's code when there is one. */
    static WardenClientException fromAnswer(String what, int status, Wire.Problem problem) {
        String code = problem != null && problem.code() != null ? problem.code() : null;
        String detail = problem != null && problem.detail() != null ? problem.detail() : "HTTP " + status;
        String message = what + " failed: " + (code != null ? code + ": " : "") + detail;
        if (status == 404 && SESSION_NOT_FOUND.equals(code)) {
            return new SessionLostException(message, code, status, null);
        }
        return new WardenClientException(message, code, status, null);
    }

    /**
     * Worth another try, on this or another gateway: the transport failed (refused, reset, timed out) or the gateway
     * said it cannot answer now (503 without a quorum or while draining; 502/504 from a proxy in between). Every call
     * this client retries is safe to repeat: acquires carry a request_id, releases name a token or a request_id.
     */
    static boolean retryable(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof IOException) {
            return true;
        }
        return c instanceof WardenClientException e && (e.status() == 502 || e.status() == 503 || e.status() == 504);
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
