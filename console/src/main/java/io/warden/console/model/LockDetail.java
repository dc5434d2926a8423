package io.warden.console.model;

import java.util.List;
import java.util.Objects;

/**
 * One lock read fresh, with the sessions of its queue and its recent events.
 *
 * @param revision     the zxid of the read
 * @param recentEvents newest first, as many as this gateway keeps
 */
public record LockDetail(LockState lock, long revision, List<LockEvent> recentEvents) {
    public LockDetail {
        Objects.requireNonNull(lock, "lock");
        recentEvents = List.copyOf(recentEvents);
    }
}
