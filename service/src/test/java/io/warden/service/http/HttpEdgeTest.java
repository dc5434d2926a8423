package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.warden.service.config.WardenConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Media types and browsers: a web page on another site could take a lease
 * ({@code Content-Type: text/plain} needs no CORS preflight, and the gateway read it as JSON), and a page served under
 * a rebound DNS name could read the listings (no Host check). Every refusal here is decided before the engine: the
 * {@link UnreachableWarden} fails the test if any call reaches it.
 */
class HttpEdgeTest {
    private static final String OPEN = "{\"client_id\":\"web-page\"}";
    private static final String LEASE = "{\"resource\":\"r\",\"client_id\":\"web-page\",\"ttl\":30}";

    private UnreachableWarden warden;
    private HttpApi api;

    private void start(WardenConfig config) {
        warden = new UnreachableWarden(true);
        api = new HttpApi(warden, config, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        api.start("127.0.0.1", 0);
    }

    @AfterEach
    void stop() {
        if (api != null) {
            api.stop();
        }
        assertThat(warden.calls.get()).as("calls that reached the engine").isZero();
    }

    record Answer(int status, String head, String body) {
        JsonNode json() {
            try {
                return HttpTestClient.MAPPER.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + this, e);
            }
        }

        @Override
        public String toString() {
            return head + "\n\n" + body;
        }
    }

    /** One request on a raw socket (java.net.http refuses to set Host), with the given extra header lines. */
    private Answer send(String method, String path, String host, String body, String... headers) {
        StringBuilder req = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n");
        for (String h : headers) {
            req.append(h).append("\r\n");
        }
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        if (body != null) {
            req.append("Content-Length: ").append(bytes.length).append("\r\n");
        }
        req.append("\r\n");
        try (Socket s = new Socket("127.0.0.1", api.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().write(bytes);
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int split = all.indexOf("\r\n\r\n");
            String head = split < 0 ? all : all.substring(0, split);
            String rest = split < 0 ? "" : all.substring(split + 4);
            int status = Integer.parseInt(head.substring(9, 12));
            return new Answer(status, head, rest);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String local() {
        return "127.0.0.1:" + api.port();
    }

    private static void assertRefused(Answer a, int status, String code, String field) {
        assertThat(a.status()).as(a.toString()).isEqualTo(status);
        assertThat(a.head()).as(a.toString()).containsIgnoringCase("Content-Type: application/problem+json");
        JsonNode doc = a.json();
        assertThat(doc.get("code").asText()).as(a.toString()).isEqualTo(code);
        assertThat(doc.get("field").asText()).as(a.toString()).isEqualTo(field);
        assertThat(doc.get("detail").asText()).startsWith(field + ":");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
            "application/json; charset=latin1", "application/jsonx", "application/json; x=1"})
    void aBodyThatIsNotDeclaredJson_is415NamingContentType(String type) {
        start(WardenConfig.defaults());
        assertRefused(send("POST", "/v1/sessions", local(), OPEN, "Content-Type: " + type), 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type");
        assertRefused(send("POST", "/lock/acquire", local(), LEASE, "Content-Type: " + type), 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type");
    }

    @Test
    void aBodyWithoutContentType_is415() {
        start(WardenConfig.defaults());
        assertRefused(send("POST", "/v1/acquire", local(), "{\"session_id\":\"bad\",\"name\":\"a/b\"}"), 415,
                "UNSUPPORTED_MEDIA_TYPE", "Content-Type");
    }

    @Test
    void aForeignPageSendingTextPlain_cannotTakeALease() {
        start(WardenConfig.defaults());
        Answer a = send("POST", "/lock/acquire", local(), LEASE, "Content-Type: text/plain", "Origin: https://evil.example");
        assertThat(a.status()).as(a.toString()).isIn(403, 415);
        assertThat(a.head()).containsIgnoringCase("application/problem+json");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"application/json", "application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\""})
    void json_withOrWithoutUtf8Charset_isRead(String type) {
        start(WardenConfig.defaults());
        // Reaching the session_id check proves the body was accepted and parsed.
        Answer a = send("POST", "/v1/acquire", local(), "{\"session_id\":\"bad\",\"name\":\"a/b\"}", "Content-Type: " + type);
        assertRefused(a, 400, "INVALID_ARGUMENT", "session_id");
    }

    @Test
    void aBodylessPost_needsNoContentType() {
        start(WardenConfig.defaults());
        // keepalive without a body (the README's curl): reaches the session_id check
        assertRefused(send("POST", "/v1/sessions/xyz/keepalive", local(), null), 400, "INVALID_ARGUMENT", "session_id");
        assertRefused(send("POST", "/v1/sessions/xyz/keepalive", local(), ""), 400, "INVALID_ARGUMENT", "session_id");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gzip", "deflate", "br", "gzip, identity"})
    void aContentEncoding_isRefused415(String encoding) {
        start(WardenConfig.defaults());
        assertRefused(send("POST", "/v1/sessions", local(), OPEN, "Content-Type: application/json", "Content-Encoding: " + encoding),
                415, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding");
    }

    @Test
    void identityEncoding_isAccepted() {
        start(WardenConfig.defaults());
        assertRefused(send("POST", "/v1/acquire", local(), "{\"session_id\":\"bad\",\"name\":\"a/b\"}",
                "Content-Type: application/json", "Content-Encoding: identity"), 400, "INVALID_ARGUMENT", "session_id");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"evil.example", "evil.example:7070", "attacker.localhost.evil.example", "127.0.0.1.evil.example"})
    void aForeignHost_is421_onTheApiAndTheConsolePaths(String host) {
        start(WardenConfig.defaults());
        assertRefused(send("GET", "/v1/locks", host, null), 421, "MISDIRECTED_REQUEST", "Host");
        assertRefused(send("GET", "/v1/namespaces", host, null), 421, "MISDIRECTED_REQUEST", "Host");
        assertRefused(send("GET", "/metrics", host, null), 421, "MISDIRECTED_REQUEST", "Host");
        assertRefused(send("GET", "/console", host, null), 421, "MISDIRECTED_REQUEST", "Host");
    }

    @Test
    void healthProbes_answerWhateverTheHost() {
        start(WardenConfig.defaults());
        assertThat(send("GET", "/health/live", "10.1.2.3:7070", null).status()).isEqualTo(200);
        assertThat(send("GET", "/health/ready", "svc.cluster.local", null).status()).isEqualTo(200);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"localhost", "localhost:1234", "127.0.0.1", "[::1]:80", "[0:0:0:0:0:0:0:1]", "LOCALHOST."})
    void loopbackNames_areAllowedByDefault(String host) {
        start(WardenConfig.defaults());
        Answer a = send("GET", "/v1/locks?limit=-1", host, null);
        assertRefused(a, 400, "INVALID_ARGUMENT", "limit");
    }

    @Test
    void thisMachinesName_isAllowedByDefault() throws Exception {
        start(WardenConfig.defaults());
        String name = java.net.InetAddress.getLocalHost().getHostName();
        assertRefused(send("GET", "/v1/locks?limit=-1", name + ":" + api.port(), null), 400, "INVALID_ARGUMENT", "limit");
    }

    @Test
    void aForeignOrigin_is403_evenWithJson() {
        start(WardenConfig.defaults());
        assertRefused(send("POST", "/v1/sessions", local(), OPEN, "Content-Type: application/json", "Origin: https://evil.example"),
                403, "PERMISSION_DENIED", "Origin");
        assertRefused(send("GET", "/v1/locks", local(), null, "Origin: null"), 403, "PERMISSION_DENIED", "Origin");
        // same host, another port: another origin
        assertRefused(send("GET", "/v1/locks", local(), null, "Origin: http://127.0.0.1:1"), 403, "PERMISSION_DENIED", "Origin");
        assertRefused(send("POST", "/console/login", local(), "token=x", "Content-Type: application/x-www-form-urlencoded",
                "Origin: https://evil.example"), 403, "PERMISSION_DENIED", "Origin");
    }

    @Test
    void theGatewaysOwnOrigin_isAllowed() {
        start(WardenConfig.defaults());
        assertRefused(send("GET", "/v1/locks?limit=-1", local(), null, "Origin: http://" + local()), 400, "INVALID_ARGUMENT", "limit");
        assertRefused(send("GET", "/v1/locks?limit=-1", "localhost:" + api.port(), null, "Origin: http://localhost:" + api.port()),
                400, "INVALID_ARGUMENT", "limit");
    }

    @Test
    void aWebSocketUpgrade_fromAForeignOrigin_isRefused() {
        start(WardenConfig.defaults());
        Answer a = send("GET", "/v1/sessions/0123456789abcdef0123456789abcdef/keepalive", local(), null,
                "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Origin: https://evil.example");
        assertRefused(a, 403, "PERMISSION_DENIED", "Origin");
        Answer misdirected = send("GET", "/v1/sessions/0123456789abcdef0123456789abcdef/keepalive", "rebound.example", null,
                "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==");
        assertRefused(misdirected, 421, "MISDIRECTED_REQUEST", "Host");
        // Javalin asks every upgrade request for its HTTP session; Jetty's default made one (a JSESSIONID cookie), and
        // kept it in memory for its 30-minute lifetime: a flood of upgrades, even refused ones, grew the heap without
        // bound. The gateway uses no HTTP sessions (the console signs its own cookie).
        assertThat(a.head()).doesNotContainIgnoringCase("Set-Cookie");
        assertThat(misdirected.head()).doesNotContainIgnoringCase("Set-Cookie");
    }

    @Test
    void allowLists_fromTheSettings() {
        start(WardenConfig.defaults().toBuilder()
                .allowedHosts(java.util.List.of("warden.example.com", "*.cell.example.net"))
                .allowedOrigins(java.util.List.of("https://ops.example.com")).build());
        assertRefused(send("GET", "/v1/locks?limit=-1", "warden.example.com", null), 400, "INVALID_ARGUMENT", "limit");
        assertRefused(send("GET", "/v1/locks?limit=-1", "gw1.cell.example.net:7070", null), 400, "INVALID_ARGUMENT", "limit");
        // an explicit list replaces the default: loopback is no longer a name of this gateway
        assertRefused(send("GET", "/v1/locks", local(), null), 421, "MISDIRECTED_REQUEST", "Host");
        assertRefused(send("GET", "/v1/locks", "cell.example.net", null), 421, "MISDIRECTED_REQUEST", "Host");
        assertRefused(send("GET", "/v1/locks?limit=-1", "warden.example.com", null, "Origin: https://ops.example.com"),
                400, "INVALID_ARGUMENT", "limit");
        assertRefused(send("GET", "/v1/locks", "warden.example.com", null, "Origin: https://evil.example"),
                403, "PERMISSION_DENIED", "Origin");
    }

    @Test
    void star_allowsAnyHostAndAnyOrigin() {
        start(WardenConfig.defaults().toBuilder().allowedHosts(java.util.List.of("*"))
                .allowedOrigins(java.util.List.of("*")).build());
        assertRefused(send("GET", "/v1/locks?limit=-1", "anything.example", null, "Origin: https://anywhere.example"),
                400, "INVALID_ARGUMENT", "limit");
    }
}
