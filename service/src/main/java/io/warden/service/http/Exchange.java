package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.api.WardenException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every handler needs from a request and for its reply: the body read within the size limit, the query
 * string and path decoded strictly, JSON replies, and engine futures turned into held replies.
 *
 * <p>Held replies: a handler hands the engine's future to {@link #reply}, which registers it with
 * {@code ctx.future}; no thread waits for it. When it completes (on whatever engine thread), the reply is
 * written on {@code responseExecutor} so ZooKeeper and clock threads never do socket I/O.
 *
 * <p>Thread-safety: immutable; safe for concurrent use.
 */
final class Exchange {
    private final Json json;
    private final Problems problems;
    private final int maxBodyBytes;
    private final Executor responseExecutor;

    Exchange(Json json, Problems problems, int maxBodyBytes, Executor responseExecutor) {
        this.json = json;
        this.problems = problems;
        this.maxBodyBytes = maxBodyBytes;
        this.responseExecutor = responseExecutor;
    }

    /**
     * The request body, at most {@code maxBodyBytes}. The bytes are already in memory ({@link BodyReadHandler} gathered
     * them without a thread, within body-read-timeout-ms), so this blocking read never waits on the network; a body
     * over the limit was answered 413 there before the request was routed, so the 413s here are only a backstop.
     */
    byte[] body(Context ctx) {
        long declared = ctx.req().getContentLengthLong();
        if (declared > maxBodyBytes) {
            throw ProblemException.tooLarge(maxBodyBytes);
        }
        try {
            InputStream in = ctx.req().getInputStream();
            byte[] bytes = in.readNBytes(maxBodyBytes + 1);
            if (bytes.length > maxBodyBytes) {
                throw ProblemException.tooLarge(maxBodyBytes);
            }
            return bytes;
        } catch (IOException e) {
            throw WardenException.invalid(JsonBody.BODY, "could not be read: " + e.getMessage());
        }
    }

    /** The query string's parameters, percent-decoded ({@code +} is a space, as in forms). */
    Map<String, List<String>> query(Context ctx) {
        String raw = ctx.req().getQueryString();
        Map<String, List<String>> params = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return params;
        }
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode("query", eq < 0 ? pair : pair.substring(0, eq), true);
            String value = eq < 0 ? "" : decode(name, pair.substring(eq + 1), true);
            params.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
        }
        return params;
    }

    /** The raw path after {@code prefix}, percent-decoded ({@code +} stays a plus), for names that contain '/'. */
    String pathRest(Context ctx, String prefix, String field) {
        String uri = ctx.req().getRequestURI();
        String context = ctx.req().getContextPath();
        String path = context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length()) : uri;
        if (!path.startsWith(prefix)) {
            throw WardenException.invalid(field, "is required in the path after " + prefix);
        }
        return decode(field, path.substring(prefix.length()), false);
    }

    void json(Context ctx, int status, Object body) {
        ctx.status(status);
        ctx.contentType("application/json");
        ctx.result(json.write(body));
    }

    /** Answers 200 with {@code toBody} of the future's value once it completes, or the problem for its failure. */
    <T> void reply(Context ctx, Supplier<CompletableFuture<T>> call, Function<T, ?> toBody) {
        reply(ctx, 200, call, toBody);
    }

    <T> void reply(Context ctx, int status, Supplier<CompletableFuture<T>> call, Function<T, ?> toBody) {
        reply(ctx, value -> status, call, toBody);
    }

    /** As above, the status told by the value ({@code statusOf}). */
    <T> void reply(Context ctx, Function<T, Integer> statusOf, Supplier<CompletableFuture<T>> call, Function<T, ?> toBody) {
        CompletableFuture<T> future;
        try {
            future = call.get();
        } catch (RuntimeException | Error e) {
            future = CompletableFuture.failedFuture(e); // an engine that throws instead of failing the future
        }
        CompletableFuture<T> started = future;
        ctx.future(() -> started.handleAsync((value, failure) -> {
            try {
                if (failure != null) {
                    problems.respond(ctx, failure);
                } else {
                    json(ctx, statusOf.apply(value), toBody.apply(value));
                }
            } catch (Throwable t) {
                problems.respond(ctx, t);
            }
            return null;
        }, responseExecutor));
    }

    private static String decode(String field, String text, boolean plusIsSpace) {
        try {
            return URLDecoder.decode(plusIsSpace ? text : text.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw WardenException.invalid(field, "has a malformed %-escape: '" + Fields.abbreviate(text) + "'");
        }
    }
}
