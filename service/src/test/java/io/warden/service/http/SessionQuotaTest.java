package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Session quotas (one client opened 5,000 sessions in 4.3 s, and nothing stopped it filling
 * the gateway's 100,000 for everyone; a keepalive at another gateway took sessions over past that gateway's cap). Real
 * HTTP on a real ZooKeeper.
 */
class SessionQuotaTest {
    private static final String A = "a-token-0123456789abcdef";
    private static final String B = "b-token-0123456789abcdef";

    @TempDir
    Path dir;
    private WardenFixture fixture;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new WardenFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    private Path authFile() throws Exception {
        return io.warden.service.support.TestAuthFiles.lockers(dir, "a", A, "b", B);
    }

    private static HttpTestClient.Reply open(HttpTestClient as) {
        return as.postJson("/v1/sessions", "client_id", "quota", "ttl_ms", 60_000);
    }

    @Test
    void onePrincipal_cannotOpenMoreThanItsQuota_whileOthersStillCan() throws Exception {
        Gateway g = fixture.gateway(fixture.config().toBuilder().authFile(authFile()).maxSessionsPerPrincipal(5).build());
        HttpTestClient http = new HttpTestClient(g.httpPort(), OpenApiContract.load());
        List<String> mine = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            HttpTestClient.Reply r = open(http.withToken(A));
            assertThat(r.status()).as(r.toString()).isEqualTo(201);
            mine.add(r.json().get("session_id").asText());
        }
        HttpTestClient.Reply refused = open(http.withToken(A));
        assertThat(refused.status()).as(refused.toString()).isEqualTo(429);
        assertThat(refused.json().get("code").asText()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(refused.json().get("detail").asText()).contains("principal a", "max-sessions-per-principal");
        assertThat(open(http.withToken(B)).status()).isEqualTo(201);

        assertThat(http.withToken(A).delete("/v1/sessions/" + mine.get(0)).status()).isEqualTo(200);
        assertThat(open(http.withToken(A)).status()).as("a closed session gives its place back").isEqualTo(201);
    }

    @Test
    void inOpenMode_theQuotaIsPerClientAddress() throws Exception {
        Gateway g = fixture.gateway(fixture.config().toBuilder().httpHost("0.0.0.0").maxSessionsPerPrincipal(3).build());
        for (int i = 0; i < 3; i++) {
            assertThat(openFrom("127.0.0.1", g.httpPort())).startsWith("HTTP/1.1 201");
        }
        assertThat(openFrom("127.0.0.1", g.httpPort())).startsWith("HTTP/1.1 429");
        assertThat(openFrom("127.0.0.2", g.httpPort())).as("another address").startsWith("HTTP/1.1 201");
    }

    /** {@code POST /v1/sessions} on a socket bound to {@code source}; the status line of the reply. */
    private static String openFrom(String source, int port) throws Exception {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.setSoTimeout(10_000);
            byte[] body = "{\"client_id\":\"quota\"}".getBytes(StandardCharsets.UTF_8);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        }
    }

    @Test
    void concurrentTakeovers_neverTakeAGatewayPastItsCap() throws Exception {
        Gateway first = fixture.gateway();
        Gateway capped = fixture.gateway(fixture.config().toBuilder().maxSessionsPerGateway(10).build());
        HttpTestClient atFirst = new HttpTestClient(first.httpPort());
        HttpTestClient atCapped = new HttpTestClient(capped.httpPort());
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            sessions.add(open(atFirst).json().get("session_id").asText());
        }
        List<CompletableFuture<Integer>> keepalives = new ArrayList<>();
        for (String s : sessions) {
            keepalives.add(CompletableFuture.supplyAsync(() -> atCapped.post("/v1/sessions/" + s + "/keepalive", "{}").status()));
        }
        long taken = keepalives.stream().map(CompletableFuture::join).filter(st -> st == 200).count();
        long refused = keepalives.stream().map(CompletableFuture::join).filter(st -> st == 429).count();
        assertThat(taken).isEqualTo(10);
        assertThat(refused).isEqualTo(30);
        assertThat(capped.trackedSessions()).isEqualTo(10);
    }
}
