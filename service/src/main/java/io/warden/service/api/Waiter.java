package io.warden.service.api;

/** A queued request; {@code position} counts the entries ahead of it, holders included. */
public record Waiter(String sessionId, String clientId, Mode mode, String requestId, int position) {
}
