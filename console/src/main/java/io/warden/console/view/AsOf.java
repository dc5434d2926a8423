package io.warden.console.view;

import io.warden.console.model.CellSnapshot;
import java.time.Duration;
import java.time.Instant;

/**
 * What a live region shows of its freshness: "as of 14:03:22 UTC (revision 123)".
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param at       when the data was read
 * @param revision the zxid it reflects, or -1 when none is known
 * @param now      when the page was rendered; {@code now - at} is the data's age, which the browser adds to the time
 *                 since it received the fragment to decide whether the page is stale (no clock skew involved)
 */
public record AsOf(Instant at, long revision, Instant now) {
    public static AsOf of(CellSnapshot cell, Instant now) {
        return new AsOf(cell.takenAt(), cell.revision(), now);
    }

    public long ageMs() {
        return Math.max(0, Duration.between(at, now).toMillis());
    }
}
