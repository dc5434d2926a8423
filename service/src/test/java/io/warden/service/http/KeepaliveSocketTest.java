package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code GET /v1/sessions/{id}/keepalive} as a WebSocket (contract §3), against a real gateway on a ManualClock. */
class KeepaliveSocketTest {
    private static WardenFixture fixture;
    private static Gateway gateway;
    private static HttpTestClient http;

    @BeforeAll
    static void start() throws Exception {
        fixture = new WardenFixture();
        gateway = fixture.gateway();
        http = new HttpTestClient(gateway.httpPort(), OpenApiContract.load());
    }

    @AfterAll
    static void stop() throws Exception {
        fixture.close();
    }

    private static String openSession(long ttlMs) {
        HttpTestClient.Reply r = http.postJson("/v1/sessions", "client_id", "ws-client", "ttl_ms", ttlMs);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static JsonNode json(String frame) {
        try {
            return HttpTestClient.MAPPER.readTree(frame);
        } catch (Exception e) {
            throw new AssertionError("not JSON: " + frame, e);
        }
    }

    @Test
    void heartbeats_getTtlFrames_andKeepTheSessionAlivePastItsOriginalTtl() {
        String sid = openSession(2000);
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive")) {
            ws.send("ping");
            assertThat(json(ws.nextFrame()).get("ttl_ms_remaining").asLong()).isEqualTo(2000);
            for (int i = 0; i < 3; i++) {
                fixture.clock.advance(Duration.ofMillis(1500)); // 4.5 s in all: past the 2 s TTL without the heartbeats
                ws.send("");
                JsonNode frame = json(ws.nextFrame());
                assertThat(frame.fieldNames()).toIterable().containsExactly("ttl_ms_remaining");
                assertThat(frame.get("ttl_ms_remaining").asLong()).isEqualTo(2000);
            }
            HttpTestClient.Reply session = http.get("/v1/sessions/" + sid);
            assertThat(session.status()).as("alive after 4.5 s on a 2 s TTL: " + session).isEqualTo(200);
        }
    }

    @Test
    void socket_isClosedWith4404_onceTheSessionIsGone() {
        String sid = openSession(30_000);
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive")) {
            ws.send("ping");
            assertThat(json(ws.nextFrame()).has("ttl_ms_remaining")).isTrue();
            assertThat(http.delete("/v1/sessions/" + sid).status()).isEqualTo(200);
            ws.send("ping");
            WsTestClient.Closed closed = ws.awaitClose();
            assertThat(closed.code()).isEqualTo(4404);
            assertThat(closed.reason()).contains("session not found");
        }
    }

    @Test
    void expiredSession_isClosedWith4404() {
        String sid = openSession(2000);
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive")) {
            // one acknowledged keepalive first: the clock moves only after the gateway has served the socket (advanced
            // before, on a loaded machine the socket's first keepalive came after it and gave a fresh TTL on the
            // stopped clock, so the session never expired)
            ws.send("ping");
            assertThat(json(ws.nextFrame()).has("ttl_ms_remaining")).isTrue();
            fixture.clock.advance(Duration.ofMillis(2500));
            WardenFixture.await("the session expired", () -> http.get("/v1/sessions/" + sid).status() == 404);
            ws.send("ping");
            assertThat(ws.awaitClose().code()).isEqualTo(4404);
        }
    }

    @Test
    void malformedSessionId_isClosedWith4400() {
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/not-a-session/keepalive")) {
            WsTestClient.Closed closed = ws.awaitClose();
            assertThat(closed.code()).isEqualTo(4400);
            assertThat(closed.reason()).contains("session_id");
        }
    }

    @Test
    void unknownSession_isClosedWith4404_onItsFirstHeartbeat() {
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + "0".repeat(32) + "/keepalive")) {
            ws.send("ping");
            assertThat(ws.awaitClose().code()).isEqualTo(4404);
        }
    }
}
