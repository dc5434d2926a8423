package io.warden.service.session;

/** The durable session record at {@code /sessions/{id}}. {@code gateway} is the gateway that tracks its TTL. */
public record SessionRecord(String clientId, long ttlMs, long lockDelayMs, String gateway) {
    SessionRecord withGateway(String g) {
        return new SessionRecord(clientId, ttlMs, lockDelayMs, g);
    }

    SessionRecord withTtl(long ttl) {
        return new SessionRecord(clientId, ttl, lockDelayMs, gateway);
    }
}
