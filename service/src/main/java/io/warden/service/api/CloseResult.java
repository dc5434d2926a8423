package io.warden.service.api;

import java.util.List;

/** What closing a session did: the names it released and the names whose queued requests it cancelled. */
public record CloseResult(List<String> released, List<String> cancelled, long revision) {
    public CloseResult {
        released = List.copyOf(released);
        cancelled = List.copyOf(cancelled);
    }
}
