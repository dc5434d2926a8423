package io.warden.console.view;

import io.warden.console.model.Mode;
import io.warden.console.model.SessionState;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A session with what it holds and what it waits for, joined from the snapshot's lock queues.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param state the session record, or null when a queue names a session the snapshot has no record of (it was
 *              closed or expired between the two reads)
 */
public record SessionRow(String sessionId, SessionState state, List<Hold> holds, List<Wait> waits) {
    public SessionRow {
        Objects.requireNonNull(sessionId, "sessionId");
        holds = List.copyOf(holds);
        waits = List.copyOf(waits);
    }

    public String clientId() {
        return state != null ? state.clientId() : "?";
    }

    /** Whether the record exists; false for a session seen only in a queue. */
    public boolean known() {
        return state != null;
    }

    /** A lock this session holds. */
    public record Hold(String lock, Mode mode, long token, Instant since) {
    }

    /**
     * A request of this session that waits.
     *
     * @param position the entries ahead of it in the lock's queue, holders included
     */
    public record Wait(String lock, Mode mode, long token, int position, String requestId, Instant since) {
    }
}
