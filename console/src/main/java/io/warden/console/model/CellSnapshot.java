package io.warden.console.model;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Every lock with a queue and every session of the gateway's cells, as read at {@code takenAt}.
 *
 * @param revision    the newest zxid the read saw (a lower bound for the state's revision)
 * @param unreadCells cells (other than the default one, home of the sessions) whose locks could not be read: they are
 *                    missing from {@code locks}, which pages must say rather than show those cells' namespaces as free
 */
public record CellSnapshot(Instant takenAt, long revision, List<LockState> locks, List<SessionState> sessions,
                           List<String> unreadCells) {
    public CellSnapshot {
        Objects.requireNonNull(takenAt, "takenAt");
        locks = List.copyOf(locks);
        sessions = List.copyOf(sessions);
        unreadCells = List.copyOf(unreadCells);
    }

    /** A snapshot of every cell's locks. */
    public CellSnapshot(Instant takenAt, long revision, List<LockState> locks, List<SessionState> sessions) {
        this(takenAt, revision, locks, sessions, List.of());
    }
}
