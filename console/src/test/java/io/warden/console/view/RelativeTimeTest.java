package io.warden.console.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RelativeTimeTest {
    @Test
    void seconds_belowAMinute() {
        assertThat(RelativeTime.format(Duration.ZERO)).isEqualTo("0 s");
        assertThat(RelativeTime.format(Duration.ofMillis(999))).isEqualTo("0 s");
        assertThat(RelativeTime.format(Duration.ofSeconds(3))).isEqualTo("3 s");
        assertThat(RelativeTime.format(Duration.ofSeconds(59))).isEqualTo("59 s");
    }

    @Test
    void minutesAndSeconds_belowAnHour() {
        assertThat(RelativeTime.format(Duration.ofSeconds(60))).isEqualTo("1 min");
        assertThat(RelativeTime.format(Duration.ofSeconds(4 * 60 + 12))).isEqualTo("4 min 12 s");
        assertThat(RelativeTime.format(Duration.ofSeconds(3599))).isEqualTo("59 min 59 s");
    }

    @Test
    void hoursAndMinutes_belowADay() {
        assertThat(RelativeTime.format(Duration.ofHours(1))).isEqualTo("1 h");
        assertThat(RelativeTime.format(Duration.ofMinutes(125).plusSeconds(40))).isEqualTo("2 h 5 min");
    }

    @Test
    void daysAndHours_fromADay() {
        assertThat(RelativeTime.format(Duration.ofDays(3))).isEqualTo("3 d");
        assertThat(RelativeTime.format(Duration.ofDays(3).plusHours(4).plusMinutes(59))).isEqualTo("3 d 4 h");
    }

    @Test
    void negative_fromASkewedClock_isZero() {
        assertThat(RelativeTime.format(Duration.ofSeconds(-5))).isEqualTo("0 s");
        Instant now = Instant.parse("2026-11-29T10:00:00Z");
        assertThat(RelativeTime.since(now.plusSeconds(3), now)).isEqualTo("0 s");
    }

    @Test
    void nulls_areADash() {
        assertThat(RelativeTime.since(null, Instant.EPOCH)).isEqualTo("—");
        assertThat(RelativeTime.millis(null)).isEqualTo("—");
        assertThat(RelativeTime.clock(null)).isEqualTo("—");
        assertThat(RelativeTime.iso(null)).isEmpty();
    }

    @Test
    void clockAndIso_areUtc() {
        Instant at = Instant.parse("2026-11-29T14:03:22.500Z");
        assertThat(RelativeTime.clock(at)).isEqualTo("14:03:22");
        assertThat(RelativeTime.dateTime(at)).isEqualTo("2026-11-29 14:03:22 UTC");
        assertThat(RelativeTime.iso(at)).isEqualTo("2026-11-29T14:03:22.500Z");
        assertThat(RelativeTime.millis(12_000L)).isEqualTo("12 s");
    }
}
