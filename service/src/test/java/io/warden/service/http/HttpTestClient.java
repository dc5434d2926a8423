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

/** A tiny blocking JSON client over {@link java.net.http.HttpClient} for the HTTP API tests. */
final class HttpTestClient {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    /** The Authorization header sent with every request, or null. */
    private final String authorization;

    HttpTestClient(int port) {
        this("http://127.0.0.1:" + port, null);
    }

    private HttpTestClient(String base, String authorization) {
        this.base = base;
        this.authorization = authorization;
    }

    /** A client that sends {@code Authorization: Bearer token} with every request. */
    HttpTestClient withToken(String token) {
        return new HttpTestClient(base, "Bearer " + token);
    }

    /** A client that sends this {@code Authorization} header as it is. */
    HttpTestClient withAuthorization(String header) {
        return new HttpTestClient(base, header);
    }

    private HttpRequest.Builder authorized(HttpRequest.Builder b) {
        return authorization == null ? b : b.header("Authorization", authorization);
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
                .thenApply(r -> new Reply(r.statusCode(), r.headers().firstValue("Content-Type").orElse(null), r.body(),
                        r.headers().firstValue("Retry-After"), r.headers().firstValue("Allow")));
    }

    /** A POST whose body has no Content-Length (chunked transfer encoding). */
    Reply postChunked(String path, byte[] body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(body))).build();
        try {
            HttpResponse<String> r = client.send(authorization == null ? request
                    : HttpRequest.newBuilder(request, (k, v) -> true).header("Authorization", authorization).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.headers().firstValue("Content-Type").orElse(null), r.body(),
                    r.headers().firstValue("Retry-After"), r.headers().firstValue("Allow"));
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
            HttpResponse<String> r = client.send(authorized(b).build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.headers().firstValue("Content-Type").orElse(null), r.body(),
                    r.headers().firstValue("Retry-After"), r.headers().firstValue("Allow"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
