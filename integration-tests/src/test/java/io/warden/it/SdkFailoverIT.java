package io.warden.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.Hold;
import io.warden.client.WardenClient;
import io.warden.it.support.Await;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.ZkEnsemble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java SDK holding a lock while the gateway its session talks to is killed with kill -9: the SDK moves
 * to the other gateway, which takes the session over, so the hold stays valid for longer than a whole TTL after the
 * kill, the cell still shows it with the same token, and the release goes through the surviving gateway.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SdkFailoverIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void hold_survivesKill9OfItsGateway_andIsReleasedThroughTheOther() throws Exception {
        JavaLauncher launcher = JavaLauncher.forRun("SdkFailoverIT");
        try (ZkEnsemble zk = ZkEnsemble.start(launcher, 3)) {
            zk.awaitQuorum(Duration.ofSeconds(60));
            try (GatewayProcess gw1 = GatewayProcess.start(launcher, "gw1", zk.connectString());
                 GatewayProcess gw2 = GatewayProcess.start(launcher, "gw2", zk.connectString())) {
                gw1.awaitReady(Duration.ofSeconds(60));
                gw2.awaitReady(Duration.ofSeconds(60));
                Duration ttl = Duration.ofSeconds(8);
                try (WardenClient warden = WardenClient.builder()
                        .endpoints(gw1.baseUri().toString(), gw2.baseUri().toString())
                        .clientId("sdk-failover").sessionTtl(ttl).build()) {
                    Hold hold = warden.lock("it/sdk").acquire(Duration.ofSeconds(10));
                    long token = hold.token();

                    gw1.kill9();
                    long killedAt = System.nanoTime();
                    Await.until("a TTL and a half to pass after the kill, the hold valid throughout", Duration.ofSeconds(40),
                            Duration.ofMillis(100), () -> {
                                assertThat(hold.isValid()).as("hold valid %d ms after the kill",
                                        (System.nanoTime() - killedAt) / 1_000_000).isTrue();
                                return System.nanoTime() - killedAt > ttl.toNanos() * 3 / 2;
                            });

                    JsonNode lock = get(gw2.baseUri().resolve("/v1/locks/it/sdk"));
                    assertThat(lock.get("holders")).hasSize(1);
                    assertThat(lock.get("holders").get(0).get("token").asLong()).isEqualTo(token);
                    assertThat(lock.get("holders").get(0).get("session_id").asText()).isEqualTo(warden.sessionId());

                    hold.close();
                    assertThat(get(gw2.baseUri().resolve("/v1/locks/it/sdk")).get("mode").asText()).isEqualTo("FREE");
                }
            }
        }
    }

    private static JsonNode get(URI uri) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
