package io.warden.service.lock;

import io.warden.service.api.Mode;

/** The data of a Warden queue node: who asked, for what. Written once at creation; never changed. */
public record QueueNodeData(String sessionId, String clientId, String requestId, Mode mode) {
}
