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

    /**
     * A lock this session holds.
     *
     * @param requestId the request id, or null where the entry has none
     * @param request   the multi-lock request the hold belongs to, or null for a request of one name
     */
    public record Hold(String lock, Mode mode, long token, String requestId, Instant since, MultiRequest request) {
    }

    /**
     * A request of this session that waits.
     *
     * @param position the entries ahead of it in the lock's queue, holders included
     * @param request  the multi-lock request the entry belongs to, or null for a request of one name
     */
    public record Wait(String lock, Mode mode, long token, int position, String requestId, Instant since,
                       MultiRequest request) {
    }

    /**
     * A multi-lock request of this session: every name it has an entry on, and the names among them it does not hold
     * yet. It is granted only when {@code waitingOn} is empty; until then its holds are not its client's (the client was
     * not told GRANTED), though they keep others out.
     */
    public record MultiRequest(List<String> names, List<String> waitingOn) {
        public MultiRequest {
            names = List.copyOf(names);
            waitingOn = List.copyOf(waitingOn);
        }

        public boolean granted() {
            return waitingOn.isEmpty();
        }
    }
}
