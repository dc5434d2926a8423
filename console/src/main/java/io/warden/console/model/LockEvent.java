package io.warden.console.model;

import java.time.Instant;

/**
 * An event of the watch stream on one lock.
 *
 * @param type   QUEUED, GRANTED, RELEASED, CANCELLED or EXPIRED
 * @param seenAt when this gateway saw it, or null when not known
 */
public record LockEvent(long revision, String type, String sessionId, Mode mode, long token, Instant seenAt) {
}
