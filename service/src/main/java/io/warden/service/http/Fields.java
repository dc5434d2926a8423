package io.warden.service.http;

import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.WardenException;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * Checks of single request values (docs/api.md), shared by bodies, paths and query strings. Each throws an
 * {@link WardenException.InvalidArgumentException} naming the field; none touches the engine.
 */
final class Fields {
    /** Engine session ids are 128 random bits in lowercase hex. */
    static final Pattern SESSION_ID = Pattern.compile("[0-9a-f]{32}");
    static final Pattern REQUEST_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    static final int MAX_CLIENT_ID = 128;
    static final long MAX_LOCK_DELAY_MS = 60_000;
    static final int DEFAULT_PAGE = 100;
    static final int MAX_PAGE = 1000;

    private Fields() {
    }

    static String sessionId(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw WardenException.invalid(field, "is required");
        }
        if (!SESSION_ID.matcher(value).matches()) {
            throw WardenException.invalid(field, "'" + abbreviate(value) + "' is not a session id (32 lowercase hex digits)");
        }
        return value;
    }

    static String requestId(String field, String value) {
        if (!REQUEST_ID.matcher(value).matches()) {
            throw WardenException.invalid(field, "must be 1-128 characters of [A-Za-z0-9._:-], got '" + abbreviate(value) + "'");
        }
        return value;
    }

    static String clientId(String field, String value) {
        return text(field, value, MAX_CLIENT_ID);
    }

    /** A revoke's reason: shown to the holder and in the audit log, so held to the rules of a client id. */
    static String reason(String field, String value) {
        return text(field, value, io.warden.service.api.RevokeResult.MAX_REASON);
    }

    /** Text a person reads (console, logs): non-empty, at most {@code max} characters, nothing invisible. */
    private static String text(String field, String value, int max) {
        if (value.isEmpty()) {
            throw WardenException.invalid(field, "must not be empty");
        }
        int length = value.codePointCount(0, value.length());
        if (length > max) {
            throw WardenException.invalid(field, "is at most " + max + " characters, got " + length);
        }
        if (value.codePoints().anyMatch(cp -> Character.isISOControl(cp) || Character.getType(cp) == Character.SURROGATE)) {
            throw WardenException.invalid(field, "must be text without control characters or unpaired surrogates");
        }
        // Invisible characters make a client id that is not what it looks like in the console and the logs.
        // FORMAT (Cf) covers the bidi controls U+200E/F, U+202A-E, U+2066-9, the zero-width U+200B-D, U+2060, U+FEFF
        // and the soft hyphen; line and paragraph separators break a log line.
        if (value.codePoints().anyMatch(cp -> Character.getType(cp) == Character.FORMAT
                || Character.getType(cp) == Character.LINE_SEPARATOR || Character.getType(cp) == Character.PARAGRAPH_SEPARATOR)) {
            throw WardenException.invalid(field, "must not contain invisible format characters (bidi controls such as "
                    + "U+202E, zero-width characters such as U+200B or U+FEFF) or line separators");
        }
        if (value.codePoints().allMatch(cp -> Character.isWhitespace(cp) || Character.isSpaceChar(cp))) {
            throw WardenException.invalid(field, "must not be blank (only white space)");
        }
        return value;
    }

    static LockName lockName(String field, String value) {
        return LockName.parse(field, value);
    }

    static Mode mode(String field, String value) {
        return enumValue(field, value, Mode.class);
    }

    static OnTimeout onTimeout(String field, String value) {
        return enumValue(field, value, OnTimeout.class);
    }

    static io.warden.service.api.OnDeadlock onDeadlock(String field, String value) {
        return enumValue(field, value, io.warden.service.api.OnDeadlock.class);
    }

    static long checkRange(String field, long value, long min, long max) {
        if (value < min || value > max) {
            String range = max == Long.MAX_VALUE ? "at least " + min : "between " + min + " and " + max;
            throw WardenException.invalid(field, "must be " + range + ", got " + value);
        }
        return value;
    }

    /** A decimal integer from a query string: digits only (an optional leading minus), no fraction, no exponent. */
    static long parseLong(String field, String text, long min, long max) {
        if (text.isEmpty() || !text.matches("-?[0-9]{1,40}")) {
            throw WardenException.invalid(field, "must be an integer, got '" + abbreviate(text) + "'");
        }
        long value;
        try {
            value = Long.parseLong(text);
        } catch (NumberFormatException e) {
            // Past the range of a long either way: name both bounds ("at least 0" would be wrong for a huge number).
            throw WardenException.invalid(field, "must be between " + min + " and " + max + ", got " + abbreviate(text));
        }
        return checkRange(field, value, min, max);
    }

    private static <E extends Enum<E>> E enumValue(String field, String value, Class<E> type) {
        // Exact, case-sensitive names: the contract spells them in capitals.
        for (E e : type.getEnumConstants()) {
            if (e.name().equals(value)) {
                return e;
            }
        }
        throw WardenException.invalid(field, "must be one of " + Arrays.toString(type.getEnumConstants())
                + ", got '" + abbreviate(value) + "'");
    }

    /** For messages: at most 64 characters, control characters shown as '?'. */
    static String abbreviate(String s) {
        String shortened = s.length() <= 64 ? s : s.substring(0, 64) + "...";
        return shortened.replaceAll("\\p{Cntrl}", "?");
    }
}
