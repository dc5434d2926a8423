package io.warden.service.zk;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warden.service.api.Mode;

import java.util.List;

/**
 * The data of {@code /sessions/{id}/{request_uuid}}: which lock a request of the session is for. When the request
 * ends (released, cancelled, timed out) the record stays as a tombstone ({@code done}) so that a late duplicate of
 * the acquire with the same {@code request_id} cannot queue again; see {@link #TOMBSTONE}.
 *
 * <p>A multi-lock request's record has {@code names} (in the order the request gave them) and no {@code name}: it has
 * one queue entry per name, all with the request's uuid (docs/decisions/0012).
 */
public record RequestRecord(String name, Mode mode, String requestId, boolean done,
                            @JsonInclude(JsonInclude.Include.NON_NULL) List<String> names,
                            @JsonInclude(JsonInclude.Include.NON_NULL) io.warden.service.api.Deadlock deadlock) {
    /** The data an ended request's record is set to. */
    public static final RequestRecord TOMBSTONE = new RequestRecord(null, null, null, true, null, null);

    public RequestRecord(String name, Mode mode, String requestId) {
        this(name, mode, requestId, false, null, null);
    }

    /** A live multi-lock request's record. */
    public static RequestRecord multi(List<String> names, Mode mode, String requestId) {
        return new RequestRecord(null, mode, requestId, false, List.copyOf(names), null);
    }

    /** The names the request has entries on: its one name, or a multi-lock request's names; empty for a tombstone. */
    public List<String> lockNames() {
        return names != null ? names : name != null ? List.of(name) : List.of();
    }

    /** Whether this is a multi-lock request's record. */
    public boolean multiLock() {
        return names != null;
    }

    public RequestRecord(String name, Mode mode, String requestId, boolean done) {
        this(name, mode, requestId, done, null, null);
    }

    /**
     * The tombstone of a request removed as the victim of {@code cycle}: a repeat of its acquire answers 409 DEADLOCK
     * with it, on any gateway (docs/decisions/0013-deadlock-detection.md).
     */
    public static RequestRecord deadlockVictim(io.warden.service.api.Deadlock cycle) {
        return new RequestRecord(null, null, null, true, null, cycle.asStored());
    }
}
