package io.warden.service.http;

import io.warden.service.Gateway;
import io.warden.service.support.TwoCellFixture;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway with two cells, each a real ZooKeeper server: the default one (the fixture's) and {@code b}, which serves
 * the namespace {@code pay}. Calls go to their namespace's cell; one session spans both; the loss of one cell's
 * ensemble makes only its namespaces (and the sessions that use it) answer 503; a session gone in one cell ends in all.
 */
class CellsHttpTest {
    private TwoCellFixture cells;
    private WardenFixture fx;
    private CuratorFramework zkB;
    private TestingServer cellB;
    private Gateway gw;
    private HttpTestClient http;

    @BeforeEach
    void setUp() throws Exception {
        cells = new TwoCellFixture();
        fx = cells.fx;
        zkB = cells.zkB;
        cellB = cells.cellB;
        gw = cells.gateway;
        http = new HttpTestClient(gw.httpPort(), OpenApiContract.load());
    }

    @AfterEach
    void tearDown() throws Exception {
        cells.close();
    }

    private String open(long ttlMs) {
        return http.postJson("/v1/sessions", "client_id", "c", "ttl_ms", ttlMs).json().get("session_id").asText();
    }

    private HttpTestClient.Reply acquire(String session, String name) {
        return http.postJson("/v1/acquire", "session_id", session, "name", name);
    }

    private static int queueSize(CuratorFramework zk, String name) throws Exception {
        return TwoCellFixture.queueSize(zk, name);
    }

    @Test
    void eachNamespaceIsServedByItsCell_andOneSessionSpansBoth() throws Exception {
        String s = open(60_000);
        HttpTestClient.Reply pay = acquire(s, "pay/invoice-1");
        assertThat(pay.status()).isEqualTo(200);
        assertThat(pay.json().get("status").asText()).isEqualTo("GRANTED");
        HttpTestClient.Reply web = acquire(s, "web/page-1");
        assertThat(web.json().get("status").asText()).isEqualTo("GRANTED");

        assertThat(queueSize(zkB, "pay/invoice-1")).as("pay's queue is on cell b").isEqualTo(1);
        assertThat(queueSize(fx.curator, "pay/invoice-1")).as("and not on the default cell").isZero();
        assertThat(queueSize(fx.curator, "web/page-1")).isEqualTo(1);
        assertThat(queueSize(zkB, "web/page-1")).isZero();
        assertThat(zkB.checkExists().forPath(CellPaths.session(s))).as("the session's record in cell b").isNotNull();
        String home = new String(fx.curator.getData().forPath(CellPaths.session(s)), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(home).as("the home record lists cell b").contains("\"cells\":[\"b\"]");

        long token = pay.json().get("token").asLong();
        assertThat(http.get("/v1/check?name=pay/invoice-1&token=" + token).json().get("current").asBoolean()).isTrue();
        assertThat(http.get("/v1/locks/pay/invoice-1").json().get("holders").size()).isEqualTo(1);
        assertThat(http.post("/v1/sessions/" + s + "/keepalive", "").status()).isEqualTo(200);
        HttpTestClient.Reply view = http.get("/v1/sessions/" + s);
        assertThat(view.json().get("holds").toString()).as("the session's holds in both cells")
                .contains("pay/invoice-1", "web/page-1");

        HttpTestClient.Reply cells = http.get("/v1/cells");
        assertThat(cells.status()).isEqualTo(200);
        assertThat(cells.json().get("cells").size()).isEqualTo(2);
        assertThat(cells.json().get("cells").get(0).get("name").asText()).isEqualTo("default");
        assertThat(cells.json().get("cells").get(1).get("name").asText()).isEqualTo("b");
        assertThat(cells.json().get("cells").get(1).get("serving").asBoolean()).isTrue();
        assertThat(cells.json().get("cells").get(1).get("namespaces").get(0).asText()).isEqualTo("pay");
        assertThat(http.get("/metrics").text()).contains("warden_cell_serving{cell=\"b\"} 1.0",
                "warden_grants_total{cell=\"b\"} 1", "warden_grants_total{cell=\"default\"} 1");

        assertThat(http.delete("/v1/sessions/" + s).status()).isEqualTo(200);
        assertThat(queueSize(zkB, "pay/invoice-1")).as("closing the session released its hold in cell b").isZero();
        assertThat(queueSize(fx.curator, "web/page-1")).isZero();
        assertThat(zkB.checkExists().forPath(CellPaths.session(s))).isNull();
        assertThat(fx.curator.checkExists().forPath(CellPaths.session(s))).isNull();
    }

    @Test
    void listingsOfEveryNamespace_mergeTheCells_inNameOrder_pageByPage() {
        String s = open(60_000);
        for (String name : List.of("pay/a", "web/b", "pay/c", "web/d", "pay/e")) {
            assertThat(acquire(s, name).json().get("status").asText()).isEqualTo("GRANTED");
        }
        List<String> seen = new java.util.ArrayList<>();
        String after = null;
        int pages = 0;
        do {
            HttpTestClient.Reply page = http.get("/v1/locks?limit=2" + (after == null ? "" : "&after=" + after));
            assertThat(page.status()).isEqualTo(200);
            page.json().get("locks").forEach(l -> seen.add(l.get("name").asText()));
            after = page.json().has("next_after") ? page.json().get("next_after").asText() : null;
            pages++;
        } while (after != null && pages < 10);
        assertThat(seen).containsExactly("pay/a", "pay/c", "pay/e", "web/b", "web/d");
        assertThat(http.get("/v1/namespaces").json().get("namespaces").toString()).contains("\"pay\"", "\"web\"");
        assertThat(http.get("/v1/locks?namespace=pay").json().get("locks").size()).isEqualTo(3);
    }

    @Test
    void aGatewayStartsWithoutACellItCannotReach_servesTheOthers_andTakesItUpWhenItComes() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        try (WardenFixture other = new WardenFixture();
             TestingServer late = new TestingServer(port, false)) {
            Gateway g = other.gateway(other.config().toBuilder()
                    .cells(java.util.List.of(new io.warden.service.config.CellAddress("b", late.getConnectString(), null)))
                    .routes(java.util.Map.of("pay", "b")).build());
            HttpTestClient c = new HttpTestClient(g.httpPort(), OpenApiContract.load());
            String s = c.postJson("/v1/sessions", "client_id", "c", "ttl_ms", 60_000).json().get("session_id").asText();
            assertThat(c.postJson("/v1/acquire", "session_id", s, "name", "web/a").json().get("status").asText())
                    .isEqualTo("GRANTED");
            assertThat(c.postJson("/v1/acquire", "session_id", s, "name", "pay/a").status())
                    .as("its namespaces answer 503, at once").isEqualTo(503);
            assertThat(c.get("/v1/locks/pay/a").status()).as("and are not read from another cell").isEqualTo(503);
            assertThat(c.get("/health/ready").status()).isEqualTo(200);

            late.start();
            WardenFixture.await("cell b taken up", java.time.Duration.ofSeconds(30), () ->
                    c.postJson("/v1/acquire", "session_id", s, "name", "pay/a").status() == 200);
            assertThat(c.get("/v1/cells").json().get("cells").get(1).get("serving").asBoolean()).isTrue();
        }
    }

    @Test
    void aMultiLockAcrossCells_isRefusedNamingNames_andChangesNothing() throws Exception {
        String s = open(60_000);
        HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", s, "names", List.of("pay/a", "web/a"));
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("field").asText()).isEqualTo("names");
        assertThat(queueSize(zkB, "pay/a") + queueSize(fx.curator, "web/a")).isZero();
        HttpTestClient.Reply one = http.postJson("/v1/acquire", "session_id", s, "names", List.of("pay/a", "pay/b"));
        assertThat(one.json().get("status").asText()).as("names of one cell: granted there").isEqualTo("GRANTED");
        assertThat(queueSize(zkB, "pay/a")).isEqualTo(1);
    }

    @Test
    void losingOneCellsEnsemble_onlyItsNamespacesAndItsSessionsAnswer503() throws Exception {
        String webOnly = open(60_000);
        String both = open(60_000);
        assertThat(acquire(webOnly, "web/a").status()).isEqualTo(200);
        assertThat(acquire(both, "web/b").status()).isEqualTo(200);
        assertThat(acquire(both, "pay/b").status()).isEqualTo(200);

        cellB.stop();
        WardenFixture.await("cell b not serving", () -> !http.get("/v1/cells").json().get("cells").get(1).get("serving").asBoolean());

        HttpTestClient.Reply down = acquire(webOnly, "pay/c");
        assertThat(down.status()).as("pay is served by the lost cell").isEqualTo(503);
        assertThat(acquire(webOnly, "web/c").json().get("status").asText()).as("web goes on").isEqualTo("GRANTED");
        assertThat(http.post("/v1/sessions/" + webOnly + "/keepalive", "").status())
                .as("a session that never used cell b is kept alive, even after its acquire there failed").isEqualTo(200);
        assertThat(http.post("/v1/sessions/" + both + "/keepalive", "").status())
                .as("no keepalive acknowledged for a session the gateway cannot vouch for in every cell").isEqualTo(503);
        HttpTestClient.Reply ready = http.get("/health/ready");
        assertThat(ready.status()).as("the default cell, home of the sessions, still serves").isEqualTo(200);
        assertThat(ready.json().get("detail").asText()).contains("cell b");
        assertThat(http.get("/metrics").text()).contains("warden_cell_serving{cell=\"b\"} 0.0",
                "warden_cell_serving{cell=\"default\"} 1.0");
        assertThat(fx.curator.getData().forPath(CellPaths.session(webOnly))).asString()
                .as("the failed acquire did not list cell b in the session's home").doesNotContain("cells");

        cellB.restart();
        WardenFixture.await("keepalives of the spanning session acknowledged again",
                () -> http.post("/v1/sessions/" + both + "/keepalive", "").status() == 200);
        assertThat(acquire(webOnly, "pay/c").json().get("status").asText()).isEqualTo("GRANTED");
    }

    @Test
    void aSessionThatExpiredInOneCell_endsInAll() throws Exception {
        String s = open(10_000);
        assertThat(acquire(s, "pay/x").status()).isEqualTo(200);
        assertThat(acquire(s, "web/x").status()).isEqualTo(200);

        // As when keepalives stopped reaching cell b (each refused with 503) until b's deadline passed there.
        assertThat(gw.sessionManager("b").expireNow(s).get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(zkB.checkExists().forPath(CellPaths.session(s))).isNull();
        assertThat(fx.curator.checkExists().forPath(CellPaths.session(s))).as("still at home, until told").isNotNull();

        HttpTestClient.Reply gone = http.post("/v1/sessions/" + s + "/keepalive", "");
        assertThat(gone.status()).isEqualTo(404);
        assertThat(gone.json().get("code").asText()).isEqualTo("SESSION_NOT_FOUND");
        assertThat(fx.curator.checkExists().forPath(CellPaths.session(s))).as("ended at home too").isNull();
        assertThat(queueSize(fx.curator, "web/x")).as("its hold in the default cell released").isZero();
    }
}
