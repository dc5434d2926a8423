package io.warden.service.console;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;

/** The console's pages rendered by a real gateway over real HTTP, from real ZooKeeper state. */
class ConsolePagesTest {
    private static final Pattern ROW = Pattern.compile("<tr[^>]*data-session=\"([0-9a-f]*)\"[^>]*data-token=\"(\\d+)\"");

    private WardenFixture fx;
    private Gateway gw;
    private Warden w;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gw = fx.gateway();
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        fx.clock.advance(ConsoleBridge.SNAPSHOT_TTL.plusMillis(1)); // past the shared snapshot's lifetime
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.httpPort() + path))
                .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The (session, token) rows of the table with this id, in document order. */
    private static List<String> rows(String html, String tableId) {
        int start = html.indexOf("id=\"" + tableId + "\"");
        assertThat(start).as("table #" + tableId + " in the page").isGreaterThanOrEqualTo(0);
        int end = html.indexOf("</table>", start);
        Matcher m = ROW.matcher(html.substring(start, end));
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group(1) + "#" + m.group(2));
        }
        return out;
    }

    @Test
    void lockPage_showsHoldersThenWaitersInQueueOrder_withTokensAndClients() throws Exception {
        String a = session(w, "billing-a", 10_000);
        String b = session(w, "billing-b", 10_000);
        String c = session(w, "reporting", 10_000);
        AcquireResult held = join(w.acquire(exclusive(a, "payments/invoice-42", 0)));
        CompletableFuture<AcquireResult> second = w.acquire(exclusive(b, "payments/invoice-42", 60_000));
        await("b queued", () -> fx.queueSize("payments/invoice-42") == 2);
        CompletableFuture<AcquireResult> third = w.acquire(shared(c, "payments/invoice-42", 60_000));
        await("c queued", () -> fx.queueSize("payments/invoice-42") == 3);
        List<String> nodes = new ArrayList<>(fx.queue("payments/invoice-42"));

        HttpResponse<String> page = get("/console/locks/payments/invoice-42");

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
        String html = page.body();
        assertThat(rows(html, "holders")).containsExactly(a + "#" + held.token());
        List<String> waiters = rows(html, "waiters");
        assertThat(waiters).hasSize(2);
        assertThat(waiters.get(0)).startsWith(b + "#");
        assertThat(waiters.get(1)).startsWith(c + "#");
        long bToken = Long.parseLong(waiters.get(0).substring(b.length() + 1));
        long cToken = Long.parseLong(waiters.get(1).substring(c.length() + 1));
        assertThat(bToken).isGreaterThan(held.token()).isLessThan(cToken);
        assertThat(html).contains("billing-a", "billing-b", "reporting", "EXCLUSIVE", "SHARED");
        assertThat(nodes).hasSize(3);
        second.cancel(true);
        third.cancel(true);
    }

    @Test
    void aSemaphoresPage_showsItsModeAndEveryHolder() throws Exception {
        String a = session(w, "exporter-a", 10_000);
        String b = session(w, "exporter-b", 10_000);
        for (String s : List.of(a, b)) {
            join(w.acquire(new io.warden.service.api.AcquireRequest(s, io.warden.service.api.LockName.parse("reports/pool"),
                    io.warden.service.api.Mode.SEMAPHORE, 0, java.util.UUID.randomUUID().toString(),
                    io.warden.service.api.OnTimeout.CANCEL, true, 3)));
        }
        HttpResponse<String> page = get("/console/locks/reports/pool");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("SEMAPHORE", "exporter-a", "exporter-b");
        assertThat(get("/console/ns/reports").body()).contains("data-lock=\"reports/pool\"", "SEMAPHORE");
    }

    @Test
    void overviewAndNamespacePage_listTheLiveLocks() throws Exception {
        String a = session(w, "svc", 10_000);
        join(w.acquire(exclusive(a, "payments/invoice-42", 0)));
        join(w.acquire(exclusive(a, "jobs/nightly", 0)));

        String overview = get("/console").body();
        assertThat(overview).contains("payments", "jobs");
        String ns = get("/console/ns/payments").body();
        assertThat(ns).contains("data-lock=\"payments/invoice-42\"").doesNotContain("data-lock=\"jobs/nightly\"");
    }

    @Test
    void cellsPage_ofAOneCellGateway_saysItServesOneCell() throws Exception {
        HttpResponse<String> page = get("/console/cells");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("This gateway serves one cell", "tr data-cell=\"default\" data-serving=\"yes\"")
                .doesNotContain("NOT SERVING");
        assertThat(get("/console").body()).contains("id=\"cells-summary\"").doesNotContain("cell-down");
        assertThat(get("/console/ns/payments").body()).contains("<p id=\"cell\" data-cell=\"default\">")
                .doesNotContain("id=\"other-cell\"");
    }

    @Test
    void hostileClientIds_areEscaped() throws Exception {
        String evil = session(w, "<script>alert(1)</script>", 10_000);
        join(w.acquire(exclusive(evil, "payments/evil", 0)));

        for (String path : List.of("/console/locks/payments/evil", "/console/sessions", "/console/sessions/" + evil,
                "/console/ns/payments")) {
            HttpResponse<String> page = get(path);
            assertThat(page.statusCode()).as(path).isEqualTo(200);
            assertThat(page.body()).as(path).doesNotContain("<script>alert(1)</script>");
        }
        assertThat(get("/console/locks/payments/evil").body()).contains("&lt;script&gt;alert(1)&lt;/script&gt;");
    }

    @Test
    void anAdminLoggedInOnOneGateway_expiresASessionThroughAnother_withCsrf_andItIsAudited() throws Exception {
        String token = "console-admin-token-for-tests";
        Gateway a = fx.gateway(fx.config().toBuilder().consoleAdminToken(token).build());
        Gateway b = fx.gateway(fx.config().toBuilder().consoleAdminToken(token).build());
        String victim = session(b.warden(), "wedged-worker", 10_000);
        join(b.warden().acquire(exclusive(victim, "jobs/wedged", 0)));
        HttpClient browser = HttpClient.newBuilder().cookieHandler(new java.net.CookieManager())
                .connectTimeout(Duration.ofSeconds(5)).build();

        // Log in on gateway a; the cookie is signed with the shared token, so gateway b accepts it too.
        HttpResponse<String> login = browser.send(form(a, "/console/login", "actor", "alice", "token", token),
                HttpResponse.BodyHandlers.ofString());
        assertThat(login.statusCode()).isEqualTo(303);
        String cookie = login.headers().firstValue("Set-Cookie").orElseThrow();
        assertThat(cookie).contains("HttpOnly").containsIgnoringCase("SameSite=Strict").contains("Path=/console");
        HttpResponse<String> confirm = browser.send(HttpRequest.newBuilder(URI.create(base(b)
                + "/console/actions/expire-session?session=" + victim)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(confirm.statusCode()).isEqualTo(200);
        Matcher csrf = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(confirm.body());
        assertThat(csrf.find()).as("a CSRF field on the confirmation page").isTrue();

        HttpResponse<String> forged = browser.send(form(b, "/console/actions/expire-session", "session", victim,
                "reason", "no csrf"), HttpResponse.BodyHandlers.ofString());
        assertThat(forged.statusCode()).isEqualTo(403);
        assertThat(b.tracksSession(victim)).isTrue();

        HttpResponse<String> done = browser.send(form(b, "/console/actions/expire-session", "session", victim,
                "csrf", csrf.group(1), "reason", "wedged since 02:00, ticket OPS-7"), HttpResponse.BodyHandlers.ofString());
        assertThat(done.statusCode()).isEqualTo(303);
        assertThat(w.session(victim).handle((v, e) -> e == null ? "alive" : WardenFixture.code(e).name()).join())
                .isEqualTo("SESSION_NOT_FOUND");
        assertThat(fx.queueSize("jobs/wedged")).isZero();
        String audit = browser.send(HttpRequest.newBuilder(URI.create(base(a) + "/console/audit")).GET().build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(audit).contains("alice", "EXPIRE_SESSION", victim, "wedged since 02:00, ticket OPS-7", "done: expired");
    }

    private static String base(Gateway g) {
        return "http://127.0.0.1:" + g.httpPort();
    }

    private static HttpRequest form(Gateway g, String path, String... keysAndValues) {
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            body.append(body.length() == 0 ? "" : "&").append(keysAndValues[i]).append('=')
                    .append(java.net.URLEncoder.encode(keysAndValues[i + 1], java.nio.charset.StandardCharsets.UTF_8));
        }
        return HttpRequest.newBuilder(URI.create(base(g) + path)).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
    }

    @Test
    void aFreeOrUnknownLock_saysSo_andBadNamesAreA400() throws Exception {
        HttpResponse<String> free = get("/console/locks/payments/nobody-holds-this");
        assertThat(free.statusCode()).isEqualTo(200);
        assertThat(free.body()).contains("payments/nobody-holds-this").containsIgnoringCase("free");
        HttpResponse<String> bad = get("/console/locks/Not_A_Namespace/x");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("name");
    }
}
