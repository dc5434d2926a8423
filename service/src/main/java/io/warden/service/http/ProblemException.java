package io.warden.service.http;

import java.util.Map;

/**
 * An HTTP-level failure that is not one of the engine's {@link io.warden.service.api.WardenException}s: an
 * oversized body, an unknown route, a draining gateway, or the lease API's "held by someone else". It carries
 * everything the problem document needs; {@link Problems} turns it into one, as it does every other failure.
 */
final class ProblemException extends RuntimeException {
    private final int status;
    private final String code;
    private final Map<String, Object> extensions;

    ProblemException(int status, String code, String detail, Map<String, Object> extensions) {
        super(detail, null, false, false);
        this.status = status;
        this.code = code;
        this.extensions = Map.copyOf(extensions);
    }

    ProblemException(int status, String code, String detail) {
        this(status, code, detail, Map.of());
    }

    static ProblemException tooLarge(long limit) {
        return new ProblemException(413, "PAYLOAD_TOO_LARGE", "the request body is larger than " + limit + " bytes");
    }

    static ProblemException draining() {
        return new ProblemException(503, "UNAVAILABLE", "this gateway is shutting down; retry on another gateway");
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }

    /** Extra members of the problem document (RFC 9457 extensions), e.g. the lease API's {@code holder}. */
    Map<String, Object> extensions() {
        return extensions;
    }
}
