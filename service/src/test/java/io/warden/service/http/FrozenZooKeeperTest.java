package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * For the first ~7.5 s of a frozen ZooKeeper (a black hole: no byte comes back, the sockets stay
 * open) every call hung: the gateway's ZooKeeper client still said "connected" until its read timeout (2/3 of the
 * session timeout) passed without a byte. Now a gateway whose ZooKeeper has left requests unanswered for
 * {@code Zk.STALL_AFTER} refuses new calls at once with 503 UNAVAILABLE, before sending anything.
 */
class FrozenZooKeeperTest {
    /** Read timeout 8 s: long enough that a hang is unmistakable. */
    private static final Duration ZK_SESSION_TIMEOUT = Duration.ofSeconds(12);

    private WardenFixture fixture;
    private ZkCutProxy proxy;
    private HttpTestClient http;
    private Gateway gateway;

    @BeforeEach
    void start() throws Exception {
        fixture = new WardenFixture();
        proxy = new ZkCutProxy(fixture.server.getPort());
        gateway = fixture.gateway(fixture.config().withZkConnect(proxy.connectString())
                .withZkSessionTimeout(ZK_SESSION_TIMEOUT));
        http = new HttpTestClient(gateway.httpPort());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.heal();
        fixture.close();
        proxy.close();
    }

    @Test
    void callsAfterZooKeeperFroze_are503_fast_notHung() throws Exception {
        HttpTestClient.Reply opened = http.postJson("/v1/sessions", "client_id", "frozen", "ttl_ms", 60_000);
        assertThat(opened.status()).as(opened.toString()).isEqualTo(201);
        String session = opened.json().get("session_id").asText();
        assertThat(http.get("/v1/locks/frozen/a").status()).isEqualTo(200);

        proxy.blackhole();
        // A call made as ZooKeeper froze waits for its reply (it may have been applied: only the client's own timeout
        // or the connection loss may end it). It is what tells the gateway that ZooKeeper stopped answering.
        CompletableFuture<HttpTestClient.Reply> first = CompletableFuture.supplyAsync(() -> http.get("/v1/locks/frozen/b"));
        // Until that call is sent and the stall bound (1 s) has passed; waited for, not slept, so that a loaded machine
        // that is slow to send it cannot make the next call the first to wait (it failed so once, 7.3 s, under load 5).
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!gateway.zkRefusing()) {
            assertThat(System.nanoTime()).as("the gateway refuses calls (ZooKeeper stalled or disconnected) within 10 s").isLessThan(deadline);
            Thread.sleep(20);
        }

        for (String call : new String[] {"lock", "acquire", "session", "locks", "check"}) {
            long start = System.nanoTime();
            HttpTestClient.Reply r = switch (call) {
                case "lock" -> http.get("/v1/locks/frozen/c");
                case "acquire" -> http.postJson("/v1/acquire", "session_id", session, "name", "frozen/d", "wait_ms", 0);
                case "session" -> http.get("/v1/sessions/" + session);
                case "locks" -> http.get("/v1/locks?namespace=frozen");
                default -> http.get("/v1/check?name=frozen/a&token=1");
            };
            long ms = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertThat(r.status()).as(call + ": " + r).isEqualTo(503);
            assertThat(r.json().get("code").asText()).isEqualTo("UNAVAILABLE");
            assertThat(r.retryAfter()).isPresent();
            assertThat(ms).as(call + " answered after %d ms", ms).isLessThan(1_000);
        }
        // A keepalive needs no ZooKeeper request: it is acknowledged while this gateway heard from ZooKeeper within B
        // (half the session timeout, contract §2.3), refused after. Either way at once.
        long start = System.nanoTime();
        HttpTestClient.Reply keepalive = http.post("/v1/sessions/" + session + "/keepalive", "{}");
        assertThat(keepalive.status()).as(keepalive.toString()).isIn(200, 503);
        assertThat(Duration.ofNanos(System.nanoTime() - start).toMillis()).isLessThan(1_000);
        assertThat(first.get(30, java.util.concurrent.TimeUnit.SECONDS).status()).isEqualTo(503);
    }
}
