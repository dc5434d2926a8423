package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.auth.AuthFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK against a gateway with an auth file: with its principal's bearer token it opens a session, holds
 * and releases locks, keeps the session alive over the WebSocket and learns of an admin's force-release through its
 * session watch, all authenticated; without a token it fails to start with the gateway's 401, and outside its grants
 * an acquire fails with the 403.
 */
class AuthenticatedClientTest {
    private static final String APP = "app-token-0123456789abcdef";
    private static final String SRE = "sre-token-0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private Cell cell;
    private Gateway gw;

    @BeforeEach
    void setUp() throws Exception {
        Path auth = dir.resolve("auth.yaml");
        Files.writeString(auth, "principals:\n"
                + "  - name: app\n    token_sha256: " + AuthFile.sha256(APP) + "\n    grants: [{namespace: payments, role: lock}]\n"
                + "  - name: sre\n    token_sha256: " + AuthFile.sha256(SRE) + "\n    grants: [{namespace: \"*\", role: admin}]\n");
        cell = new Cell();
        gw = cell.gateway(cell.config().toBuilder().authFile(auth).build());
    }

    @AfterEach
    void tearDown() throws Exception {
        cell.close();
    }

    private WardenClient client(String token) {
        WardenClient.Builder b = WardenClient.builder().endpoints(Cell.url(gw)).clientId("app-1")
                .sessionTtl(Duration.ofSeconds(5)).requestTimeout(Duration.ofSeconds(3));
        if (token != null) {
            b.bearerToken(token);
        }
        return cell.track(b.build());
    }

    private JsonNode get(String path, String token) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(Cell.url(gw) + path))
                .header("Authorization", "Bearer " + token).GET().build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }

    @Test
    void withItsToken_theClientHoldsKeepsAliveAndReleases() throws Exception {
        WardenClient app = client(APP);
        try (Hold hold = app.lock("payments/invoice-1").acquire(Duration.ofSeconds(5))) {
            assertThat(hold.isValid()).isTrue();
            JsonNode view = get("/v1/locks/payments/invoice-1", APP);
            assertThat(view.path("holders").get(0).path("session_id").asText()).isEqualTo(app.sessionId());
            assertThat(view.path("holders").get(0).path("principal").asText()).isEqualTo("app");
            Thread.sleep(6_000); // past the TTL: only authenticated keepalives kept the session
            assertThat(hold.isValid()).isTrue();
            assertThat(app.state()).isEqualTo(SessionState.CONNECTED);
        }
        assertThat(get("/v1/locks/payments/invoice-1", APP).path("holders")).isEmpty();
    }

    @Test
    void anAdminsForceRelease_reachesTheHold_throughTheAuthenticatedSessionWatch() throws Exception {
        WardenClient app = client(APP);
        Hold hold = app.lock("payments/invoice-2").acquire(Duration.ofSeconds(5));
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(Cell.url(gw) + "/v1/release"))
                .header("Authorization", "Bearer " + SRE).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\"" + app.sessionId()
                        + "\",\"name\":\"payments/invoice-2\",\"token\":" + hold.token() + "}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
    }

    @Test
    void withoutAToken_theClientDoesNotStart_andSaysWhy() {
        assertThatThrownBy(() -> client(null))
                .isInstanceOf(WardenClientException.class)
                .hasMessageContaining("UNAUTHENTICATED");
    }

    @Test
    void outsideItsGrants_anAcquireFails_withThePermissionDenied() {
        WardenClient app = client(APP);
        assertThatThrownBy(() -> app.lock("builds/job-1").acquire(Duration.ofSeconds(2)))
                .isInstanceOf(WardenClientException.class)
                .satisfies(e -> assertThat(((WardenClientException) e).code()).contains("PERMISSION_DENIED"))
                .hasMessageContaining("needs role lock in namespace builds");
    }
}
