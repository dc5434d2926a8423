package io.warden.service.session;

import java.util.List;

/** Holds of an expired session that keep blocking for {@code delayMs}; the gateway run named finishes them. */
public record LockDelayRecord(String sessionId, long delayMs, List<String> nodes, String gateway, String incarnation) {
    LockDelayRecord withOwner(Owner owner) {
        return new LockDelayRecord(sessionId, delayMs, nodes, owner.gatewayId(), owner.incarnation());
    }
}
