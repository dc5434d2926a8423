package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Plain HTTP calls to the cell's gateways for the one-shot commands: each call goes to the endpoints in order and
 * moves on after a connection failure, a timeout or a 503; the first other answer is the answer.
 */
final class Gateways {
    static final ObjectMapper JSON = new ObjectMapper();

    /** A gateway's answer: its status and JSON body (a problem document for errors). */
    record Reply(int status, JsonNode body) {
        boolean ok() {
            return status >= 200 && status < 300;
        }

        /** The problem's detail (or title, or the body) for messages. */
        String problem() {
            if (body.hasNonNull("detail")) {
                return body.get("detail").asText();
            }
            if (body.hasNonNull("title")) {
                return body.get("title").asText();
            }
            return body.toString();
        }
    }

    private final List<URI> endpoints;
    private final Duration timeout;
    private final HttpClient http;

    /** {@code Bearer TOKEN}, or null for a cell in open mode. */
    private final String authorization;

    Gateways(List<URI> endpoints, Duration timeout) {
        this(endpoints, timeout, null, null);
    }

    /** With {@code token} (or null) as the bearer token and {@code tls} (or null for the JVM's) for https gateways. */
    Gateways(List<URI> endpoints, Duration timeout, String token, javax.net.ssl.SSLContext tls) {
        this.authorization = token == null ? null : "Bearer " + token;
        this.endpoints = endpoints;
        this.timeout = timeout;
        HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout.compareTo(Duration.ofSeconds(2)) < 0 ? timeout : Duration.ofSeconds(2));
        if (tls != null) {
            b.sslContext(tls);
        }
        this.http = b.build();
    }

    List<URI> endpoints() {
        return endpoints;
    }

    HttpClient http() {
        return http;
    }

    Reply get(String path) {
        return call("GET", path, null, timeout);
    }

    Reply post(String path, Map<String, ?> body, Duration extraWait) {
        return call("POST", path, body, timeout.plus(extraWait));
    }

    /** Sends the call to each endpoint in turn; {@link ExitCodes#UNREACHABLE} when none answered (other than 503). */
    Reply call(String method, String path, Map<String, ?> body, Duration callTimeout) {
        String failures = "";
        for (URI endpoint : endpoints) {
            HttpRequest.Builder rb = authorize(HttpRequest.newBuilder(resolve(endpoint, path))).timeout(callTimeout)
                    .header("Accept", "application/json");
            try {
                if (body != null) {
                    rb.header("Content-Type", "application/json")
                            .method(method, HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
                } else {
                    rb.method(method, HttpRequest.BodyPublishers.noBody());
                }
                HttpResponse<String> r = http.send(rb.build(), HttpResponse.BodyHandlers.ofString());
                JsonNode json = parse(r.body());
                if (r.statusCode() == 503) {
                    failures += "\n  " + endpoint + ": 503 " + new Reply(503, json).problem();
                    continue;
                }
                return new Reply(r.statusCode(), json);
            } catch (IOException e) {
                failures += "\n  " + endpoint + ": " + describe(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CliException(ExitCodes.ERROR, "interrupted");
            }
        }
        throw new CliException(ExitCodes.UNREACHABLE, "no gateway answered " + method + " " + path + ":" + failures);
    }

    /** Maps an answer that is not a success to the command's exit code. */
    /** Adds the credentials, if any. */
    HttpRequest.Builder authorize(HttpRequest.Builder b) {
        return authorization == null ? b : b.header("Authorization", authorization);
    }

    static CliException failure(String what, Reply r) {
        int code = switch (r.status()) {
            case 400, 413 -> ExitCodes.USAGE;
            case 401, 403 -> ExitCodes.DENIED;
            case 404 -> ExitCodes.NOT_FOUND;
            case 409 -> ExitCodes.NOT_ACQUIRED;
            case 503 -> ExitCodes.UNREACHABLE;
            default -> ExitCodes.ERROR;
        };
        String problemCode = r.body().path("code").asText("");
        return new CliException(code, what + ": " + r.status() + (problemCode.isEmpty() ? "" : " " + problemCode)
                + ": " + r.problem());
    }

    static URI resolve(URI endpoint, String path) {
        String base = endpoint.toString();
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return URI.create(base + path);
    }

    static String query(Map<String, String> params) {
        String q = params.entrySet().stream().filter(e -> e.getValue() != null)
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return q.isEmpty() ? "" : "?" + q;
    }

    /** A lock name as a path: its segments escaped, the slashes kept. */
    static String namePath(String name) {
        return java.util.Arrays.stream(name.split("/", -1))
                .map(s -> URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20"))
                .collect(Collectors.joining("/"));
    }

    static JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            return NullNode.getInstance();
        }
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            return JSON.getNodeFactory().objectNode().put("detail", body.length() > 200 ? body.substring(0, 200) + "..." : body);
        }
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        for (Throwable c = e.getCause(); (m == null || m.isBlank()) && c != null && c != c.getCause(); c = c.getCause()) {
            m = c.getMessage();
        }
        return e.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : " " + m);
    }
}
