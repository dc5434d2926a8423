package io.warden.service.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warden.service.api.WardenException;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A request body: one JSON object whose members are read with exact types. Nothing is coerced: a string is
 * not a number, {@code 1.0} is not an integer, {@code "true"} is not a boolean, an object is not a string.
 * Members the call does not know are rejected up front. An explicit {@code null} counts as absent.
 *
 * <p>Every failure is an {@link WardenException.InvalidArgumentException} naming the JSON member (or
 * {@code body} for the body as a whole), so the HTTP answer is a 400 that says what to fix.
 */
final class JsonBody {
    static final String BODY = "body";

    private final ObjectNode node;

    private JsonBody(ObjectNode node) {
        this.node = node;
    }

    /** Parses {@code bytes} as a JSON object with no members outside {@code allowed}. */
    static JsonBody parse(Json json, byte[] bytes, Set<String> allowed) {
        JsonNode tree;
        try {
            tree = json.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw WardenException.invalid(BODY, "is not valid JSON: " + e.getOriginalMessage());
        }
        if (tree == null) {
            throw WardenException.invalid(BODY, "is empty; send a JSON object");
        }
        if (!(tree instanceof ObjectNode object)) {
            throw WardenException.invalid(BODY, "must be a JSON object, got " + describe(tree));
        }
        for (Iterator<String> names = object.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw WardenException.invalid(abbreviate(name), "is not a field of this request (allowed: "
                        + String.join(", ", allowed.stream().sorted().toList()) + ")");
            }
        }
        return new JsonBody(object);
    }

    /** An empty body is allowed and means {@code {}}; anything else must parse as {@link #parse}. */
    static JsonBody parseOptional(Json json, byte[] bytes, Set<String> allowed) {
        if (isBlank(bytes)) {
            return new JsonBody(json.object());
        }
        return parse(json, bytes, allowed);
    }

    String requiredString(String field) {
        String value = optionalString(field);
        if (value == null) {
            throw WardenException.invalid(field, "is required");
        }
        return value;
    }

    String optionalString(String field) {
        JsonNode value = present(field);
        if (value == null) {
            return null;
        }
        if (!value.isTextual()) {
            throw WardenException.invalid(field, "must be a string, got " + describe(value));
        }
        return value.textValue();
    }

    long requiredLong(String field, long min, long max) {
        Long value = optionalLong(field, min, max);
        if (value == null) {
            throw WardenException.invalid(field, "is required");
        }
        return value;
    }

    /** An integer in {@code [min, max]}; null when absent. */
    Long optionalLong(String field, long min, long max) {
        JsonNode value = present(field);
        if (value == null) {
            return null;
        }
        if (!value.isIntegralNumber()) {
            throw WardenException.invalid(field, "must be an integer, got " + describe(value));
        }
        if (!value.canConvertToLong()) {
            throw WardenException.invalid(field, "must be between " + min + " and " + max + ", got " + value.asText());
        }
        return Fields.checkRange(field, value.longValue(), min, max);
    }

    /**
     * A JSON array of strings with at most {@code max} elements; null when absent. Longer arrays are refused before their
     * elements are looked at.
     */
    List<String> optionalStrings(String field, int max) {
        JsonNode value = present(field);
        if (value == null) {
            return null;
        }
        if (!value.isArray()) {
            throw WardenException.invalid(field, "must be an array of strings, got " + describe(value));
        }
        if (value.size() > max) {
            throw WardenException.invalid(field, "has at most " + max + " elements, got " + value.size());
        }
        List<String> out = new java.util.ArrayList<>(value.size());
        for (JsonNode e : value) {
            if (!e.isTextual()) {
                throw WardenException.invalid(field, "must be an array of strings; element " + out.size() + " is "
                        + describe(e));
            }
            out.add(e.textValue());
        }
        return out;
    }

    /** Whether {@code field} is present and not null. */
    boolean has(String field) {
        return present(field) != null;
    }

    private JsonNode present(String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value;
    }

    private static String describe(JsonNode value) {
        if (value.isTextual()) {
            return "a string";
        }
        if (value.isIntegralNumber()) {
            return "an integer";
        }
        if (value.isNumber()) {
            return "a number with a fraction or exponent (" + abbreviate(value.asText()) + ")";
        }
        if (value.isBoolean()) {
            return "a boolean";
        }
        if (value.isArray()) {
            return "an array";
        }
        if (value.isObject()) {
            return "an object";
        }
        return value.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }

    private static boolean isBlank(byte[] bytes) {
        for (byte b : bytes) {
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                return false;
            }
        }
        return true;
    }

    private static String abbreviate(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }
}
