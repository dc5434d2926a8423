package io.warden.service.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.warden.service.api.WardenException;
import io.warden.service.api.WardenException.InvalidArgumentException;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where failures become {@code application/problem+json} documents (docs/api.md):
 * {@code {type, title, status, detail, code}}, plus {@code field} for INVALID_ARGUMENT and any extension the
 * failure carries. Engine errors map by their {@link WardenException.ErrorCode}; HTTP-level errors
 * ({@link ProblemException}, Javalin's 404/405) by their status; anything else is a bug: it is logged at
 * error with a correlation id and answered 500 with that id, never with its message.
 *
 * <p>Client errors are logged at debug only: a bad request is the client's problem, not an operator's.
 */
final class Problems {
    static final String CONTENT_TYPE = "application/problem+json";
    static final String TYPE_PREFIX = "https://warden.dev/problems/";
    /** Seconds a client should wait before retrying a 503 (another gateway may answer at once). */
    static final String RETRY_AFTER_SECONDS = "1";

    private static final Logger log = LoggerFactory.getLogger(Problems.class);

    private final Json json;

    Problems(Json json) {
        this.json = json;
    }

    /** Writes the problem document for {@code failure} as the response of {@code ctx}. */
    void respond(Context ctx, Throwable failure) {
        try {
            write(ctx, failure);
        } catch (RuntimeException e) {
            // The exchange is already over (a client that left a stream; Jetty recycled the response): nobody to tell.
            log.debug("could not answer a finished exchange with a problem document: {}", e.toString());
        }
    }

    /**
     * As {@link #respond}, with the body written and sent at once: a refused WebSocket upgrade (a before-upgrade handler
     * that throws) is answered by Javalin with the status and headers the exception handler set, but not its result.
     */
    void respondNow(Context ctx, Throwable failure) {
        try {
            byte[] body = write(ctx, failure);
            ctx.res().setContentLength(body.length);
            ctx.res().getOutputStream().write(body);
            ctx.res().flushBuffer();
        } catch (java.io.IOException | RuntimeException e) {
            log.debug("could not answer a refused upgrade with a problem document: {}", e.toString());
        }
    }

    private byte[] write(Context ctx, Throwable failure) {
        ObjectNode doc = document(failure, ctx.method() + " " + ctx.path());
        int status = doc.get("status").asInt();
        ctx.status(status);
        if (status == 503) {
            ctx.header("Retry-After", RETRY_AFTER_SECONDS);
        }
        if (status == 401) {
            ctx.header("WWW-Authenticate", "Bearer realm=\"warden\"");
        }
        Throwable cause = unwrap(failure);
        if (status == 405 && cause instanceof HttpResponseException e && !e.getDetails().isEmpty()) {
            ctx.header("Allow", String.join(", ", e.getDetails().values()));
        }
        ctx.contentType(CONTENT_TYPE);
        byte[] body = json.write(doc);
        ctx.result(body);
        return body;
    }

    /** Whether the cause chain says the connection broke under the exchange (Jetty's EofException, a closed channel). */
    static boolean connectionGone(Throwable failure) {
        for (Throwable c = failure; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof org.eclipse.jetty.io.EofException || c instanceof java.nio.channels.ClosedChannelException) {
                return true;
            }
        }
        return false;
    }

    /** The problem document for a failure; {@code request} only names the call in the error log of a 500. */
    ObjectNode document(Throwable failure, String request) {
        Throwable t = unwrap(failure);
        if (t instanceof WardenException e) {
            ObjectNode doc = base(e.code().status(), e.code().name(), e.getMessage());
            if (e instanceof InvalidArgumentException invalid) {
                doc.put("field", invalid.field());
            }
            if (e instanceof io.warden.service.api.DeadlockException dead) {
                doc.set("cycle", json.tree(dead.cycle()));
            }
            if (e instanceof io.warden.service.api.LockTooLargeException big) {
                doc.put("lock", big.lockName());
                doc.put("entries", big.entries());
            }
            log.debug("{} failed: {}", request, e.getMessage());
            return doc;
        }
        if (t instanceof ProblemException e) {
            ObjectNode doc = base(e.status(), e.code(), e.getMessage());
            for (Map.Entry<String, Object> x : e.extensions().entrySet()) {
                doc.set(x.getKey(), json.tree(x.getValue()));
            }
            log.debug("{} failed: {}", request, e.getMessage());
            return doc;
        }
        if (t instanceof HttpResponseException e && e.getStatus() >= 400 && e.getStatus() < 500) {
            // Javalin's own answers: no route (404), wrong method (405).
            int status = e.getStatus();
            String code = switch (status) {
                case 404 -> "NOT_FOUND";
                case 405 -> "METHOD_NOT_ALLOWED";
                case 413 -> "PAYLOAD_TOO_LARGE";
                default -> "INVALID_ARGUMENT";
            };
            String detail = switch (status) {
                case 404 -> "no such route: " + request;
                case 405 -> "method not allowed: " + request;
                default -> e.getMessage();
            };
            log.debug("{} failed: {} {}", request, status, detail);
            return base(status, code, detail);
        }
        if (connectionGone(failure)) {
            // The client left mid-exchange (say, a WebSocket upgrade cut before the 101): nobody reads the answer, and
            // it is no fault of the gateway's.
            log.debug("{} ended: the client's connection is gone ({})", request, t.toString());
            return base(499, "CLIENT_GONE", "the client closed the connection");
        }
        String correlationId = UUID.randomUUID().toString();
        log.error("{} failed unexpectedly [correlation id {}]", request, correlationId, t);
        ObjectNode doc = base(500, "INTERNAL", "internal error; quote correlation id " + correlationId);
        doc.put("correlation_id", correlationId);
        return doc;
    }

    private ObjectNode base(int status, String code, String detail) {
        ObjectNode doc = json.object();
        doc.put("type", TYPE_PREFIX + code.toLowerCase(Locale.ROOT).replace('_', '-'));
        doc.put("title", title(code));
        doc.put("status", status);
        doc.put("detail", detail);
        doc.put("code", code);
        return doc;
    }

    /** "SESSION_NOT_FOUND" becomes "Session not found". */
    private static String title(String code) {
        String words = code.toLowerCase(Locale.ROOT).replace('_', ' ');
        return Character.toUpperCase(words.charAt(0)) + words.substring(1);
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
