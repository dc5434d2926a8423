package io.warden.service.session;

/**
 * The durable session record at {@code /sessions/{id}}. {@code gateway} and {@code incarnation} name the gateway run that
 * tracks its TTL ({@link Owner}): a gateway restarted under the same id is another incarnation, so an old run that was
 * only partitioned sees, when it hears from ZooKeeper again, that the record is no longer its own.
 */
public record SessionRecord(String clientId, long ttlMs, long lockDelayMs, String gateway, String incarnation) {
    SessionRecord withOwner(Owner owner) {
        return new SessionRecord(clientId, ttlMs, lockDelayMs, owner.gatewayId(), owner.incarnation());
    }

    SessionRecord withTtl(long ttl) {
        return new SessionRecord(clientId, ttl, lockDelayMs, gateway, incarnation);
    }
}
