package io.warden.service.zk;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;

/** JSON for the data of Warden's znodes (snake_case, tolerant of fields added by later versions). */
public final class Json {
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private Json() {
    }

    public static byte[] write(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads a value, or null when the bytes are not this type's JSON (for example a Curator client's lock data). */
    public static <T> T readOrNull(byte[] data, Class<T> type) {
        if (data == null || data.length == 0 || data[0] != '{') {
            return null;
        }
        try {
            return MAPPER.readValue(data, type);
        } catch (IOException e) {
            return null;
        }
    }
}
