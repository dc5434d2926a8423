package io.warden.service.api;

import java.util.List;

/** A session with its holds and queued requests. */
public record SessionView(String sessionId, String clientId, long ttlMs, long ttlMsRemaining, long lockDelayMs,
                          List<Hold> holds, List<Wait> waiting, long revision) {
    public record Hold(String name, Mode mode, long token) {
    }

    public record Wait(String name, Mode mode, String requestId) {
    }

    public SessionView {
        holds = List.copyOf(holds);
        waiting = List.copyOf(waiting);
    }
}
