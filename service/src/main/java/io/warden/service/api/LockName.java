package io.warden.service.api;

import java.util.List;
import java.util.regex.Pattern;

/**
 * A validated lock name {@code namespace/path...} (docs/api.md, Conventions): the namespace matches
 * {@code [a-z][a-z0-9-]{0,62}}, then 1–8 segments of {@code [A-Za-z0-9._:-]{1,128}}, none starting with
 * {@code _} or {@code .}; at most 512 characters in all.
 */
public record LockName(String namespace, List<String> segments) {
    public static final int MAX_LENGTH = 512;
    public static final int MAX_SEGMENTS = 8;
    private static final Pattern NAMESPACE = Pattern.compile("[a-z][a-z0-9-]{0,62}");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,127}");

    public LockName {
        segments = List.copyOf(segments);
        validateNamespace("name", namespace);
        if (segments.isEmpty() || segments.size() > MAX_SEGMENTS) {
            throw WardenException.invalid("name", "a lock name needs 1 to " + MAX_SEGMENTS
                    + " path segments after the namespace, got " + segments.size());
        }
        for (String s : segments) {
            if (!SEGMENT.matcher(s).matches()) {
                throw WardenException.invalid("name", "segment '" + abbreviate(s)
                        + "' is not allowed: use 1-128 of [A-Za-z0-9._:-], not starting with '_' or '.'");
            }
        }
        int length = namespace.length() + segments.stream().mapToInt(s -> s.length() + 1).sum();
        if (length > MAX_LENGTH) {
            throw WardenException.invalid("name", "a lock name is at most " + MAX_LENGTH + " characters, got " + length);
        }
    }

    /** Parses {@code namespace/a/b}; throws {@link WardenException.InvalidArgumentException} naming {@code field}. */
    public static LockName parse(String field, String text) {
        if (text == null || text.isEmpty()) {
            throw WardenException.invalid(field, "is required: a lock name like 'payments/invoice-42'");
        }
        if (text.length() > MAX_LENGTH) {
            throw WardenException.invalid(field, "a lock name is at most " + MAX_LENGTH + " characters, got " + text.length());
        }
        String[] parts = text.split("/", -1);
        try {
            return new LockName(parts[0], List.of(parts).subList(1, parts.length));
        } catch (WardenException.InvalidArgumentException e) {
            if (field.equals("name")) {
                throw e;
            }
            throw WardenException.invalid(field, e.getMessage().substring("name: ".length()));
        }
    }

    public static LockName parse(String text) {
        return parse("name", text);
    }

    public static void validateNamespace(String field, String namespace) {
        if (namespace == null || !NAMESPACE.matcher(namespace).matches()) {
            throw WardenException.invalid(field, "namespace '" + abbreviate(String.valueOf(namespace))
                    + "' is not allowed: use [a-z][a-z0-9-]{0,62}");
        }
    }

    /**
     * Checks a prefix of lock names ({@code GET /v1/watch?prefix=}): a namespace, or a namespace, {@code /} and the
     * start of a lock path. Every segment before the last must be a whole segment as in a name (so no empty, {@code .}
     * or {@code ..} segment: {@code prefix=ns/../..} is refused); the last may be empty (every lock under
     * the segments before it) or the start of a segment (it may not begin with {@code _} or {@code .}). A prefix that
     * no lock name can start with is refused, naming {@code field}.
     */
    public static void validatePrefix(String field, String prefix) {
        if (prefix.length() > MAX_LENGTH) {
            throw WardenException.invalid(field, "is at most " + MAX_LENGTH + " characters, got " + prefix.length());
        }
        String[] parts = prefix.split("/", -1);
        validateNamespace(field, parts[0]);
        if (parts.length == 1) {
            return;
        }
        int whole = parts.length - 2;
        String last = parts[parts.length - 1];
        if (whole + 1 > MAX_SEGMENTS) { // the segments before the last, and at least one more (or the last)
            throw WardenException.invalid(field, "a lock name has at most " + MAX_SEGMENTS + " path segments after the "
                    + "namespace; this prefix has more");
        }
        for (int i = 1; i < parts.length - 1; i++) {
            if (!SEGMENT.matcher(parts[i]).matches()) {
                throw WardenException.invalid(field, "segment '" + abbreviate(parts[i]) + "' is not allowed: use 1-128 of "
                        + "[A-Za-z0-9._:-], not starting with '_' or '.' (no empty, '.' or '..' segments)");
            }
        }
        if (!last.isEmpty() && !SEGMENT.matcher(last).matches()) {
            throw WardenException.invalid(field, "'" + abbreviate(last) + "' cannot start a segment of a lock name: use "
                    + "[A-Za-z0-9._:-], not starting with '_' or '.'");
        }
    }

    /** The path below the cell's {@code /locks} node, e.g. {@code payments/invoice-42}. */
    @Override
    public String toString() {
        return namespace + "/" + String.join("/", segments);
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
