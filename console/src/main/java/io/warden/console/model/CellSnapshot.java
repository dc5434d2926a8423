package io.warden.console.model;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Every lock with a queue and every session of the cell, as read at {@code takenAt}.
 *
 * @param revision the newest zxid the read saw (a lower bound for the state's revision)
 */
public record CellSnapshot(Instant takenAt, long revision, List<LockState> locks, List<SessionState> sessions) {
    public CellSnapshot {
        Objects.requireNonNull(takenAt, "takenAt");
        locks = List.copyOf(locks);
        sessions = List.copyOf(sessions);
    }
}
