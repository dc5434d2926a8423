package io.warden.service.session;

import java.util.List;

/** Holds of an expired session that keep blocking for {@code delayMs}; {@code gateway} finishes them. */
public record LockDelayRecord(String sessionId, long delayMs, List<String> nodes, String gateway) {
}
