package io.warden.service.api;

/** What {@code POST /v1/sessions} granted: the TTL after clamping, and how often to send keepalives. */
public record SessionGrant(String sessionId, long ttlMs, long keepaliveIntervalMs, long lockDelayMs, long revision) {
}
