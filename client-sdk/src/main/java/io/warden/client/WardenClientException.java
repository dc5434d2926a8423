package io.warden.client;

import java.util.Optional;

/**
 * Root of every error the Warden client reports. Unchecked: a failed lock call is seldom something the caller can
 * repair on the spot. When a gateway answered with a problem document (docs/api.md), {@link #code()} is its
 * {@code code} (e.g. {@code INVALID_ARGUMENT}, {@code RESOURCE_EXHAUSTED}, {@code UNAVAILABLE}) and
 * {@link #status()} its HTTP status.
 *
 * <p>Ownership loss is reported differently, as {@link LockOwnershipLostException} (an
 * {@link IllegalMonitorStateException}): it is a broken assumption of the caller, not a failed call.
 *
 * <p>Thread-safety: immutable.
 */
public class WardenClientException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String code;
    private final int status;

    public WardenClientException(String message) {
        this(message, null, 0, null);
    }

    public WardenClientException(String message, Throwable cause) {
        this(message, null, 0, cause);
    }

    /**
     * @param code   the problem document's {@code code}, or null when no gateway answered with one
     * @param status the HTTP status of that answer, or 0
     */
    public WardenClientException(String message, String code, int status, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.status = status;
    }

    /** The gateway's problem {@code code}, empty when the failure was not an answer of a gateway (e.g. no gateway reachable). */
    public Optional<String> code() {
        return Optional.ofNullable(code);
    }

    /** The HTTP status of the gateway's answer, 0 when there was none. */
    public int status() {
        return status;
    }
}
