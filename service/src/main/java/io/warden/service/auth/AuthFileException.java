package io.warden.service.auth;

/** An auth file that cannot be used; the message is one line naming the file and the entry. */
public final class AuthFileException extends RuntimeException {
    public AuthFileException(String message) {
        super(message);
    }
}
