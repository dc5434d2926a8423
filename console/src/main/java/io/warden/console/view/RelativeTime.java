package io.warden.console.view;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Durations and instants as an SRE reads them at a glance: {@code 3 s}, {@code 4 min 12 s}, {@code 2 h 5 min},
 * {@code 3 d}; clock times in UTC.
 *
 * <p>Concurrency: stateless; safe from any thread.
 */
public final class RelativeTime {
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter DATE_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    private RelativeTime() {
    }

    /**
     * Two units at most, the larger first; zero parts are left out. Below a second (and for negative durations,
     * which a skewed clock can produce) it is {@code 0 s}.
     */
    public static String format(Duration d) {
        long s = d.isNegative() ? 0 : d.getSeconds();
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return pair(s / 60, "min", s % 60, "s");
        }
        if (s < 86_400) {
            return pair(s / 3600, "h", (s % 3600) / 60, "min");
        }
        return pair(s / 86_400, "d", (s % 86_400) / 3600, "h");
    }

    /** {@link #format} of the time from {@code since} to {@code now}; an em dash when {@code since} is null. */
    public static String since(Instant since, Instant now) {
        return since == null ? "—" : format(Duration.between(since, now));
    }

    /** {@link #format} of a number of milliseconds; an em dash when null. */
    public static String millis(Long ms) {
        return ms == null ? "—" : format(Duration.ofMillis(ms));
    }

    /** {@code HH:mm:ss} in UTC. */
    public static String clock(Instant at) {
        return at == null ? "—" : CLOCK.format(at);
    }

    /** {@code yyyy-MM-dd HH:mm:ss} in UTC, for tooltips and the audit log. */
    public static String dateTime(Instant at) {
        return at == null ? "—" : DATE_TIME.format(at) + " UTC";
    }

    /** ISO-8601 for {@code <time datetime>}; empty when null. */
    public static String iso(Instant at) {
        return at == null ? "" : at.toString();
    }

    private static String pair(long major, String majorUnit, long minor, String minorUnit) {
        return minor == 0 ? major + " " + majorUnit : major + " " + majorUnit + " " + minor + " " + minorUnit;
    }
}
