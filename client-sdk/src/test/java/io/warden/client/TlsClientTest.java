package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.support.TestCa;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK over HTTPS, end to end: a gateway with a certificate for 127.0.0.1 and client certificates; the SDK with an
 * {@link SSLContext} from {@link PemTls}. Calls, the keepalive socket and the watch of the session's own holds all go
 * over TLS, authenticated by the client certificate; a gateway whose certificate the client does not trust, or that
 * does not name the host the client dialled, is refused.
 */
class TlsClientTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    private static Cell cell;
    private static Gateway gateway;
    private static TestCa ca;

    @BeforeAll
    static void start() throws Exception {
        ca = new TestCa(dir).ca("test-ca").ca("other-ca")
                .issue("test-ca", "gateway", "IP:127.0.0.1")
                .issue("test-ca", "app", "DNS:app.example.com")
                .issue("test-ca", "sre", "DNS:sre.example.com");
        Path auth = dir.resolve("auth.yaml");
        Files.writeString(auth, "principals:\n"
                + "  - name: app\n    grants: [{namespace: payments, role: lock}]\n"
                + "  - name: sre\n    grants: [{namespace: \"*\", role: admin}]\n");
        cell = new Cell();
        gateway = cell.gateway(cell.config().toBuilder().authFile(auth).tlsCert(ca.pem("gateway")).tlsKey(ca.key("gateway"))
                .tlsClientCa(ca.pem("test-ca")).build());
    }

    @AfterAll
    static void stop() {
        if (cell != null) {
            cell.close();
        }
    }

    private static String url(String host) {
        return "https://" + host + ":" + gateway.httpPort();
    }

    private static WardenClient client(SSLContext tls, String host) {
        return cell.track(WardenClient.builder().endpoints(url(host)).clientId("app-1").sslContext(tls)
                .sessionTtl(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(3)).build());
    }

    @Test
    void overHttps_withAClientCertificate_theClientHoldsKeepsAliveLearnsOfAForceReleaseAndReleases() throws Exception {
        WardenClient app = client(PemTls.sslContext(ca.pem("test-ca"), ca.pem("app"), ca.key("app")), "127.0.0.1");
        try (Hold hold = app.lock("payments/tls-1").acquire(Duration.ofSeconds(5))) {
            JsonNode view = get("/v1/locks/payments/tls-1");
            assertThat(view.path("holders").get(0).path("principal").asText()).isEqualTo("app");
            Thread.sleep(2_500); // past the TTL: only heartbeats over TLS kept the session
            assertThat(hold.isValid()).isTrue();
        }
        assertThat(get("/v1/locks/payments/tls-1").path("holders")).isEmpty();

        Hold hold = app.lock("payments/tls-2").acquire(Duration.ofSeconds(5));
        HttpResponse<String> r = sre().send(HttpRequest.newBuilder(URI.create(url("127.0.0.1") + "/v1/release"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\""
                        + app.sessionId() + "\",\"name\":\"payments/tls-2\",\"token\":" + hold.token() + "}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS); // through the session's watch, over TLS
        assertThat(hold.isValid()).isFalse();
    }

    @Test
    void aGatewayCertificateFromAnotherCa_isRefused() {
        SSLContext trustsOther = PemTls.sslContext(ca.pem("other-ca"), ca.pem("app"), ca.key("app"));
        assertThatThrownBy(() -> client(trustsOther, "127.0.0.1"))
                .isInstanceOf(WardenClientException.class)
                .hasMessageContaining("no gateway answered").hasMessageContaining("PKIX");
    }

    @Test
    void aGatewayCertificateThatDoesNotNameTheHost_isRefused() {
        // the certificate names 127.0.0.1 only; "localhost" reaches the same gateway
        SSLContext tls = PemTls.sslContext(ca.pem("test-ca"), ca.pem("app"), ca.key("app"));
        assertThatThrownBy(() -> client(tls, "localhost"))
                .isInstanceOf(WardenClientException.class)
                .hasMessageContaining("no gateway answered").hasMessageContaining("localhost");
    }

    private static JsonNode get(String path) throws Exception {
        HttpResponse<String> r = sre().send(HttpRequest.newBuilder(URI.create(url("127.0.0.1") + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static HttpClient sre() {
        return HttpClient.newBuilder().sslContext(PemTls.sslContext(ca.pem("test-ca"), ca.pem("sre"), ca.key("sre")))
                .version(HttpClient.Version.HTTP_1_1).build();
    }
}
