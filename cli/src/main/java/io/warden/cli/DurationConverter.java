package io.warden.cli;

import picocli.CommandLine;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations on the command line: {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h}, a bare number of seconds, or ISO-8601 ({@code PT5S}). */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern SIMPLE = Pattern.compile("(\\d+)(ms|s|m|h)?");

    @Override
    public Duration convert(String value) {
        String v = value.trim().toLowerCase(java.util.Locale.ROOT);
        Matcher m = SIMPLE.matcher(v);
        if (m.matches()) {
            long n;
            try {
                n = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is too large");
            }
            String unit = m.group(2) == null ? "s" : m.group(2);
            return switch (unit) {
                case "ms" -> Duration.ofMillis(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofSeconds(n);
            };
        }
        try {
            Duration d = Duration.parse(value.trim());
            if (d.isNegative()) {
                throw new CommandLine.TypeConversionException("'" + value + "' is negative");
            }
            return d;
        } catch (DateTimeParseException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a duration (e.g. 500ms, 5s, 2m, 1h, PT5S)");
        }
    }
}
