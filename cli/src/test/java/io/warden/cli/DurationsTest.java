package io.warden.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationsTest {
    @ParameterizedTest(name = "{0} = {1} ms")
    @CsvSource({
            "0, 0", "0.0, 0", "0s, 0", "0ms, 0",
            "250ms, 250", "1ms, 1", "5s, 5000", "1.5s, 1500", "0.25s, 250", "1.001s, 1001",
            "2m, 120000", "1.5m, 90000", "1m30s, 90000", "2h, 7200000", "0.5h, 1800000",
            "1h2m3s4ms, 3723004", "1h30s, 3630000", "1m500ms, 60500", "' 10s ', 10000",
            "90s, 90000", "3000ms, 3000"})
    void parse_acceptsNumbersWithUnits(String text, long millis) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @Test
    void parse_bareNumberOtherThanZero_isRefused_suggestingUnits() {
        assertThatThrownBy(() -> Durations.parse("3000")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'3000' has no unit: give one, e.g. 3000ms or 3s");
        assertThatThrownBy(() -> Durations.parse("5")).hasMessage("'5' has no unit: give one, e.g. 5s or 5ms");
        assertThatThrownBy(() -> Durations.parse("1.5")).hasMessageContaining("has no unit");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "s", "ms", "-5s", "5 s", "5sec", "5S", "PT5S", "1d", "5us", "1.s", ".5s",
            "1s1m", "1m1m", "1s2s", "1h 30m", "1e3ms", "soon", "5s!"})
    void parse_refusesWhatIsNotADuration(String text) {
        assertThatThrownBy(() -> Durations.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("Exception");
    }

    @Test
    void parse_refusesFractionsOfAMillisecond_andOverflow() {
        assertThatThrownBy(() -> Durations.parse("1.5ms")).hasMessageContaining("whole number of milliseconds");
        assertThatThrownBy(() -> Durations.parse("1.0001s")).hasMessageContaining("whole number of milliseconds");
        assertThatThrownBy(() -> Durations.parse("99999999999999999999h")).hasMessageContaining("too long");
        assertThat(Durations.parse(Long.MAX_VALUE + "ms")).isEqualTo(Duration.ofMillis(Long.MAX_VALUE));
    }

    @ParameterizedTest(name = "{0} ms prints as {1}")
    @CsvSource({"0, 0s", "1, 1ms", "250, 250ms", "999, 999ms", "1000, 1s", "1500, 1.5s", "1001, 1.001s",
            "1250, 1.25s", "60000, 1m", "90000, 1m30s", "90500, 1m30.5s", "3600000, 1h", "7200000, 2h",
            "3630000, 1h30s", "3723004, 1h2m3.004s", "360000000, 100h"})
    void format_writesTheSameNotation(long millis, String text) {
        assertThat(Durations.format(Duration.ofMillis(millis))).isEqualTo(text);
    }

    @Test
    void format_neverWritesIso8601() {
        assertThat(Durations.format(Duration.ofSeconds(2))).isEqualTo("2s").doesNotContain("PT");
    }

    @Test
    void roundTrip_parseOfFormat_isTheSameDuration() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < 10_000; i++) {
            long millis = switch (i % 3) {
                case 0 -> random.nextLong(0, 2_000);
                case 1 -> random.nextLong(0, 10_000_000);
                default -> random.nextLong(0, Long.MAX_VALUE);
            };
            Duration d = Duration.ofMillis(millis);
            String text = Durations.format(d);
            assertThat(Durations.parse(text)).as(text).isEqualTo(d);
        }
        for (String text : new String[]{"250ms", "1.5s", "1m30s", "2h", "0s", "1h2m3.004s"}) {
            assertThat(Durations.format(Durations.parse(text))).isEqualTo(text);
        }
    }

    @Test
    void converter_turnsRefusalsIntoPicocliConversionErrors() {
        assertThatThrownBy(() -> new Durations.Converter().convert("3000"))
                .isInstanceOf(CommandLine.TypeConversionException.class).hasMessageContaining("3000ms or 3s");
        assertThat(new Durations.Converter().convert("1m30s")).isEqualTo(Duration.ofSeconds(90));
    }
}
