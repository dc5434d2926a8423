package io.warden.service.queue;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warden.service.api.Mode;

/**
 * The data of a Warden queue node: who asked, for what. Written once at creation; never changed. {@code principal} is
 * the owner of the session (null in open mode), so listings can show other principals' holders by principal without
 * a read of each session.
 */
public record QueueNodeData(String sessionId, String clientId, String requestId, Mode mode,
                            @JsonInclude(JsonInclude.Include.NON_NULL) String principal) {
}
