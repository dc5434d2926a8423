package io.warden.service.session;

import io.warden.service.api.Mode;

/** The data of {@code /sessions/{id}/{request_uuid}}: which lock a request of the session is for. */
public record RequestRecord(String name, Mode mode, String requestId) {
}
