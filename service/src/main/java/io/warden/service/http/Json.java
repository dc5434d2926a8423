package io.warden.service.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The API's two Jackson mappers. Requests are read as a tree by a strict parser (no comments, no duplicate
 * keys, nothing after the value) and then checked field by field by {@link JsonBody}, so every type error
 * names its field. Replies are records written in snake_case with null members left out (a member that
 * the contract says may be {@code null} is marked {@code @JsonInclude(ALWAYS)} on its record).
 *
 * <p>Thread-safety: immutable after construction; Jackson mappers are safe for concurrent use.
 */
final class Json {
    private final ObjectMapper reader = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .build();

    private final ObjectMapper writer = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .defaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL, JsonInclude.Include.NON_NULL))
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .build();

    /** Parses one JSON value; null for an empty (or all-whitespace) body. */
    JsonNode readTree(byte[] body) throws JsonProcessingException {
        try {
            JsonNode node = reader.readTree(body);
            return node == null || node.isMissingNode() ? null : node;
        } catch (JsonProcessingException e) {
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e); // cannot happen on a byte array
        }
    }

    byte[] write(Object value) {
        try {
            return writer.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + value.getClass().getSimpleName() + " as JSON", e);
        }
    }

    ObjectNode object() {
        return writer.createObjectNode();
    }

    JsonNode tree(Object value) {
        return writer.valueToTree(value);
    }
}
