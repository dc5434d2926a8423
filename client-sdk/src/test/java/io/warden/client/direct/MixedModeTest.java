package io.warden.client.direct;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.FencedLock;
import io.warden.client.Hold;
import io.warden.client.WardenClient;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Direct mode and HTTP mode on one name, on one real ZooKeeper with a real gateway: each excludes the other, and the
 * tokens of both grow together (contract §4: same path, same node names, the czxid as the token).
 */
class MixedModeTest {
    private static final String NAME = "payments/invoice-42";
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final ObjectMapper JSON = new ObjectMapper();

    private WardenFixture fx;
    private Gateway gateway;
    private WardenClient http;
    private CuratorFramework curator;
    private DirectLocks direct;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").sessionTtlMin(Duration.ofMillis(500)).build());
        http = WardenClient.builder().endpoints(url()).clientId("http-worker").sessionTtl(Duration.ofSeconds(5))
                .requestTimeout(Duration.ofSeconds(3)).build();
        curator = CuratorFrameworkFactory.builder().connectString(fx.server.getConnectString())
                .retryPolicy(new RetryNTimes(10, 100)).build();
        curator.start();
        assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        direct = DirectLocks.of(curator);
    }

    @AfterEach
    void tearDown() throws Exception {
        direct.close();
        curator.close();
        http.close();
        gateway.close();
        fx.close();
    }

    private String url() {
        return "http://127.0.0.1:" + gateway.httpPort();
    }

    @Test
    void gatewayRevoke_ofADirectHolder_asksItThroughCuratorsProtocol_andNeverForcesIt() throws Exception {
        Hold held = direct.lock(NAME).acquire(WAIT);
        java.util.concurrent.CompletableFuture<Hold> asked = new java.util.concurrent.CompletableFuture<>();
        held.onRevokeRequested(asked::complete);

        var result = gateway.warden().revoke(io.warden.service.api.LockName.parse(NAME), held.token(), 0, "move it",
                "admin").get(10, TimeUnit.SECONDS);

        assertThat(result.sessionId()).isNull();
        assertThat(asked.get(10, TimeUnit.SECONDS)).isSameAs(held);
        WardenFixture.await("the revocation is finished", () -> gateway.revocations().pendingCount() == 0);
        assertThat(held.isValid()).as("a plain Curator client's hold is never forced").isTrue();
        held.release();
    }

    @Test
    void directHolder_blocksHttpAcquire_untilReleased() throws Exception {
        Hold held = direct.lock(NAME).acquire(WAIT);
        assertThat(http.lock(NAME).tryAcquire()).isEmpty();
        JsonNode holders = view().path("holders");
        assertThat(holders).hasSize(1);
        assertThat(holders.get(0).path("token").asLong()).isEqualTo(held.token());

        CompletableFuture<Hold> waiting = http.lock(NAME).acquireAsync(Duration.ofSeconds(20));
        WardenFixture.await("the HTTP request is queued", () -> fx.queueSize(NAME) == 2);
        assertThat(waiting).isNotDone();
        long directToken = held.token();
        held.release();
        try (Hold granted = waiting.get(10, TimeUnit.SECONDS)) {
            assertThat(granted.token()).isGreaterThan(directToken);
        }
    }

    @Test
    void httpHolder_blocksDirectAcquire_untilReleased() throws Exception {
        Hold held = http.lock(NAME).acquire(WAIT);
        assertThat(direct.lock(NAME).tryAcquire()).isEmpty();
        assertThat(direct.readWriteLock(NAME).readLock().tryAcquire()).isEmpty();

        CompletableFuture<Hold> waiting = direct.lock(NAME).acquireAsync(Duration.ofSeconds(20));
        WardenFixture.await("the direct request is queued", () -> fx.queueSize(NAME) == 2);
        assertThat(waiting).isNotDone();
        long httpToken = held.token();
        held.release();
        try (Hold granted = waiting.get(10, TimeUnit.SECONDS)) {
            assertThat(granted.token()).isGreaterThan(httpToken);
            assertThat(http.lock(NAME).tryAcquire()).isEmpty();
        }
        assertThat(http.lock(NAME).tryAcquire()).hasValueSatisfying(Hold::release);
    }

    @Test
    void tokens_fromBothModes_strictlyIncrease() throws Exception {
        List<Long> tokens = new ArrayList<>();
        FencedLock[] locks = {direct.lock(NAME), http.lock(NAME), direct.readWriteLock(NAME).readLock(),
                http.readWriteLock(NAME).readLock()};
        for (int round = 0; round < 3; round++) {
            for (FencedLock lock : locks) {
                try (Hold hold = lock.acquire(WAIT)) {
                    tokens.add(hold.token());
                }
            }
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void directToken_isTheCzxidOfItsNode() throws Exception {
        try (Hold hold = direct.lock(NAME).acquire(WAIT)) {
            String node = fx.queue(NAME).get(0);
            Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(NAME) + "/" + node);
            assertThat(hold.token()).isEqualTo(stat.getCzxid());
        }
    }

    @Test
    void sharedHolders_ofBothModes_holdTogether_andExcludeWriters() throws Exception {
        try (Hold directRead = direct.readWriteLock(NAME).readLock().acquire(WAIT);
             Hold httpRead = http.readWriteLock(NAME).readLock().acquire(WAIT)) {
            assertThat(view().path("holders")).hasSize(2);
            assertThat(direct.lock(NAME).tryAcquire()).isEmpty();
            assertThat(http.lock(NAME).tryAcquire()).isEmpty();
            assertThat(httpRead.token()).isGreaterThan(directRead.token());
        }
    }

    private JsonNode view() throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(url() + "/v1/locks/" + NAME)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
