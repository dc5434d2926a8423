package io.warden.service.zk;

import io.warden.service.api.Mode;

/**
 * The data of {@code /sessions/{id}/{request_uuid}}: which lock a request of the session is for. When the request
 * ends (released, cancelled, timed out) the record stays as a tombstone ({@code done}) so that a late duplicate of
 * the acquire with the same {@code request_id} cannot queue again; see {@link #TOMBSTONE}.
 */
public record RequestRecord(String name, Mode mode, String requestId, boolean done) {
    /** The data an ended request's record is set to. */
    public static final RequestRecord TOMBSTONE = new RequestRecord(null, null, null, true);

    public RequestRecord(String name, Mode mode, String requestId) {
        this(name, mode, requestId, false);
    }
}
