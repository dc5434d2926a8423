package io.warden.cli;

import picocli.CommandLine;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as the CLI reads and prints them: one or more parts of a number and a unit, largest unit first —
 * {@code 250ms}, {@code 1.5s}, {@code 1m30s}, {@code 2h}; units {@code h}, {@code m}, {@code s}, {@code ms}. A bare
 * {@code 0} means no time; any other bare number is refused, because the API counts milliseconds and a shell script
 * counts seconds, and guessing wrong by a factor of 1000 is worse than asking. Values are whole milliseconds (the unit
 * of the API), not negative.
 *
 * <p>{@link #format} writes the same notation, so what the CLI prints can be given back to it: {@code parse(format(d))}
 * equals {@code d} for every duration {@code parse} returns.
 */
final class Durations {
    /** One part: a number (optionally with a fraction) and its unit. */
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|h|m|s)");
    private static final Pattern BARE_NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?");
    private static final String EXAMPLES = "e.g. 250ms, 1.5s, 1m30s, 2h";
    /** The units in the order a duration must name them, with their length in milliseconds. */
    private static final String[] UNITS = {"h", "m", "s", "ms"};
    private static final long[] UNIT_MILLIS = {3_600_000L, 60_000L, 1_000L, 1L};
    /** The largest duration accepted: what {@link Duration#toMillis()} can still return. */
    private static final BigInteger MAX_MILLIS = BigInteger.valueOf(Long.MAX_VALUE);

    private Durations() {
    }

    /**
     * Reads a duration; throws {@link IllegalArgumentException} with a message that quotes the value and says what is
     * wrong (the caller prefixes the option's name).
     */
    static Duration parse(String value) {
        String v = value == null ? "" : value.strip();
        if (v.isEmpty()) {
            throw new IllegalArgumentException("a duration is needed, " + EXAMPLES);
        }
        if (BARE_NUMBER.matcher(v).matches()) {
            if (new BigDecimal(v).signum() == 0) {
                return Duration.ZERO;
            }
            throw new IllegalArgumentException("'" + v + "' has no unit: give one, e.g. " + suggestion(v));
        }
        Matcher m = PART.matcher(v);
        BigDecimal millis = BigDecimal.ZERO;
        int at = 0;
        int lastUnit = -1;
        while (at < v.length()) {
            if (!m.find(at) || m.start() != at) {
                throw new IllegalArgumentException("'" + value + "' is not a duration (" + EXAMPLES + ")");
            }
            int unit = unitIndex(m.group(2));
            if (unit <= lastUnit) {
                throw new IllegalArgumentException("'" + value + "' is not a duration: give each unit once, largest "
                        + "first (h, m, s, ms), " + EXAMPLES);
            }
            lastUnit = unit;
            millis = millis.add(new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(UNIT_MILLIS[unit])));
            at = m.end();
        }
        BigInteger whole;
        try {
            whole = millis.toBigIntegerExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("'" + value + "' is not a whole number of milliseconds");
        }
        if (whole.compareTo(MAX_MILLIS) > 0) {
            throw new IllegalArgumentException("'" + value + "' is too long");
        }
        return Duration.ofMillis(whole.longValueExact());
    }

    /**
     * Writes {@code d} as {@link #parse} reads it, shortest first: {@code 0s}, {@code 250ms}, {@code 1.5s},
     * {@code 1m30s}, {@code 2h}. Below one second in milliseconds; from one second on in hours, minutes and seconds,
     * the seconds with up to three decimals. Sub-millisecond parts (never produced by {@code parse}) are dropped.
     */
    static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        long millis = d.toMillis();
        if (millis == 0) {
            return "0s";
        }
        if (millis < 1000) {
            return millis + "ms";
        }
        StringBuilder s = new StringBuilder();
        long hours = millis / 3_600_000L;
        long minutes = millis / 60_000L % 60;
        long secondsMillis = millis % 60_000L;
        if (hours > 0) {
            s.append(hours).append('h');
        }
        if (minutes > 0) {
            s.append(minutes).append('m');
        }
        if (secondsMillis > 0) {
            s.append(BigDecimal.valueOf(secondsMillis, 3).stripTrailingZeros().toPlainString()).append('s');
        }
        return s.toString();
    }

    private static int unitIndex(String unit) {
        for (int i = 0; i < UNITS.length; i++) {
            if (UNITS[i].equals(unit)) {
                return i;
            }
        }
        throw new IllegalStateException("no unit " + unit); // the pattern names only these units
    }

    /** What a bare number probably meant: {@code 3000} → "3000ms or 3s"; {@code 5} → "5s or 5ms". */
    private static String suggestion(String bare) {
        BigDecimal n = new BigDecimal(bare);
        if (n.compareTo(BigDecimal.valueOf(1000)) >= 0) {
            return bare + "ms or " + n.movePointLeft(3).stripTrailingZeros().toPlainString() + "s";
        }
        return bare + "s or " + bare + "ms";
    }

    /** The picocli converter of every duration option: picocli names the option in front of the message. */
    static final class Converter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
