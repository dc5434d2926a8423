package io.warden.service.console;

import io.warden.service.Gateway;
import io.warden.service.api.Warden;
import io.warden.service.config.CellAddress;
import io.warden.service.config.WardenConfig;
import io.warden.service.support.WardenFixture;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console of a gateway with two cells, each a real ZooKeeper server: the default one (the fixture's) and {@code b},
 * which serves the namespace {@code pay}. The cells page lists both (their ensembles to admins only), the namespace
 * page names its cell, and a cell that loses its ensemble is named on the overview.
 */
class ConsoleCellsTest {
    private static final String TOKEN = "console-admin-token-for-tests";

    private WardenFixture fx;
    private TestingServer cellB;
    private Gateway gw;
    private Warden w;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        cellB = new TestingServer(true);
        WardenConfig config = fx.config().toBuilder().consoleAdminToken(TOKEN)
                .cells(List.of(new CellAddress("b", cellB.getConnectString(), null)))
                .routes(Map.of("pay", "b")).build();
        gw = fx.gateway(config);
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
        cellB.close();
    }

    private HttpResponse<String> get(HttpClient client, String path) throws Exception {
        fx.clock.advance(ConsoleBridge.SNAPSHOT_TTL.plusMillis(1)); // past the shared snapshot's lifetime
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.httpPort() + path))
                .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private String body(String path) throws Exception {
        HttpResponse<String> r = get(http, path);
        assertThat(r.statusCode()).as(path).isEqualTo(200);
        return r.body();
    }

    /** A browser logged in as an admin. */
    private HttpClient admin() throws Exception {
        HttpClient browser = HttpClient.newBuilder().cookieHandler(new CookieManager())
                .connectTimeout(Duration.ofSeconds(5)).build();
        String form = "actor=alice&token=" + URLEncoder.encode(TOKEN, StandardCharsets.UTF_8);
        HttpResponse<String> login = browser.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.httpPort()
                        + "/console/login")).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(login.statusCode()).isEqualTo(303);
        return browser;
    }

    @Test
    void cellsPage_listsBothCells_theirEnsemblesToAdminsOnly_andTheNamespacePageNamesItsCell() throws Exception {
        String s = session(w, "svc", 10_000);
        join(w.acquire(exclusive(s, "pay/invoice-1", 0)));
        join(w.acquire(exclusive(s, "web/page-1", 0)));

        String viewer = body("/console/cells");
        assertThat(viewer).contains("tr data-cell=\"default\" data-serving=\"yes\"", "tr data-cell=\"b\" data-serving=\"yes\"",
                "every namespace not routed elsewhere", "<a class=\"mono chip\" href=\"/console/ns/pay\">pay</a>",
                "id=\"ensembles-hidden\"").doesNotContain("This gateway serves one cell", "NOT SERVING",
                cellB.getConnectString(), fx.server.getConnectString());
        assertThat(viewer.indexOf("data-cell=\"default\"")).isLessThan(viewer.indexOf("data-cell=\"b\""));

        HttpResponse<String> asAdmin = get(admin(), "/console/cells");
        assertThat(asAdmin.statusCode()).isEqualTo(200);
        assertThat(asAdmin.body()).contains("<th>Ensemble</th>", cellB.getConnectString(), fx.server.getConnectString())
                .doesNotContain("id=\"ensembles-hidden\"");

        String pay = body("/console/ns/pay");
        assertThat(pay).as("the locks of a namespace in another cell are listed too")
                .contains("<p id=\"cell\" data-cell=\"b\">", "data-lock=\"pay/invoice-1\"")
                .doesNotContain("data-lock=\"web/page-1\"", "id=\"other-cell\"");
        long payToken = w.lock(io.warden.service.api.LockName.parse("name", "pay/invoice-1")).join().holders().get(0).token();
        assertThat(body("/console/locks/pay/invoice-1")).as("a lock of cell b has its page, with its holder")
                .contains("data-session=\"" + s + "\" data-token=\"" + payToken + "\"");
        String web = body("/console/ns/web");
        assertThat(web).contains("<p id=\"cell\" data-cell=\"default\">", "data-lock=\"web/page-1\"")
                .doesNotContain("id=\"other-cell\"");
        assertThat(body("/console")).contains("2 cells").doesNotContain("cell-down");
    }

    @Test
    void aCellThatLosesItsEnsemble_isNamedOnTheOverview_andItsDetailShownOnTheCellsPage() throws Exception {
        String s = session(w, "svc", 60_000);
        join(w.acquire(exclusive(s, "web/page-1", 0)));
        cellB.stop();
        WardenFixture.await("the cells page shows cell b not serving",
                () -> uncheckedBody("/console/cells").contains("tr data-cell=\"b\" data-serving=\"no\""));

        String cells = body("/console/cells");
        assertThat(cells).contains("NOT SERVING", "1 of 2 cells does not serve",
                "not connected to ZooKeeper at " + cellB.getConnectString());
        assertThat(cells).contains("tr data-cell=\"default\" data-serving=\"yes\"");

        String overview = body("/console");
        assertThat(overview).contains("class=\"banner error cell-down\" role=\"alert\" data-cell=\"b\"",
                "Cell <strong>b</strong> is", "<code class=\"mono\">pay</code>")
                .doesNotContain("data-cell=\"default\"");
        WardenFixture.await("the overview says cell b's locks are not listed",
                () -> uncheckedBody("/console").contains("id=\"cells-unread\""));
        assertThat(body("/console/ns/pay")).as("pay's locks cannot be read, which the page says: it does not show pay free")
                .contains("<p id=\"cell\" data-cell=\"b\">", "NOT SERVING", "id=\"cell-unread\"")
                .doesNotContain("is held or waited for");
        assertThat(body("/console/ns/web")).as("the default cell's namespaces are listed as usual")
                .contains("<p id=\"cell\" data-cell=\"default\">", "data-lock=\"web/page-1\"")
                .doesNotContain("NOT SERVING", "cell-unread");
    }

    private String uncheckedBody(String path) {
        try {
            return get(http, path).body();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
