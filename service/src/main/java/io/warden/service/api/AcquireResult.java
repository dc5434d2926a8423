package io.warden.service.api;

import java.util.List;

/**
 * The answer to an acquire. {@code token} is set when GRANTED; {@code position} (entries ahead in the
 * queue, holders included) when QUEUED. {@code revision} is the zxid the answer reflects.
 */
public record AcquireResult(Status status, Long token, Integer position, List<Holder> holders, long revision) {
    public enum Status { GRANTED, QUEUED, TIMED_OUT }

    public AcquireResult {
        holders = List.copyOf(holders);
    }
}
