package io.warden.service.api;

/**
 * Root of every error the engine reports to callers. Each subtype maps to one problem-document
 * {@code code} of the HTTP API (docs/api.md); the HTTP layer maps them in one place.
 */
public class WardenException extends RuntimeException {
    private final ErrorCode code;

    public WardenException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public WardenException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }

    /** The problem-document codes of docs/api.md, with their HTTP status. */
    public enum ErrorCode {
        INVALID_ARGUMENT(400),
        UNAUTHENTICATED(401),
        PERMISSION_DENIED(403),
        SESSION_NOT_FOUND(404),
        CONFLICT(409),
        DEADLOCK(409),
        RESOURCE_EXHAUSTED(429),
        UNAVAILABLE(503);

        private final int status;

        ErrorCode(int status) {
            this.status = status;
        }

        public int status() {
            return status;
        }
    }

    public static WardenException invalid(String field, String message) {
        return new InvalidArgumentException(field, message);
    }

    public static WardenException sessionNotFound(String sessionId) {
        return new WardenException(ErrorCode.SESSION_NOT_FOUND, "session " + sessionId + " does not exist (expired or closed)");
    }

    public static WardenException unavailable(String message, Throwable cause) {
        return new WardenException(ErrorCode.UNAVAILABLE, message, cause);
    }

    /** The request disagrees with the state of what it names (409 CONFLICT): the message says how. */
    public static WardenException conflict(String message) {
        return new WardenException(ErrorCode.CONFLICT, message);
    }

    public static WardenException exhausted(String message) {
        return new WardenException(ErrorCode.RESOURCE_EXHAUSTED, message);
    }

    /** No credentials, or credentials no principal has (401; the reply carries {@code WWW-Authenticate}). */
    public static WardenException unauthenticated(String message) {
        return new WardenException(ErrorCode.UNAUTHENTICATED, message);
    }

    /** An authenticated principal asked for what its grants do not allow (403); the message names what is needed. */
    public static WardenException permissionDenied(String message) {
        return new WardenException(ErrorCode.PERMISSION_DENIED, message);
    }

    /** A bad request field; {@link #field()} names it (JSON name, snake_case). */
    public static final class InvalidArgumentException extends WardenException {
        private final String field;

        public InvalidArgumentException(String field, String message) {
            super(ErrorCode.INVALID_ARGUMENT, field + ": " + message);
            this.field = field;
        }

        public String field() {
            return field;
        }
    }
}
