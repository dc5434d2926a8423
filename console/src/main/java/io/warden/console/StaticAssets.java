package io.warden.console;

import io.javalin.http.Context;
import io.warden.console.view.AssetVersion;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * {@code GET /console/static/{file}}: the console's stylesheet, script and icon, read from the classpath once and
 * served from memory. Only these files; anything else is a 404. Pages link them with {@code ?v=}
 * {@link AssetVersion#VERSION}; such a request is cacheable for a year, any other for five minutes.
 *
 * <p>Concurrency: immutable after construction; safe from any thread.
 */
final class StaticAssets {
    private static final Map<String, String> TYPES = Map.of(
            "console.css", "text/css; charset=utf-8",
            "console.js", "text/javascript; charset=utf-8",
            "favicon.svg", "image/svg+xml");

    private final Map<String, byte[]> files;

    StaticAssets() {
        this.files = AssetVersion.FILES.stream().collect(Collectors.toUnmodifiableMap(Function.identity(), AssetVersion::read));
    }

    void serve(Context ctx) {
        String file = ctx.pathParam("file");
        byte[] body = files.get(file);
        if (body == null) {
            throw ConsoleError.notFound("no such console asset: " + file);
        }
        boolean versioned = AssetVersion.VERSION.equals(ctx.queryParam("v"));
        ctx.header("Cache-Control", versioned ? "public, max-age=31536000, immutable" : "public, max-age=300");
        ctx.contentType(TYPES.get(file)).result(body);
    }
}
