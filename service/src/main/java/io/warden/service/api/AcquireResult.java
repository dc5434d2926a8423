package io.warden.service.api;

import java.util.List;

/**
 * The answer to an acquire. {@code token} is set when GRANTED; {@code position} (entries ahead in the
 * queue, holders included) when QUEUED. {@code revision} is the zxid the answer reflects.
 */
public record AcquireResult(Status status, Long token, Integer position, List<Holder> holders, long revision, String cell) {
    public enum Status { GRANTED, QUEUED, TIMED_OUT }

    public AcquireResult {
        holders = List.copyOf(holders);
    }

    /** An answer that names no cell: a one-cell gateway's. */
    public AcquireResult(Status status, Long token, Integer position, List<Holder> holders, long revision) {
        this(status, token, position, holders, revision, null);
    }

    /** This answer, from cell {@code name} (a gateway that serves several cells says which: its revision is that cell's). */
    public AcquireResult inCell(String name) {
        return new AcquireResult(status, token, position, holders, revision, name);
    }
}
