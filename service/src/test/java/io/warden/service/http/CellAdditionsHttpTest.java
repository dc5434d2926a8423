package io.warden.service.http;

import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code PUT /v1/cells/{cell}}: a cell added to running gateways, each started with one cell (no cells setting). The
 * gateway asked reaches the new ensemble, writes it to the default cell's directory, and serves it at once; the other
 * gateways, and any started later, serve it from the directory. Bad or conflicting adds are 4xx and add nothing.
 */
class CellAdditionsHttpTest {
    private WardenFixture fx;
    private TestingServer cellB;
    private CuratorFramework zkB;
    private Gateway gw1;
    private Gateway gw2;
    private HttpTestClient http1;
    private HttpTestClient http2;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        cellB = new TestingServer(true);
        zkB = io.warden.service.support.TwoCellFixture.chrootClient(cellB);
        gw1 = fx.gateway();
        gw2 = fx.gateway(ownDataDir());
        http1 = new HttpTestClient(gw1.httpPort(), OpenApiContract.load());
        http2 = new HttpTestClient(gw2.httpPort(), OpenApiContract.load());
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
        zkB.close();
        cellB.close();
    }

    private io.warden.service.config.WardenConfig ownDataDir() throws java.io.IOException {
        return fx.config().toBuilder().dataDir(Files.createTempDirectory("warden-gateway-data-")).build();
    }

    private static HttpTestClient.Reply add(HttpTestClient http, String cell, String body) {
        return http.send("PUT", "/v1/cells/" + cell, body, "application/json");
    }

    private String addB() {
        return "{\"zk\":\"" + cellB.getConnectString() + "\"}";
    }

    private static boolean serves(HttpTestClient http, String cell) {
        for (com.fasterxml.jackson.databind.JsonNode c : http.get("/v1/cells").json().get("cells")) {
            if (c.get("name").asText().equals(cell)) {
                return c.get("serving").asBoolean();
            }
        }
        return false;
    }

    private static String open(HttpTestClient http) {
        return http.postJson("/v1/sessions", "client_id", "c", "ttl_ms", 60_000).json().get("session_id").asText();
    }

    @Test
    void aCellAdded_isServedByEveryGateway_andANamespaceMovedToIt_isServedThere() throws Exception {
        String s = open(http2);
        long before = http2.postJson("/v1/acquire", "session_id", s, "name", "pay/x").json().get("token").asLong();
        http2.postJson("/v1/release", "session_id", s, "name", "pay/x", "token", before);

        HttpTestClient.Reply added = add(http1, "b", addB());
        assertThat(added.status()).as(added.text()).isEqualTo(201);
        assertThat(added.json().get("name").asText()).isEqualTo("b");
        assertThat(added.json().get("serving").asBoolean()).isTrue();
        assertThat(added.json().get("zk").asText()).isEqualTo(cellB.getConnectString());
        assertThat(new String(fx.curator.getData().forPath(CellPaths.cellEntry("b")), StandardCharsets.UTF_8))
                .as("the directory entry in the default cell").contains(cellB.getConnectString());
        assertThat(serves(http1, "b")).isTrue();
        WardenFixture.await("the other gateway serves cell b from the directory", () -> serves(http2, "b"));
        assertThat(http2.get("/metrics").text()).contains("warden_cell_serving{cell=\"b\"} 1.0");

        HttpTestClient.Reply again = add(http2, "b", addB());
        assertThat(again.status()).as("the same cell again: answered as it is").isEqualTo(200);

        HttpTestClient.Reply moved = http1.send("PUT", "/v1/namespaces/pay/cell", "{\"cell\":\"b\",\"deadline_ms\":0}",
                "application/json");
        assertThat(moved.status()).as(moved.text()).isEqualTo(200);
        HttpTestClient.Reply onB = http2.postJson("/v1/acquire", "session_id", s, "name", "pay/x");
        assertThat(onB.json().get("status").asText()).as(onB.text()).isEqualTo("GRANTED");
        assertThat(onB.json().get("token").asLong()).as("tokens keep growing into the new cell").isGreaterThan(before);
        assertThat(zkB.getChildren().forPath(WardenFixture.lockPath("pay/x"))).as("the hold is in cell b").hasSize(1);
        assertThat(http2.postJson("/v1/acquire", "session_id", s, "name", "web/y").json().get("status").asText())
                .as("other namespaces stay in the default cell").isEqualTo("GRANTED");

        Gateway gw3 = fx.gateway(ownDataDir());
        HttpTestClient http3 = new HttpTestClient(gw3.httpPort(), OpenApiContract.load());
        WardenFixture.await("a gateway started later serves cell b from the directory", () -> serves(http3, "b"));
        String s3 = open(http3);
        HttpTestClient.Reply queued = http3.postJson("/v1/acquire", "session_id", s3, "name", "pay/x", "wait_ms", 0);
        assertThat(queued.json().get("status").asText()).as("pay/x is held in cell b").isEqualTo("TIMED_OUT");
        assertThat(zkB.getChildren().forPath(WardenFixture.lockPath("pay/x"))).as("a try writes nothing").hasSize(1);
    }

    @Test
    void badAndConflictingAdds_are4xxNamingTheField_andAddNothing() throws Exception {
        assertThat(add(http1, "default", addB()).json().get("field").asText()).isEqualTo("cell");
        assertThat(add(http1, "B", addB()).status()).isEqualTo(400);
        assertThat(add(http1, "b", "{\"zk\":\"not a host\"}").json().get("field").asText()).isEqualTo("zk");
        assertThat(add(http1, "b", "{}").json().get("field").asText()).isEqualTo("zk");
        assertThat(add(http1, "b", "{\"zk\":\"" + cellB.getConnectString() + "\",\"chroot\":\"warden\"}")
                .json().get("field").asText()).isEqualTo("chroot");
        assertThat(add(http1, "b", "{\"zk\":\"" + cellB.getConnectString() + "\",\"size\":3}").status()).isEqualTo(400);

        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort(); // nothing listens there once it is closed
        }
        HttpTestClient.Reply unreachable = add(http1, "c", "{\"zk\":\"127.0.0.1:" + closed + "\"}");
        assertThat(unreachable.status()).as(unreachable.text()).isEqualTo(400);
        assertThat(unreachable.json().get("field").asText()).isEqualTo("zk");
        assertThat(unreachable.json().get("detail").asText()).contains("cannot reach ZooKeeper", "nothing was added");

        HttpTestClient.Reply shared = add(http1, "c", "{\"zk\":\"" + fx.server.getConnectString() + "\"}");
        assertThat(shared.status()).as("the default cell's own path").isEqualTo(409);
        assertThat(shared.json().get("detail").asText()).contains("same ZooKeeper path as cell default");

        assertThat(fx.curator.getChildren().forPath(CellPaths.CELLS)).as("nothing was written").isEmpty();
        assertThat(http1.get("/v1/cells").json().get("cells")).hasSize(1);

        assertThat(add(http1, "b", addB()).status()).isEqualTo(201);
        HttpTestClient.Reply moved = add(http1, "b", "{\"zk\":\"" + cellB.getConnectString() + "\",\"chroot\":\"/other\"}");
        assertThat(moved.status()).as("a cell's address never changes").isEqualTo(409);
        assertThat(moved.json().get("detail").asText()).contains("cannot change");
        HttpTestClient.Reply twin = add(http1, "c", addB());
        assertThat(twin.status()).as("cell b's own path under another name").isEqualTo(409);
        assertThat(fx.curator.getChildren().forPath(CellPaths.CELLS)).containsExactly("b");
    }

    @Test
    void craftedDirectoryEntries_areIgnored_byRunningGatewaysAndNewOnes() throws Exception {
        fx.curator.create().forPath(CellPaths.cellEntry("junk"), "not json".getBytes(StandardCharsets.UTF_8));
        fx.curator.create().forPath(CellPaths.cellEntry("Bad_Name"),
                ("{\"zk\":\"" + cellB.getConnectString() + "\"}").getBytes(StandardCharsets.UTF_8));
        fx.curator.create().forPath(CellPaths.cellEntry("twin"),
                ("{\"zk\":\"" + fx.server.getConnectString() + "\"}").getBytes(StandardCharsets.UTF_8));
        assertThat(add(http1, "b", addB()).status()).as("a good entry after them").isEqualTo(201);
        WardenFixture.await("the other gateway serves b", () -> serves(http2, "b"));
        Gateway gw3 = fx.gateway(ownDataDir());
        HttpTestClient http3 = new HttpTestClient(gw3.httpPort(), OpenApiContract.load());
        WardenFixture.await("a new gateway serves b", () -> serves(http3, "b"));
        for (HttpTestClient h : java.util.List.of(http1, http2, http3)) {
            assertThat(h.get("/v1/cells").json().get("cells")).as("default and b only").hasSize(2);
            assertThat(h.get("/health/ready").status()).isEqualTo(200);
        }
    }
}
