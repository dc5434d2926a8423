package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code max-waiters-per-lock} counted waiters only, so SHARED holders of one name had no limit.
 * One client took 17 sessions × 1,000 SHARED acquires on one name: 16,906 were GRANTED, the lock's listing no longer fit
 * in ZooKeeper's 1 MiB reply, and every gateway that read it lost its ZooKeeper connection, again and again. Now
 * {@code max-entries-per-lock} bounds holders plus waiters (foreign entries included), checked before a grant too.
 */
class MaxEntriesPerLockTest {
    private static final int MAX = 5;

    private WardenFixture fixture;
    private Gateway gateway;
    private HttpTestClient http;

    @BeforeEach
    void start() throws Exception {
        fixture = new WardenFixture();
        gateway = fixture.gateway(fixture.config().withLimits(1000, 1000, 1000).withMaxEntriesPerLock(MAX));
        http = new HttpTestClient(gateway.httpPort());
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    private String session(String client) {
        HttpTestClient.Reply r = http.postJson("/v1/sessions", "client_id", client, "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private HttpTestClient.Reply shared(String name, long waitMs) {
        return http.postJson("/v1/acquire", "session_id", session("reader"), "name", name, "mode", "SHARED",
                "wait_ms", waitMs);
    }

    @Test
    void sharedHolders_pastMaxEntries_areRefused_evenThoughTheyWouldBeGrantedAtOnce() {
        String name = "limits/readers";
        for (int i = 1; i <= MAX; i++) {
            HttpTestClient.Reply r = shared(name, 0);
            assertThat(r.json().get("status").asText()).as(r.toString()).isEqualTo("GRANTED");
        }
        for (long waitMs : new long[]{0, 5_000}) { // a try and a waiting acquire alike
            HttpTestClient.Reply refused = shared(name, waitMs);
            assertThat(refused.status()).as(refused.toString()).isEqualTo(429);
            assertThat(refused.json().get("code").asText()).isEqualTo("RESOURCE_EXHAUSTED");
            assertThat(refused.json().get("detail").asText()).contains("max-entries-per-lock").contains(name)
                    .contains(MAX + " holders and queued requests");
        }
        WardenFixture.await("the refused requests are removed", () -> fixture.queueSize(name) == MAX);
        assertThat(http.get("/v1/locks/" + name).json().get("holders")).hasSize(MAX);
    }

    @Test
    void holdersAndWaiters_countTogether() {
        String name = "limits/mixed";
        HttpTestClient.Reply held = http.postJson("/v1/acquire", "session_id", session("writer"), "name", name);
        assertThat(held.json().get("status").asText()).isEqualTo("GRANTED");
        List<CompletableFuture<HttpTestClient.Reply>> waiting = new ArrayList<>();
        for (int i = 1; i < MAX; i++) {
            waiting.add(http.postAsync("/v1/acquire", "{\"session_id\":\"" + session("w" + i) + "\",\"name\":\"" + name
                    + "\",\"wait_ms\":60000,\"request_id\":\"w-" + i + "\"}"));
            int entries = i + 1;
            WardenFixture.await(name + " has " + entries + " entries", () -> fixture.queueSize(name) == entries);
        }
        HttpTestClient.Reply refused = http.postJson("/v1/acquire", "session_id", session("one-too-many"), "name", name,
                "wait_ms", 60_000);
        assertThat(refused.status()).as(refused.toString()).isEqualTo(429);
        assertThat(refused.json().get("detail").asText()).contains("max-entries-per-lock");
        WardenFixture.await("the refused request is removed", () -> fixture.queueSize(name) == MAX);
        assertThat(waiting).allMatch(f -> !f.isDone());
    }

    @Test
    void atTheLimit_onceTheGatewayKnowsTheLockIsFull_aRefusalWritesNothing() throws Exception {
        String name = "limits/full";
        for (int i = 1; i <= MAX; i++) {
            assertThat(shared(name, 0).json().get("status").asText()).isEqualTo("GRANTED");
        }
        // the watch mirror has seen the lock fill up (it counts holds from ZooKeeper's notifications)
        WardenFixture.await("the mirror has the " + MAX + " holds", () -> gateway.watches().counts().join()
                .map(c -> c.holds() == MAX).orElse(false));
        String s = session("late");
        long before = fixture.lastZxid();
        HttpTestClient.Reply refused = http.postJson("/v1/acquire", "session_id", s, "name", name, "mode", "SHARED");
        assertThat(refused.status()).as(refused.toString()).isEqualTo(429);
        assertThat(refused.json().get("detail").asText()).contains("max-entries-per-lock");
        assertThat(fixture.lastZxid()).as("nothing written to ZooKeeper").isEqualTo(before);
    }

    @Test
    void aRetryOfAnAdmittedRequest_isStillAnswered_atTheLimit() {
        String name = "limits/retry";
        String s = session("retrier");
        String body = "{\"session_id\":\"" + s + "\",\"name\":\"" + name + "\",\"mode\":\"SHARED\",\"request_id\":\"r-1\"}";
        HttpTestClient.Reply first = http.post("/v1/acquire", body);
        assertThat(first.json().get("status").asText()).isEqualTo("GRANTED");
        for (int i = 1; i < MAX; i++) {
            assertThat(shared(name, 0).json().get("status").asText()).isEqualTo("GRANTED");
        }
        HttpTestClient.Reply again = http.post("/v1/acquire", body);
        assertThat(again.status()).as(again.toString()).isEqualTo(200);
        assertThat(again.json().get("token").asLong()).isEqualTo(first.json().get("token").asLong());
    }
}
