package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.auth.AuthFile;
import io.warden.service.support.WardenFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/acquire} with {@code names} and {@code POST /v1/release} by {@code request_id} over HTTP: every
 * reply is checked against the OpenAPI document ({@link OpenApiContract}), and every bad request is a 4xx problem
 * naming the field that changes nothing in ZooKeeper (its last zxid does not move).
 */
class MultiLockHttpTest {
    private static final String BILLING = "billing-token-0123456789";

    @TempDir
    Path dir;
    private WardenFixture fx;
    private Gateway gw;
    private HttpTestClient http;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gw = fx.gateway();
        http = new HttpTestClient(gw.httpPort(), OpenApiContract.load());
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private String openSession(HttpTestClient c, String client) {
        HttpTestClient.Reply r = c.postJson("/v1/sessions", "client_id", client, "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static void assertInvalid(HttpTestClient.Reply r, String field) {
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.isProblem()).as(r.toString()).isTrue();
        assertThat(r.json().get("code").asText()).isEqualTo("INVALID_ARGUMENT");
        assertThat(r.json().get("detail").asText()).as(r.toString()).contains(field);
    }

    @Test
    void granted_withATokenPerName_andReleasedAsAWholeByRequestId() throws Exception {
        String s = openSession(http, "a");

        HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "m/b"),
                "request_id", "both");

        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(r.json().get("tokens").get("m/a").asLong()).isPositive();
        assertThat(r.json().get("tokens").get("m/b").asLong()).isPositive();
        assertThat(r.json().get("holders").get("m/a")).hasSize(1);
        HttpTestClient.Reply lock = http.get("/v1/locks/m/b");
        assertThat(lock.json().get("holders")).hasSize(1);

        HttpTestClient.Reply released = http.postJson("/v1/release", "session_id", s, "request_id", "both");

        assertThat(released.json().get("released").asBoolean()).as(released.toString()).isTrue();
        assertThat(fx.queueSize("m/a")).isZero();
        assertThat(fx.queueSize("m/b")).isZero();
        assertThat(http.postJson("/v1/release", "session_id", s, "request_id", "both").json().get("released")
                .asBoolean()).isFalse();
    }

    @Test
    void queued_showsTheRequestIdOnEveryNamesWaiters() {
        String a = openSession(http, "a");
        String b = openSession(http, "b");
        http.postJson("/v1/acquire", "session_id", a, "name", "m/y");

        HttpTestClient.Reply q = http.postJson("/v1/acquire", "session_id", b, "names", List.of("m/x", "m/y"),
                "request_id", "xy", "on_timeout", "KEEP");

        assertThat(q.json().get("status").asText()).as(q.toString()).isEqualTo("QUEUED");
        assertThat(q.json().get("position").asInt()).isEqualTo(1);
        HttpTestClient.Reply y = http.get("/v1/locks/m/y");
        assertThat(y.json().get("waiters").get(0).get("request_id").asText()).as(y.toString()).isEqualTo("xy");
    }

    @Test
    void badInput_isA400NamingTheField_andChangesNothing() throws Exception {
        String s = openSession(http, "a");
        long before = fx.lastZxid();
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 65; i++) {
            many.add("m/n" + i);
        }

        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "m/a")), "names");
        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a")), "names");
        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", many), "names");
        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "m/b"), "name", "m/c"),
                "names");
        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "m/b"), "mode", "SEMAPHORE",
                "permits", 3), "permits");
        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "m/b"), "mode", "SEMAPHORE"),
                "mode");
        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "bad name")), "names");
        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", "m/a"), "names");
        assertInvalid(http.postJson("/v1/release", "session_id", s, "token", 5), "name");

        assertThat(fx.lastZxid()).as("nothing written").isEqualTo(before);
    }

    @Test
    void aRepeatWithOtherNames_isA400NamingNames() {
        String s = openSession(http, "a");
        http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "m/b"), "request_id", "r");

        assertInvalid(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/a", "m/c"), "request_id", "r"),
                "names");
        assertThat(http.postJson("/v1/acquire", "session_id", s, "names", List.of("m/b", "m/a"), "request_id", "r")
                .json().get("status").asText()).isEqualTo("GRANTED");
    }

    @Test
    void aNameInANamespaceTheCallerMayNotLockIn_isA403_andChangesNothing() throws Exception {
        fx.close();
        fx = new WardenFixture();
        Path auth = dir.resolve("auth.yaml");
        Files.writeString(auth, "principals:\n  - name: billing\n    token_sha256: " + AuthFile.sha256(BILLING)
                + "\n    grants: [{namespace: payments, role: lock}]\n");
        gw = fx.gateway(fx.config().toBuilder().authFile(auth).build());
        HttpTestClient billing = new HttpTestClient(gw.httpPort(), OpenApiContract.load()).withToken(BILLING);
        String s = openSession(billing, "a");
        long before = fx.lastZxid();

        HttpTestClient.Reply r = billing.postJson("/v1/acquire", "session_id", s, "names",
                List.of("payments/a", "builds/b"));

        assertThat(r.status()).as(r.toString()).isEqualTo(403);
        assertThat(r.json().get("detail").asText()).contains("builds");
        assertThat(fx.lastZxid()).isEqualTo(before);
        assertThat(billing.postJson("/v1/acquire", "session_id", s, "names", List.of("payments/a", "payments/b"))
                .json().get("status").asText()).isEqualTo("GRANTED");
    }
}
