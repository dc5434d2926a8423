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
 * {@code --max-waiters-per-lock 5} admitted 4 waiters, because the holder was counted. The limit
 * counts waiters only: queue entries that are not granted.
 */
class MaxWaitersPerLockTest {
    private static final int MAX = 5;

    private WardenFixture fixture;
    private HttpTestClient http;

    @BeforeEach
    void start() throws Exception {
        fixture = new WardenFixture();
        Gateway gateway = fixture.gateway(fixture.config().withLimits(1000, MAX, 1000));
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

    private int waiters(String name) {
        return http.get("/v1/locks/" + name).json().get("waiters").size();
    }

    @Test
    void maxWaiters_admitsExactlyThatManyWaiters_besidesTheHolder() {
        String name = "limits/boundary";
        HttpTestClient.Reply held = http.postJson("/v1/acquire", "session_id", session("holder"), "name", name);
        assertThat(held.json().get("status").asText()).isEqualTo("GRANTED");

        List<CompletableFuture<HttpTestClient.Reply>> waiting = new ArrayList<>();
        for (int i = 1; i <= MAX; i++) {
            String s = session("waiter-" + i);
            waiting.add(http.postAsync("/v1/acquire", "{\"session_id\":\"" + s + "\",\"name\":\"" + name
                    + "\",\"wait_ms\":60000,\"request_id\":\"w-" + i + "\"}"));
            int expected = i;
            WardenFixture.await(name + " has " + expected + " waiters", () -> waiters(name) == expected);
        }
        assertThat(waiting).as("all %d waiters are still queued, none refused", MAX).allMatch(f -> !f.isDone());

        HttpTestClient.Reply refused = http.postJson("/v1/acquire", "session_id", session("one-too-many"), "name", name,
                "wait_ms", 60_000);
        assertThat(refused.status()).as(refused.toString()).isEqualTo(429);
        assertThat(refused.json().get("code").asText()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(refused.json().get("detail").asText()).contains("already has " + MAX + " queued requests");
        WardenFixture.await("the refused request is removed", () -> waiters(name) == MAX);
        assertThat(waiting).allMatch(f -> !f.isDone());
    }
}
