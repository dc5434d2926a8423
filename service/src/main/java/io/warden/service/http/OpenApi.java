package io.warden.service.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The API's OpenAPI 3.1 document ({@code openapi.json} beside this class), served as {@code GET /v1/openapi.json}.
 * It is written by hand and kept true by the tests ({@code OpenApiRoutesTest}, {@code OpenApiRepliesTest}), which
 * compare it with the routes the gateway serves and validate real replies against its schemas.
 */
final class OpenApi {
    static final String RESOURCE = "openapi.json";
    static final String PATH = "/v1/openapi.json";

    private OpenApi() {
    }

    /** The document's bytes, read from the class path once per gateway start; a copy the caller may keep. */
    static byte[] document() {
        try (InputStream in = OpenApi.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the class path beside " + OpenApi.class.getName());
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
    }
}
