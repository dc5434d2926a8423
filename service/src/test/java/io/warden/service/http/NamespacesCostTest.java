package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/namespaces} walked every lock of the cell on every call (8 concurrent callers slowed
 * an acquire from 10 ms to 800 ms). Concurrent calls now share one walk and its result is reused for a second. Counted
 * in ZooKeeper reads (the gateway's getChildren metric), not in time.
 */
class NamespacesCostTest {
    private static final int CALLERS = 8;

    private WardenFixture fixture;
    private Gateway gateway;
    private HttpTestClient http;

    @BeforeEach
    void start() throws Exception {
        fixture = new WardenFixture();
        gateway = fixture.gateway();
        http = new HttpTestClient(gateway.httpPort());
        HttpTestClient.Reply s = http.postJson("/v1/sessions", "client_id", "holder", "ttl_ms", 60_000);
        String session = s.json().get("session_id").asText();
        for (String name : List.of("alpha/a", "alpha/b/c", "beta/x", "gamma/y/z", "gamma/w")) {
            HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", session, "name", name);
            assertThat(r.status()).as(r.toString()).isEqualTo(200);
        }
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    private List<HttpTestClient.Reply> concurrently(int n) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CyclicBarrier barrier = new CyclicBarrier(n);
            List<CompletableFuture<HttpTestClient.Reply>> calls = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                calls.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        barrier.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    return http.get("/v1/namespaces");
                }, pool));
            }
            List<HttpTestClient.Reply> out = new ArrayList<>();
            for (CompletableFuture<HttpTestClient.Reply> c : calls) {
                out.add(c.join());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentCalls_shareOneWalk_andAnotherWalkHappensOnlyAfterTheCacheTime() throws Exception {
        double before = fixture.childReads(gateway);
        List<HttpTestClient.Reply> replies = concurrently(CALLERS);
        double walkOfAll = fixture.childReads(gateway) - before;
        for (HttpTestClient.Reply r : replies) {
            assertThat(r.status()).as(r.toString()).isEqualTo(200);
            assertThat(r.json().get("namespaces")).hasSize(3);
            assertThat(r.json()).isEqualTo(replies.get(0).json());
        }

        // Past the cache time, one call walks once: what the CALLERS calls cost together.
        fixture.clock.advance(Duration.ofMillis(1_100));
        double beforeOne = fixture.childReads(gateway);
        assertThat(http.get("/v1/namespaces").status()).isEqualTo(200);
        double oneWalk = fixture.childReads(gateway) - beforeOne;
        assertThat(oneWalk).as("getChildren reads of one walk").isPositive();
        assertThat(walkOfAll).as("getChildren reads of %d concurrent calls (one walk is %s)", CALLERS, oneWalk)
                .isEqualTo(oneWalk);

        // Within the cache time: no read at all.
        double beforeCached = fixture.childReads(gateway);
        assertThat(http.get("/v1/namespaces").status()).isEqualTo(200);
        assertThat(fixture.childReads(gateway) - beforeCached).as("reads of a call within the cache time").isZero();
    }
}
