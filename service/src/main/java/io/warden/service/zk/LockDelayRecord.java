package io.warden.service.zk;

import java.util.List;

/** Holds of an expired session that keep blocking for {@code delayMs}; the gateway run named finishes them. */
public record LockDelayRecord(String sessionId, long delayMs, List<String> nodes, String gateway, String incarnation) {
    /** This record as the gateway run {@code gateway}/{@code incarnation} owns it. */
    public LockDelayRecord withOwner(String gateway, String incarnation) {
        return new LockDelayRecord(sessionId, delayMs, nodes, gateway, incarnation);
    }
}
