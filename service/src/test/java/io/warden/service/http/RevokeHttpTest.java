package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.auth.AuthFile;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/revoke} over HTTP with an auth file, on a real ZooKeeper: every bad request is a 4xx problem naming
 * its field (or the missing role) and writes nothing; an admin of the namespace is answered with the document's
 * {@code Revoked}; the holder's watch and its keepalive socket (when it asked for events) hear of it.
 */
class RevokeHttpTest {
    static final String LOCKER = "locker-token-0123456789";
    static final String PAYMENTS_ADMIN = "payments-admin-token-0123";
    static final String BUILDS_ADMIN = "builds-admin-token-0123";
    private static final OpenApiContract CONTRACT = OpenApiContract.load();
    private static final AtomicInteger NAMES = new AtomicInteger();

    @TempDir
    static Path dir;
    private static WardenFixture fixture;
    private static Gateway gateway;
    private static HttpTestClient locker;
    private static HttpTestClient admin;
    private static HttpTestClient otherAdmin;

    static String entry(String name, String token, String grants) {
        return "  - name: " + name + "\n    token_sha256: " + AuthFile.sha256(token) + "\n    grants: " + grants + "\n";
    }

    @BeforeAll
    static void start() throws Exception {
        Path authFile = dir.resolve("auth.yaml");
        Files.writeString(authFile, "principals:\n"
                + entry("locker", LOCKER, "[{namespace: payments, role: lock}]")
                + entry("payments-admin", PAYMENTS_ADMIN, "[{namespace: payments, role: admin}]")
                + entry("builds-admin", BUILDS_ADMIN, "[{namespace: builds, role: admin}]"));
        fixture = new WardenFixture();
        gateway = fixture.gateway(fixture.config().toBuilder().authFile(authFile).build());
        HttpTestClient anonymous = new HttpTestClient(gateway.httpPort(), CONTRACT);
        locker = anonymous.withToken(LOCKER);
        admin = anonymous.withToken(PAYMENTS_ADMIN);
        otherAdmin = anonymous.withToken(BUILDS_ADMIN);
    }

    @AfterAll
    static void stop() throws Exception {
        if (fixture != null) {
            fixture.close();
        }
    }

    private static String fresh() {
        return "payments/revoke-" + NAMES.incrementAndGet();
    }

    private static String open() {
        HttpTestClient.Reply r = locker.postJson("/v1/sessions", "client_id", "worker", "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static long take(String session, String name) {
        HttpTestClient.Reply r = locker.postJson("/v1/acquire", "session_id", session, "name", name);
        assertThat(r.json().get("status").asText()).as(r.toString()).isEqualTo("GRANTED");
        return r.json().get("token").asLong();
    }

    private static void assertInvalid(HttpTestClient.Reply r, String field) {
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.isProblem()).as(r.toString()).isTrue();
        assertThat(r.json().get("code").asText()).as(r.toString()).isEqualTo("INVALID_ARGUMENT");
        assertThat(r.json().get("field").asText()).as(r.toString()).isEqualTo(field);
    }

    @Test
    void badRequests_areProblemsNamingTheField_andWriteNothing() throws Exception {
        String sid = open();
        String name = fresh();
        long token = take(sid, name);
        String ok = "\"name\":\"" + name + "\",\"token\":" + token + ",\"grace_ms\":1000,\"reason\":\"r\"";
        long zxid = fixture.lastZxid();

        assertInvalid(admin.post("/v1/revoke", "{\"token\":" + token + ",\"grace_ms\":1000,\"reason\":\"r\"}"), "name");
        assertInvalid(admin.post("/v1/revoke", "{\"name\":\"" + name + "\",\"grace_ms\":1000,\"reason\":\"r\"}"), "token");
        assertInvalid(admin.post("/v1/revoke", "{\"name\":\"" + name + "\",\"token\":" + token + ",\"reason\":\"r\"}"), "grace_ms");
        assertInvalid(admin.post("/v1/revoke", "{\"name\":\"" + name + "\",\"token\":" + token + ",\"grace_ms\":1000}"), "reason");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"grace_ms\":1000", "\"grace_ms\":-1") + "}"), "grace_ms");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"grace_ms\":1000", "\"grace_ms\":600001") + "}"), "grace_ms");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"grace_ms\":1000", "\"grace_ms\":\"1000\"") + "}"), "grace_ms");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"grace_ms\":1000", "\"grace_ms\":1.5") + "}"), "grace_ms");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"token\":" + token, "\"token\":\"x\"") + "}"), "token");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"token\":" + token, "\"token\":0") + "}"), "token");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"reason\":\"r\"", "\"reason\":\"\"") + "}"), "reason");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"reason\":\"r\"", "\"reason\":\"" + "x".repeat(257) + "\"") + "}"), "reason");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"reason\":\"r\"", "\"reason\":\"a\\u202eb\"") + "}"), "reason");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"reason\":\"r\"", "\"reason\":7") + "}"), "reason");
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"name\":\"" + name + "\"", "\"name\":\"payments/_x\"") + "}"), "name");
        assertThat(admin.post("/v1/revoke", "{" + ok + ",\"extra\":1}").status()).isEqualTo(400);
        assertThat(admin.post("/v1/revoke", "[1]").status()).isEqualTo(400);
        // A token that does not hold: the field is the token.
        assertInvalid(admin.post("/v1/revoke", "{" + ok.replace("\"token\":" + token, "\"token\":" + (token + 1_000_000)) + "}"), "token");
        // Roles: a locker, and an admin of another namespace, may not.
        HttpTestClient.Reply denied = locker.post("/v1/revoke", "{" + ok + "}");
        assertThat(denied.status()).as(denied.toString()).isEqualTo(403);
        assertThat(denied.json().get("code").asText()).isEqualTo("PERMISSION_DENIED");
        assertThat(otherAdmin.post("/v1/revoke", "{" + ok + "}").status()).isEqualTo(403);

        assertThat(fixture.lastZxid()).as("nothing was written").isEqualTo(zxid);
    }

    @Test
    void adminRevoke_isAnswered_andTheHolderHearsOfIt_onItsWatchAndItsSocket() throws Exception {
        String sid = open();
        String name = fresh();
        long token = take(sid, name);
        try (SseTestClient watch = SseTestClient.open(gateway.httpPort(), "?session_id=" + sid,
                java.util.Map.of("Authorization", "Bearer " + LOCKER));
             WsTestClient socket = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive?events=revoke", LOCKER);
             WsTestClient plain = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive", LOCKER)) {
            assertThat(watch.status()).isEqualTo(200);
            // One heartbeat each first: the socket's owner check is done once its reply is in.
            socket.send("ping");
            assertThat(HttpTestClient.MAPPER.readTree(socket.nextFrame()).has("ttl_ms_remaining")).isTrue();
            plain.send("ping");
            assertThat(HttpTestClient.MAPPER.readTree(plain.nextFrame()).has("ttl_ms_remaining")).isTrue();

            HttpTestClient.Reply r = admin.postJson("/v1/revoke", "name", name, "token", token, "grace_ms", 600_000,
                    "reason", "rotate the disk");

            assertThat(r.status()).as(r.toString()).isEqualTo(200);
            assertThat(r.json().get("session_id").asText()).isEqualTo(sid);
            assertThat(r.json().get("repeated").asBoolean()).isFalse();
            assertThat(r.json().get("reason").asText()).isEqualTo("rotate the disk");
            SseTestClient.Event event;
            do {
                event = watch.next();
            } while (!event.type().equals("REVOKE_REQUESTED"));
            assertThat(event.token()).isEqualTo(token);
            assertThat(CONTRACT.checkSchema("WatchEvent", event.data())).isEmpty();
            JsonNode frame = HttpTestClient.MAPPER.readTree(socket.nextFrame());
            assertThat(frame.get("event").asText()).isEqualTo("REVOKE_REQUESTED");
            assertThat(frame.get("token").asLong()).isEqualTo(token);
            assertThat(frame.get("name").asText()).isEqualTo(name);
            assertThat(CONTRACT.checkSchema("KeepaliveEvent", frame)).isEmpty();
            // The socket that did not ask gets replies to its heartbeats only.
            plain.send("ping");
            assertThat(HttpTestClient.MAPPER.readTree(plain.nextFrame()).has("ttl_ms_remaining")).isTrue();

            HttpTestClient.Reply again = admin.postJson("/v1/revoke", "name", name, "token", token, "grace_ms", 5,
                    "reason", "again");
            assertThat(again.status()).as(again.toString()).isEqualTo(200);
            assertThat(again.json().get("repeated").asBoolean()).isTrue();
            assertThat(again.json().get("grace_ms").asLong()).isEqualTo(600_000);
        }
    }

    @Test
    void keepaliveSocket_withUnknownEvents_isClosedAsInvalid() {
        String sid = open();
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive?events=all", LOCKER)) {
            assertThat(ws.awaitClose().code()).isEqualTo(4400);
        }
    }
}
