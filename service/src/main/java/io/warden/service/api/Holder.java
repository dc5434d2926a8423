package io.warden.service.api;

/**
 * A current holder of a lock. {@code sessionId} is null for a holder that is not a Warden session
 * (a plain Curator {@code InterProcessReadWriteLock} client on the same path); {@code expired} is true
 * for a hold kept only by its expired session's lock-delay.
 */
public record Holder(String sessionId, String clientId, Mode mode, long token, boolean expired) {
}
