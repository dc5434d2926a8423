package io.warden.client;

/**
 * The client's session is gone ({@link SessionState#LOST}: expired, or closed from elsewhere; or
 * {@link SessionState#CLOSED} by this client), so nothing can be acquired through it. Every hold of the session is
 * lost; make a new {@link WardenClient} to go on.
 *
 * <p>Thread-safety: immutable.
 */
public class SessionLostException extends WardenClientException {
    private static final long serialVersionUID = 1L;

    public SessionLostException(String message, String code, int status, Throwable cause) {
        super(message, code, status, cause);
    }
}
