package io.warden.service.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.dialect.Dialects;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The OpenAPI document ({@code openapi.json}) as the tests use it: its operations, and the JSON schema of each
 * response, with which real replies are validated (json-schema-validator, the OpenAPI 3.1 dialect of draft 2020-12).
 * A schema is taken by its JSON pointer inside the whole document, so every {@code $ref} into {@code components}
 * resolves as it would for any OpenAPI tool.
 *
 * <p>Thread-safety: immutable after construction but for the schema cache, a concurrent map.
 */
final class OpenApiContract {
    /** Where the document is registered for $ref resolution; never fetched. */
    private static final String BASE = "https://warden.test/openapi.json";
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");

    /** An operation of the document: the method in capitals and the path template as written there. */
    record Operation(String method, String path) {
    }

    private final String text;
    private final JsonNode document;
    private final SchemaRegistry registry;
    private final Map<String, Schema> schemas = new ConcurrentHashMap<>();

    private OpenApiContract(String text) {
        this.text = text;
        try {
            this.document = MAPPER.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.registry = SchemaRegistry.withDefaultDialect(Dialects.getOpenApi31(), b -> b.schemas(Map.of(BASE, text)));
    }

    /** The document as the gateway ships it (its class-path resource). */
    static OpenApiContract load() {
        try (InputStream in = OpenApi.class.getResourceAsStream(OpenApi.RESOURCE)) {
            return of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static OpenApiContract of(String text) {
        return new OpenApiContract(text);
    }

    String text() {
        return text;
    }

    JsonNode document() {
        return document;
    }

    Set<Operation> operations() {
        Set<Operation> ops = new LinkedHashSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = document.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> path = paths.next();
            for (Iterator<String> keys = path.getValue().fieldNames(); keys.hasNext(); ) {
                String key = keys.next();
                if (METHODS.contains(key)) {
                    ops.add(new Operation(key.toUpperCase(Locale.ROOT), path.getKey()));
                }
            }
        }
        return ops;
    }

    /**
     * The document's path template that a concrete request path matches ({@code /v1/locks/{name}} takes the rest of
     * the path, slashes included; other parameters one segment), or empty when none does.
     */
    Optional<String> templateOf(String path) {
        String bare = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        for (Iterator<String> templates = document.get("paths").fieldNames(); templates.hasNext(); ) {
            String template = templates.next();
            if (!template.contains("{") && template.equals(bare)) {
                return Optional.of(template);
            }
        }
        for (Iterator<String> templates = document.get("paths").fieldNames(); templates.hasNext(); ) {
            String template = templates.next();
            String regex = Pattern.quote(template).replace("{name}", "\\E.+\\Q").replaceAll("\\{[a-z_]+}", "\\\\E[^/]+\\\\Q");
            if (template.contains("{") && bare.matches(regex)) {
                return Optional.of(template);
            }
        }
        return Optional.empty();
    }

    /**
     * What is wrong with a reply to {@code method path} (empty when it matches the document): its status must be one the
     * operation declares, its media type one that status declares, and a JSON body must validate against that schema.
     * A path or method the document does not have must be answered with a problem document (404 or 405).
     */
    List<String> check(String method, String path, int status, String contentType, String body) {
        String mediaType = contentType == null ? null : contentType.split(";")[0].trim();
        Optional<String> template = templateOf(path);
        JsonNode operation = template.map(t -> document.get("paths").get(t).get(method.toLowerCase(Locale.ROOT))).orElse(null);
        if (operation == null) {
            int expected = template.isEmpty() ? 404 : 405;
            if (status != expected) {
                return List.of(method + " " + path + " is not in the document, so it must be a " + expected + ", got " + status);
            }
            return validate("#/components/schemas/Problem", mediaType, "application/problem+json", body, method + " " + path);
        }
        String pointer = "#/paths/" + escape(template.get()) + "/" + method.toLowerCase(Locale.ROOT) + "/responses/" + status;
        JsonNode response = operation.get("responses").get(Integer.toString(status));
        if (response == null) {
            return List.of(method + " " + template.get() + " declares no status " + status + " (body " + abbreviate(body) + ")");
        }
        if (response.has("$ref")) {
            pointer = response.get("$ref").asText();
            response = resolve(pointer);
        }
        JsonNode content = response.get("content");
        if (content == null) {
            return List.of();
        }
        if (mediaType == null || !content.has(mediaType)) {
            return List.of(method + " " + template.get() + " " + status + ": media type " + mediaType + " is not declared "
                    + "(declared: " + content.fieldNames().next() + ")");
        }
        if (!mediaType.contains("json")) {
            return List.of();
        }
        return validate(pointer + "/content/" + escape(mediaType) + "/schema", mediaType, mediaType, body,
                method + " " + path + " " + status);
    }

    /**
     * What is wrong with a request body the gateway accepted (a 2xx reply): it must be an instance of the operation's
     * request schema, so the document admits every request the gateway takes. An empty body is not checked.
     */
    List<String> checkAcceptedRequest(String method, String path, String body) {
        if (body == null || body.isBlank()) {
            return List.of();
        }
        Optional<String> template = templateOf(path);
        JsonNode operation = template.map(t -> document.get("paths").get(t).get(method.toLowerCase(Locale.ROOT))).orElse(null);
        if (operation == null || !operation.has("requestBody")) {
            return List.of(method + " " + path + " took a body the document does not declare: " + abbreviate(body));
        }
        String pointer = "#/paths/" + escape(template.get()) + "/" + method.toLowerCase(Locale.ROOT)
                + "/requestBody/content/application~1json/schema";
        return validate(pointer, "application/json", "application/json", body, "request " + method + " " + path);
    }

    /** What is wrong with {@code node} as an instance of {@code components/schemas/name}. */
    List<String> checkSchema(String name, JsonNode node) {
        return messages(schema("#/components/schemas/" + name).validate(node), "schema " + name);
    }

    private List<String> validate(String pointer, String mediaType, String expectedType, String body, String what) {
        if (!expectedType.equals(mediaType)) {
            return List.of(what + ": media type " + mediaType + ", expected " + expectedType);
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(body);
        } catch (IOException e) {
            return List.of(what + ": the body is not JSON: " + abbreviate(body));
        }
        return messages(schema(pointer).validate(node), what + " " + abbreviate(body));
    }

    private Schema schema(String pointer) {
        return schemas.computeIfAbsent(pointer, p -> registry.getSchema(SchemaLocation.of(BASE + p)));
    }

    private static List<String> messages(List<Error> errors, String what) {
        List<String> out = new ArrayList<>();
        for (Error e : errors) {
            out.add(what + ": " + e.getMessage());
        }
        return out;
    }

    private JsonNode resolve(String ref) {
        return document.at(ref.substring(1));
    }

    /** A JSON pointer token: {@code ~} as {@code ~0}, {@code /} as {@code ~1}. */
    private static String escape(String token) {
        return token.replace("~", "~0").replace("/", "~1");
    }

    private static String abbreviate(String s) {
        return s == null ? "(none)" : s.length() <= 300 ? s : s.substring(0, 300) + "...";
    }
}
