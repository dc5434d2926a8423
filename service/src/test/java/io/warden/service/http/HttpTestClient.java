package io.warden.service.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * A tiny blocking JSON client over {@link java.net.http.HttpClient} for the HTTP API tests. Made with an
 * {@link OpenApiContract}, it checks every reply it sees against the OpenAPI document (status, media type, body
 * schema) and fails the call with an {@link AssertionError} when the reply does not match.
 */
final class HttpTestClient {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    /** The Authorization header sent with every request, or null. */
    private final String authorization;
    private final OpenApiContract contract;

    HttpTestClient(int port) {
        this(port, null);
    }

    /** A client that validates every reply against {@code contract} (null: none). */
    HttpTestClient(int port, OpenApiContract contract) {
        this("http://127.0.0.1:" + port, null, contract);
    }

    private HttpTestClient(String base, String authorization, OpenApiContract contract) {
        this.base = base;
        this.authorization = authorization;
        this.contract = contract;
    }

    /** A client that sends {@code Authorization: Bearer token} with every request. */
    HttpTestClient withToken(String token) {
        return new HttpTestClient(base, "Bearer " + token, contract);
    }

    /** A client that sends this {@code Authorization} header as it is. */
    HttpTestClient withAuthorization(String header) {
        return new HttpTestClient(base, header, contract);
    }

    private HttpRequest.Builder authorized(HttpRequest.Builder b) {
        return authorization == null ? b : b.header("Authorization", authorization);
    }

    /** The reply, checked against the document (and, when it was a success, the request too) when this client has one. */
    private Reply reply(String method, String path, byte[] body, HttpResponse<String> r) {
        Reply reply = new Reply(r.statusCode(), r.headers().firstValue("Content-Type").orElse(null), r.body(),
                r.headers().firstValue("Retry-After"), r.headers().firstValue("Allow"));
        if (contract != null) {
            java.util.List<String> problems = new java.util.ArrayList<>(
                    contract.check(method, path, reply.status(), reply.contentType(), reply.text()));
            if (reply.status() / 100 == 2 && body != null) {
                problems.addAll(contract.checkAcceptedRequest(method, path, new String(body, StandardCharsets.UTF_8)));
            }
            if (!problems.isEmpty()) {
                throw new AssertionError("the reply does not match the OpenAPI document:\n  " + String.join("\n  ", problems));
            }
        }
        return reply;
    }

    record Reply(int status, String contentType, String text, Optional<String> retryAfter, Optional<String> allow) {
        JsonNode json() {
            try {
                return MAPPER.readTree(text);
            } catch (IOException e) {
                throw new AssertionError("not JSON (status " + status + "): " + text, e);
            }
        }

        boolean isProblem() {
            return contentType != null && contentType.startsWith("application/problem+json");
        }

        @Override
        public String toString() {
            return status + " " + contentType + " " + text;
        }
    }

    Reply get(String path) {
        return send("GET", path, null, null);
    }

    Reply delete(String path) {
        return send("DELETE", path, null, null);
    }

    Reply post(String path, String json) {
        return send("POST", path, json, "application/json");
    }

    /** POST with a body built from alternating keys and values (a value that is a String is quoted by Jackson). */
    Reply postJson(String path, Object... keysAndValues) {
        var node = MAPPER.createObjectNode();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            node.set((String) keysAndValues[i], MAPPER.valueToTree(keysAndValues[i + 1]));
        }
        return post(path, node.toString());
    }

    Reply send(String method, String path, String body, String contentType) {
        return send(method, path, body == null ? null : body.getBytes(StandardCharsets.UTF_8), contentType, Duration.ofSeconds(30));
    }

    /** A POST whose reply comes later (a held acquire); the caller waits on the future. */
    java.util.concurrent.CompletableFuture<Reply> postAsync(String path, String json) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        if (authorization != null) {
            request = HttpRequest.newBuilder(request, (k, v) -> true).header("Authorization", authorization).build();
        }
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> reply("POST", path, json.getBytes(StandardCharsets.UTF_8), r));
    }

    /** A POST whose body has no Content-Length (chunked transfer encoding). */
    Reply postChunked(String path, byte[] body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(body))).build();
        try {
            return reply("POST", path, body, client.send(authorization == null ? request
                    : HttpRequest.newBuilder(request, (k, v) -> true).header("Authorization", authorization).build(),
                    HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    Reply send(String method, String path, byte[] body, String contentType, Duration timeout) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        try {
            return reply(method, path, body, client.send(authorized(b).build(), HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
