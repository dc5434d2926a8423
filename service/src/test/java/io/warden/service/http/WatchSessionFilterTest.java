package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import io.warden.service.watch.WatchHub;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/watch?session_id=}: the SDK learns that a hold of its session ended elsewhere (a
 * force-release, a release by token from another process) from a watch of its own session's events. Only that
 * session's events pass, a RESYNC lists only the locks where it holds or waits, and name or prefix are optional.
 */
class WatchSessionFilterTest {
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

    private static String openSession(String client) {
        HttpTestClient.Reply r = http.postJson("/v1/sessions", "client_id", client, "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static long acquire(String sid, String name) {
        HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", sid, "name", name);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("status").asText()).isEqualTo("GRANTED");
        return r.json().get("token").asLong();
    }

    private static void release(String sid, String name, long token) {
        HttpTestClient.Reply r = http.postJson("/v1/release", "session_id", sid, "name", name, "token", token);
        assertThat(r.json().get("released").asBoolean()).as(r.toString()).isTrue();
    }

    @Test
    void bySession_onlyThatSessionsEventsPass_acrossNamespaces() {
        String alice = openSession("alice");
        String bob = openSession("bob");
        try (SseTestClient sse = SseTestClient.watch(gateway.httpPort(), "?session_id=" + alice)) {
            long bobs = acquire(bob, "other/x");
            long a1 = acquire(alice, "orders/a");
            long a2 = acquire(alice, "billing/b");
            release(bob, "other/x", bobs);
            release(alice, "orders/a", a1); // as a release from elsewhere would: by session and token

            release(alice, "billing/b", a2);

            List<SseTestClient.Event> events = sse.next(6);
            assertThat(events).extracting(SseTestClient.Event::sessionId).containsOnly(alice);
            assertThat(events).extracting(e -> e.type() + " " + e.name() + " " + e.token()).containsExactly(
                    "QUEUED orders/a " + a1, "GRANTED orders/a " + a1,
                    "QUEUED billing/b " + a2, "GRANTED billing/b " + a2,
                    "RELEASED orders/a " + a1, "RELEASED billing/b " + a2);
        }
    }

    @Test
    void bySessionAndPrefix_both_apply() {
        String alice = openSession("alice");
        try (SseTestClient sse = SseTestClient.watch(gateway.httpPort(), "?prefix=jobs&session_id=" + alice)) {
            acquire(alice, "mail/m");
            long t = acquire(alice, "jobs/j");
            List<SseTestClient.Event> events = sse.next(2);
            assertThat(events).extracting(e -> e.type() + " " + e.name() + " " + e.token())
                    .containsExactly("QUEUED jobs/j " + t, "GRANTED jobs/j " + t);
        }
    }

    @Test
    void bySession_resync_listsOnlyTheLocksWhereTheSessionHoldsOrWaits() {
        String alice = openSession("alice");
        String bob = openSession("bob");
        long a = acquire(alice, "resync/a");
        acquire(bob, "resync/b");
        try (SseTestClient sse = SseTestClient.watch(gateway.httpPort(), "?session_id=" + alice + "&since_revision=0")) {
            SseTestClient.Event resync = sse.next();
            assertThat(resync.type()).isEqualTo("RESYNC");
            JsonNode locks = resync.data().get("locks");
            assertThat(locks).hasSize(1);
            assertThat(locks.get(0).get("name").asText()).isEqualTo("resync/a");
            assertThat(locks.get(0).get("holders").get(0).get("token").asLong()).isEqualTo(a);
        }
    }

    @Test
    void aBadSessionId_isRefusedNamingTheField() {
        HttpTestClient.Reply r = http.get("/v1/watch?session_id=nope");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.text()).contains("session_id").contains("INVALID_ARGUMENT");
        HttpTestClient.Reply none = http.get("/v1/watch");
        assertThat(none.status()).isEqualTo(400);
        assertThat(none.text()).contains("session_id");
    }

    /**
     * A session's own watches have a pool of their own (max-sessions-per-gateway, not max-watches) and at most
     * {@link WatchHub#WATCHES_PER_SESSION} per session: one client cannot take the pool, and past the cap it gets a
     * 429 problem document that says why, while another session's watch is still served.
     */
    @Test
    void aSessionsOwnWatches_areCappedPerSession_withA429ThatSaysWhy() {
        String alice = openSession("alice");
        int before = gateway.watches().sessionWatchCount();
        List<SseTestClient> open = new ArrayList<>();
        try {
            for (int i = 0; i < WatchHub.WATCHES_PER_SESSION; i++) {
                open.add(SseTestClient.watch(gateway.httpPort(), "?session_id=" + alice));
            }
            assertThat(gateway.watches().sessionWatchCount()).isEqualTo(before + WatchHub.WATCHES_PER_SESSION);
            try (SseTestClient refused = SseTestClient.open(gateway.httpPort(), "?session_id=" + alice)) {
                assertThat(refused.status()).isEqualTo(429);
                assertThat(refused.contentType()).startsWith("application/problem+json");
                JsonNode problem = refused.next().data();
                assertThat(problem.path("code").asText()).isEqualTo("RESOURCE_EXHAUSTED");
                assertThat(problem.path("detail").asText()).contains(alice).contains("already has " + WatchHub.WATCHES_PER_SESSION);
            }
            try (SseTestClient bobs = SseTestClient.watch(gateway.httpPort(), "?session_id=" + openSession("bob"))) {
                assertThat(bobs.status()).isEqualTo(200);
            }
        } finally {
            open.forEach(SseTestClient::close);
        }
    }
}
