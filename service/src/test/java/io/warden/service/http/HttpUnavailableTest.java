package io.warden.service.http;

import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Without a ZooKeeper quorum the API answers 503 problem documents at once and recovers by itself (contract §2.10). */
class HttpUnavailableTest {
    private WardenFixture fx;
    private HttpTestClient http;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        Gateway gw = fx.gateway();
        http = new HttpTestClient(gw.httpPort(), OpenApiContract.load());
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void noQuorum_answers503_keepalivesToo_thenRecovers() throws Exception {
        String session = http.postJson("/v1/sessions", "client_id", "c", "ttl_ms", 60_000).json().get("session_id").asText();

        fx.server.stop();
        WardenFixture.await("not ready", () -> http.get("/health/ready").status() == 503);

        HttpTestClient.Reply acquire = http.postJson("/v1/acquire", "session_id", session, "name", "u/x");
        assertThat(acquire.status()).isEqualTo(503);
        assertThat(acquire.isProblem()).isTrue();
        assertThat(acquire.json().get("code").asText()).isEqualTo("UNAVAILABLE");
        assertThat(http.get("/v1/locks/u/x").status()).isEqualTo(503);
        assertThat(http.get("/v1/check?name=u/x&token=1").status()).isEqualTo(503);
        assertThat(http.postJson("/v1/sessions", "client_id", "d").status()).isEqualTo(503);
        HttpTestClient.Reply keepalive = http.post("/v1/sessions/" + session + "/keepalive", "");
        assertThat(keepalive.status()).as("no keepalive acknowledged by a gateway that cannot vouch (§2.3)").isEqualTo(503);
        assertThat(keepalive.json().get("code").asText()).isEqualTo("UNAVAILABLE");
        assertThat(http.get("/health/live").status()).isEqualTo(200);

        fx.server.restart();
        WardenFixture.await("ready again", () -> http.get("/health/ready").status() == 200);
        WardenFixture.await("keepalives acknowledged again", () -> http.post("/v1/sessions/" + session + "/keepalive", "").status() == 200);
        HttpTestClient.Reply again = http.postJson("/v1/acquire", "session_id", session, "name", "u/x");
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.json().get("status").asText()).isEqualTo("GRANTED");
    }

    @Test
    void metrics_exposeTheEngineMeters_andCellCounts() {
        String session = http.postJson("/v1/sessions", "client_id", "c", "ttl_ms", 120_000).json().get("session_id").asText();
        http.postJson("/v1/acquire", "session_id", session, "name", "m/x");
        http.postJson("/v1/acquire", "session_id", session, "name", "m/y", "mode", "SHARED");
        http.post("/v1/sessions/" + session + "/keepalive", "");
        String text = http.get("/metrics").text();
        assertThat(text).contains("warden_acquire_seconds_count{cell=\"default\",outcome=\"granted\"} 2",
                "warden_grants_total{cell=\"default\"} 2", "warden_sessions_tracked{cell=\"default\"} 1",
                "warden_waiters_pending{cell=\"default\"} 0", "warden_zk_connected{cell=\"default\"} 1.0",
                "warden_zk_operation_seconds_count{cell=\"default\",op=\"multi\"", "warden_queue_depth_count",
                "warden_keepalives_total");

        fx.clock.advance(java.time.Duration.ofSeconds(30)); // the cell counts are refreshed every 30 s
        WardenFixture.await("cell counts refreshed", () -> http.get("/metrics").text().contains("warden_cell_holds{cell=\"default\"} 2.0"));
        assertThat(http.get("/metrics").text()).contains("warden_cell_locks{cell=\"default\"} 2.0",
                "warden_cell_waiters{cell=\"default\"} 0.0", "warden_cell_sessions{cell=\"default\"} 1.0");
    }
}
