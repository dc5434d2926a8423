package io.warden.console;

import static io.warden.console.Fixtures.ALICE;
import static io.warden.console.Fixtures.NOW;
import static org.assertj.core.api.Assertions.assertThat;

import io.javalin.Javalin;
import io.warden.console.model.AuditEntry;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The console mounted on a real Javalin (as the gateway mounts it, next to a JSON exception mapper that must never
 * answer a console request), driven over HTTP with a {@link FakeBackend}.
 */
class ConsoleRoutesTest {
    static final String TOKEN = "0123456789abcdef-admin";

    private final FakeBackend backend = new FakeBackend();
    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
    private final AtomicInteger gatewayMapperCalls = new AtomicInteger();
    private Javalin app;

    private void start(String adminToken) {
        ConsoleSettings settings = new ConsoleSettings(adminToken, Duration.ofSeconds(2), Duration.ofHours(8));
        WardenConsole console = new WardenConsole(backend, settings, Clock.fixed(NOW, ZoneOffset.UTC));
        app = Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            cfg.routes.exception(Exception.class, (e, ctx) -> {
                gatewayMapperCalls.incrementAndGet();
                ctx.status(500).contentType("application/problem+json").result("{\"title\":\"gateway mapper\"}");
            });
            console.mount(cfg);
            // the gateway adds routes of its own under /console after mounting the console (its peer route)
            cfg.routes.get("/console/peer/tracked-sessions", ctx -> ctx.contentType("application/json").result("{}"));
        }).start("127.0.0.1", 0);
    }

    @AfterEach
    void stop() {
        if (app != null) {
            app.stop();
        }
        assertThat(gatewayMapperCalls).as("console failures never reach the gateway's JSON mapper").hasValue(0);
    }

    private HttpResponse<String> get(String path, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + path));
        if (cookie != null) {
            b.header("Cookie", Auth.COOKIE + "=" + cookie);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return get(path, null);
    }

    private HttpResponse<String> post(String path, Map<String, String> form, String cookie, String... headers) throws Exception {
        String body = form.entrySet().stream()
                .map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
                        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + path))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (cookie != null) {
            b.header("Cookie", Auth.COOKIE + "=" + cookie);
        }
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Map<String, String> form(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }

    /** Logs in as {@code actor}; returns the cookie value. */
    private String login(String actor) throws Exception {
        HttpResponse<String> r = post("/console/login", form("actor", actor, "token", TOKEN, "next", "/console"), null);
        assertThat(r.statusCode()).isEqualTo(303);
        String setCookie = r.headers().firstValue("Set-Cookie").orElseThrow();
        Matcher m = Pattern.compile(Auth.COOKIE + "=([^;]+)").matcher(setCookie);
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    private static String csrfOf(String html) {
        Matcher m = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(html);
        assertThat(m.find()).as("a csrf field").isTrue();
        return m.group(1);
    }

    private static void assertHtml(HttpResponse<String> r) {
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
        assertThat(r.body()).startsWith("<!DOCTYPE html>");
    }

    @Test
    void overview_rendersWithSecurityHeaders() throws Exception {
        start(TOKEN);
        HttpResponse<String> r = get("/console");

        assertThat(r.statusCode()).isEqualTo(200);
        assertHtml(r);
        assertThat(r.body()).contains("tr data-lock=\"payments/invoice-42\"").contains("hx-get=\"/console?fragment=1\"");
        assertThat(r.headers().firstValue("Content-Security-Policy").orElse("")).contains("frame-ancestors 'none'");
        assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
        assertThat(get("/console/").statusCode()).isEqualTo(200);
    }

    @Test
    void lockPage_takesNamesWithSlashes_andItsFragmentIsJustTheLiveRegion() throws Exception {
        start(TOKEN);
        HttpResponse<String> r = get("/console/locks/payments/invoice-42");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("data-session=\"" + ALICE + "\" data-token=\"16\"")
                .contains("hx-get=\"/console/locks/payments/invoice-42?fragment=1\"");

        HttpResponse<String> fragment = get("/console/locks/payments/invoice-42?fragment=1");
        assertThat(fragment.statusCode()).isEqualTo(200);
        assertThat(fragment.body()).doesNotContain("<html").contains("id=\"holders\"").contains("class=\"asof\"");
    }

    @Test
    void freeLock_isA200ThatSaysSo() throws Exception {
        start(TOKEN);
        HttpResponse<String> r = get("/console/locks/payments/x");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("payments/x</code> has no holders or waiters — it is free");
    }

    @Test
    void badInput_isA400PageNamingTheField() throws Exception {
        start(TOKEN);
        HttpResponse<String> limit = get("/console/ns/payments?limit=9999");
        assertThat(limit.statusCode()).isEqualTo(400);
        assertHtml(limit);
        assertThat(limit.body()).contains("limit must be an integer from 1 to 500");

        HttpResponse<String> name = get("/console/locks/NotALock");
        assertThat(name.statusCode()).isEqualTo(400);
        assertThat(name.body()).contains("name must be a lock name");
    }

    @Test
    void unknownConsolePaths_areAnHtml404() throws Exception {
        start(TOKEN);
        HttpResponse<String> r = get("/console/nope/deeper");
        assertThat(r.statusCode()).isEqualTo(404);
        assertHtml(r);
        assertThat(r.body()).contains("the console has no page at /console/nope/deeper");
        assertThat(post("/console/nope", form(), null).statusCode()).isEqualTo(404);
        assertThat(get("/console/static/secret.txt").statusCode()).isEqualTo(404);
    }

    @Test
    void routesTheGatewayAddsAfterMounting_areNotShadowedByTheConsole404() throws Exception {
        start(TOKEN);
        HttpResponse<String> r = get("/console/peer/tracked-sessions");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("{}");
    }

    @Test
    void backendFailure_isABannerOnTheFullPage_andA503ForTheFragment() throws Exception {
        start(TOKEN);
        backend.failing = "ZooKeeper: no quorum";

        HttpResponse<String> page = get("/console/locks/payments/invoice-42");
        assertThat(page.statusCode()).isEqualTo(503);
        assertHtml(page);
        assertThat(page.body()).contains("Cannot read the cell: ZooKeeper: no quorum")
                .contains("hx-trigger=\"every 2000ms\""); // still polling, to recover by itself

        HttpResponse<String> fragment = get("/console/sessions?fragment=1");
        assertThat(fragment.statusCode()).isEqualTo(503);
        assertThat(fragment.body()).isEqualTo("cannot read the cell: ZooKeeper: no quorum");

        HttpResponse<String> overview = get("/console");
        assertThat(overview.statusCode()).isEqualTo(503);
        assertThat(overview.body()).contains("Cannot read the cell: ZooKeeper: no quorum");
    }

    @Test
    void aBackendThatThrows_isStillAnHtmlPage() throws Exception {
        start(TOKEN);
        backend.throwing = true;
        HttpResponse<String> r = get("/console/waits");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("wait-for graph exploded");
    }

    @Test
    void aViewer_seesNoAdminButtons_andCannotPost() throws Exception {
        start(TOKEN);
        assertThat(get("/console/locks/payments/invoice-42").body()).doesNotContain("force-release");

        HttpResponse<String> r = post("/console/actions/force-release",
                form("name", "payments/invoice-42", "token", "16", "reason", "stuck", "csrf", "x"), null);
        assertThat(r.statusCode()).isEqualTo(403);
        assertHtml(r);
        assertThat(r.body()).contains("read-only viewers cannot");
        assertThat(post("/console/actions/expire-session", form("session", ALICE, "reason", "x"), null).statusCode())
                .isEqualTo(403);
        assertThat(backend.audit).isEmpty();

        HttpResponse<String> confirm = get("/console/actions/force-release?name=payments/invoice-42&token=16");
        assertThat(confirm.statusCode()).isEqualTo(303);
        assertThat(confirm.headers().firstValue("Location").orElseThrow()).startsWith("/console/login?next=");
    }

    @Test
    void login_wrongToken_is401_rightTokenSetsAStrictCookie() throws Exception {
        start(TOKEN);
        HttpResponse<String> wrong = post("/console/login", form("actor", "jane", "token", "nope"), null);
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(wrong.body()).contains("wrong admin token");
        assertThat(wrong.headers().firstValue("Set-Cookie")).isEmpty();

        HttpResponse<String> noActor = post("/console/login", form("actor", " ", "token", TOKEN), null);
        assertThat(noActor.statusCode()).isEqualTo(400);
        assertThat(noActor.body()).contains("actor:");

        HttpResponse<String> ok = post("/console/login", form("actor", "jane", "token", TOKEN,
                "next", "/console/locks/payments/invoice-42"), null);
        assertThat(ok.statusCode()).isEqualTo(303);
        assertThat(ok.headers().firstValue("Location")).hasValue("/console/locks/payments/invoice-42");
        String cookie = ok.headers().firstValue("Set-Cookie").orElseThrow();
        assertThat(cookie).startsWith("warden_console=v1.").contains("HttpOnly").contains("SameSite=Strict")
                .contains("Path=/console").doesNotContain("Secure");

        HttpResponse<String> https = post("/console/login", form("actor", "jane", "token", TOKEN), null,
                "X-Forwarded-Proto", "https");
        assertThat(https.headers().firstValue("Set-Cookie").orElseThrow()).contains("Secure");
    }

    @Test
    void login_neverRedirectsOutsideTheConsole() throws Exception {
        start(TOKEN);
        for (String next : new String[] {"https://evil.example/", "//evil.example/console", "/console/\\evil", "/consolex"}) {
            HttpResponse<String> r = post("/console/login", form("actor", "jane", "token", TOKEN, "next", next), null);
            assertThat(r.headers().firstValue("Location")).as(next).hasValue("/console");
        }
    }

    @Test
    void adminPost_needsTheCsrfTokenOfItsLogin() throws Exception {
        start(TOKEN);
        String cookie = login("jane");
        String otherCookie = login("john");
        String otherCsrf = csrfOf(get("/console", otherCookie).body());

        assertThat(post("/console/actions/force-release", form("name", "payments/invoice-42", "token", "16",
                "reason", "stuck"), cookie).statusCode()).isEqualTo(403);
        HttpResponse<String> foreign = post("/console/actions/force-release", form("name", "payments/invoice-42",
                "token", "16", "reason", "stuck", "csrf", otherCsrf), cookie);
        assertThat(foreign.statusCode()).isEqualTo(403);
        assertThat(foreign.body()).contains("CSRF");
        assertThat(backend.audit).isEmpty();
    }

    @Test
    void forceRelease_confirmThenPost_auditsAndRedirectsWithAFlash() throws Exception {
        start(TOKEN);
        String cookie = login("jane");
        assertThat(get("/console/locks/payments/invoice-42", cookie).body()).contains("class=\"force-release");

        HttpResponse<String> confirm = get("/console/actions/force-release?name=payments/invoice-42&token=16", cookie);
        assertThat(confirm.statusCode()).isEqualTo(200);
        assertThat(confirm.body()).contains("id=\"confirm\"").contains("name=\"reason\"");
        String csrf = csrfOf(confirm.body());

        HttpResponse<String> noReason = post("/console/actions/force-release", form("name", "payments/invoice-42",
                "token", "16", "reason", "   ", "csrf", csrf), cookie);
        assertThat(noReason.statusCode()).isEqualTo(400);
        assertThat(noReason.body()).contains("reason is required");
        assertThat(post("/console/actions/force-release", form("name", "payments/invoice-42", "token", "16",
                "reason", "x".repeat(501), "csrf", csrf), cookie).statusCode()).isEqualTo(400);
        assertThat(post("/console/actions/force-release", form("name", "payments/invoice-42", "token", "-3",
                "reason", "x", "csrf", csrf), cookie).statusCode()).isEqualTo(400);
        assertThat(backend.audit).isEmpty();

        HttpResponse<String> done = post("/console/actions/force-release", form("name", "payments/invoice-42",
                "token", "16", "reason", "holder hung in GC, paged by INC-7", "csrf", csrf), cookie);
        assertThat(done.statusCode()).isEqualTo(303);
        String location = done.headers().firstValue("Location").orElseThrow();
        assertThat(location).startsWith("/console/locks/payments/invoice-42?done=");

        assertThat(backend.audit).singleElement().satisfies(a -> {
            assertThat(a.at()).isEqualTo(NOW);
            assertThat(a.actor()).isEqualTo("jane");
            assertThat(a.action()).isEqualTo("FORCE_RELEASE");
            assertThat(a.target()).isEqualTo("payments/invoice-42#16");
            assertThat(a.reason()).isEqualTo("holder hung in GC, paged by INC-7");
            assertThat(a.source()).isEqualTo("127.0.0.1");
        });

        HttpResponse<String> after = get(location, cookie);
        assertThat(after.body()).contains("id=\"flash\"").contains("done: released payments/invoice-42 token 16");
        // the live region polls without the flash
        assertThat(after.body()).contains("hx-get=\"/console/locks/payments/invoice-42?fragment=1\"");
    }

    @Test
    void askToRelease_confirmThenPost_withAGraceAndAReason() throws Exception {
        start(TOKEN);
        String cookie = login("jane");
        String lockPage = get("/console/locks/payments/invoice-42", cookie).body();
        assertThat(lockPage).contains("class=\"ask-release").contains("class=\"force-release");

        HttpResponse<String> confirm = get("/console/actions/ask-release?name=payments/invoice-42&token=16", cookie);
        assertThat(confirm.statusCode()).isEqualTo(200);
        assertThat(confirm.body()).contains("id=\"confirm\"").contains("name=\"grace\"").contains("name=\"reason\"");
        String csrf = csrfOf(confirm.body());

        assertThat(post("/console/actions/ask-release", form("name", "payments/invoice-42", "token", "16",
                "grace", "-1", "reason", "x", "csrf", csrf), cookie).statusCode()).isEqualTo(400);
        assertThat(post("/console/actions/ask-release", form("name", "payments/invoice-42", "token", "16",
                "grace", "601", "reason", "x", "csrf", csrf), cookie).statusCode()).isEqualTo(400);
        assertThat(post("/console/actions/ask-release", form("name", "payments/invoice-42", "token", "16",
                "grace", "30", "reason", "x".repeat(257), "csrf", csrf), cookie).statusCode()).isEqualTo(400);
        assertThat(backend.asked).isEmpty();

        HttpResponse<String> done = post("/console/actions/ask-release", form("name", "payments/invoice-42",
                "token", "16", "grace", "45", "reason", "disk swap at 14:00", "csrf", csrf), cookie);
        assertThat(done.statusCode()).isEqualTo(303);
        assertThat(done.headers().firstValue("Location").orElseThrow()).startsWith("/console/locks/payments/invoice-42?done=");
        assertThat(backend.asked).containsExactly(45_000L);
        assertThat(backend.audit).singleElement().satisfies(a -> {
            assertThat(a.action()).isEqualTo("ASK_RELEASE");
            assertThat(a.target()).isEqualTo("payments/invoice-42#16");
            assertThat(a.reason()).isEqualTo("disk swap at 14:00");
        });
    }

    @Test
    void aForgedFlash_isNotShown() throws Exception {
        start(TOKEN);
        assertThat(get("/console/locks/payments/invoice-42?done=done:+everything+is+fine&sig=abc").body())
                .doesNotContain("id=\"flash\"");
    }

    @Test
    void expireSession_confirmThenPost() throws Exception {
        start(TOKEN);
        String cookie = login("jane");
        assertThat(get("/console/sessions/" + ALICE, cookie).body()).contains("class=\"expire-session");
        HttpResponse<String> confirm = get("/console/actions/expire-session?session=" + ALICE, cookie);
        assertThat(confirm.statusCode()).isEqualTo(200);
        String csrf = csrfOf(confirm.body());

        HttpResponse<String> done = post("/console/actions/expire-session", form("session", ALICE,
                "reason", "deadlocked with bob", "csrf", csrf), cookie);
        assertThat(done.statusCode()).isEqualTo(303);
        assertThat(done.headers().firstValue("Location").orElseThrow()).startsWith("/console/sessions/" + ALICE + "?done=");
        AuditEntry a = backend.audit.get(0);
        assertThat(a.action()).isEqualTo("EXPIRE_SESSION");
        assertThat(a.target()).isEqualTo(ALICE);

        HttpResponse<String> audit = get("/console/audit");
        assertThat(audit.body()).contains("deadlocked with bob").contains("EXPIRE_SESSION").contains("jane");
    }

    @Test
    void logout_clearsTheCookie() throws Exception {
        start(TOKEN);
        String cookie = login("jane");
        String csrf = csrfOf(get("/console", cookie).body());
        assertThat(post("/console/logout", form(), cookie).statusCode()).isEqualTo(403); // no csrf
        HttpResponse<String> out = post("/console/logout", form("csrf", csrf), cookie);
        assertThat(out.statusCode()).isEqualTo(303);
        assertThat(out.headers().firstValue("Set-Cookie").orElseThrow()).startsWith("warden_console=;").contains("01 Jan 1970");
    }

    @Test
    void withoutAnAdminToken_theConsoleIsReadOnly() throws Exception {
        start(null);
        assertThat(get("/console/login").statusCode()).isEqualTo(403);
        assertThat(post("/console/login", form("actor", "jane", "token", TOKEN), null).statusCode()).isEqualTo(403);
        assertThat(get("/console/actions/force-release?name=payments/invoice-42&token=16").statusCode()).isEqualTo(403);
        assertThat(post("/console/actions/force-release", form("name", "payments/invoice-42", "token", "16",
                "reason", "x"), null).statusCode()).isEqualTo(403);
        assertThat(get("/console").body()).doesNotContain("Admin login");
    }

    @Test
    void search_goesToTheLock_theNamespace_theSession_orTheClient() throws Exception {
        start(TOKEN);
        assertThat(get("/console/go?q=payments/invoice-42").headers().firstValue("Location"))
                .hasValue("/console/locks/payments/invoice-42");
        assertThat(get("/console/go?q=+payments/invoice-4/+").headers().firstValue("Location"))
                .hasValue("/console/ns/payments?prefix=payments%2Finvoice-4");
        assertThat(get("/console/go?q=" + ALICE).headers().firstValue("Location")).hasValue("/console/sessions/" + ALICE);
        assertThat(get("/console/go?q=alice").headers().firstValue("Location")).hasValue("/console/sessions?client=alice");
        assertThat(get("/console/go?q=orders").headers().firstValue("Location")).hasValue("/console/ns/orders");
        assertThat(get("/console/go?q=").headers().firstValue("Location")).hasValue("/console");
        assertThat(get("/console/suggest?q=payments/inv").body()).contains("<option value=\"payments/invoice-42\">");
    }

    @Test
    void assets_andHtmx_areServedByTheGateway() throws Exception {
        start(TOKEN);
        HttpResponse<String> css = get("/console/static/console.css");
        assertThat(css.statusCode()).isEqualTo(200);
        assertThat(css.headers().firstValue("Content-Type").orElse("")).startsWith("text/css");
        assertThat(css.body()).contains("prefers-color-scheme: dark");
        assertThat(get("/console/static/console.js").body()).contains("stale-banner");
        String version = io.warden.console.view.AssetVersion.VERSION;
        assertThat(get("/console").body()).contains("/console/static/console.css?v=" + version);
        assertThat(get("/console/static/console.css?v=" + version).headers().firstValue("Cache-Control"))
                .hasValue("public, max-age=31536000, immutable");
        assertThat(css.headers().firstValue("Cache-Control")).hasValue("public, max-age=300");
        assertThat(get("/webjars/htmx.org/2.0.10/dist/htmx.min.js").statusCode()).isEqualTo(200);
    }

    @Test
    void sessionsPages() throws Exception {
        start(TOKEN);
        assertThat(get("/console/sessions?ns=payments&client=al").body()).contains("data-session=\"" + ALICE + "\"")
                .doesNotContain("data-session=\"" + Fixtures.BOB + "\"");
        HttpResponse<String> gone = get("/console/sessions/ffff");
        assertThat(gone.statusCode()).isEqualTo(404);
        assertThat(gone.body()).contains("is not in the cell");
        assertThat(get("/console/sessions/ffff?fragment=1").statusCode()).isEqualTo(200);
        assertThat(get("/console/sessions?limit=0").statusCode()).isEqualTo(400);
    }

    @Test
    void waitsPage_showsTheDeadlock() throws Exception {
        start(TOKEN);
        HttpResponse<String> r = get("/console/waits");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("id=\"deadlocks\"").contains("<strong>DEADLOCK</strong>")
                .contains("data-on-deadlock=\"FAIL\"").contains("data-on-deadlock=\"WAIT\"").contains("bob-req-42");
    }

    @Test
    void cellsPage_listsEachCell_withTheDetailOfOneThatDoesNotServe_andItsNamespaces() throws Exception {
        start(TOKEN);
        backend.cells = Fixtures.twoCells("not connected to ZooKeeper at zkb1:2181,zkb2:2181");

        HttpResponse<String> r = get("/console/cells");
        assertThat(r.statusCode()).isEqualTo(200);
        assertHtml(r);
        String html = r.body();
        assertThat(html).contains("<a href=\"/console/cells\" aria-current=\"page\">Cells</a>")
                .contains("hx-get=\"/console/cells?fragment=1\"")
                .contains("tr data-cell=\"default\" data-serving=\"yes\"")
                .contains("tr data-cell=\"b\" data-serving=\"no\" class=\"bad\"")
                .contains("NOT SERVING").contains("not connected to ZooKeeper at zkb1:2181,zkb2:2181")
                .contains("1 of 2 cells does not serve")
                .contains("every namespace not routed elsewhere")
                .contains("<a class=\"mono chip\" href=\"/console/ns/pay\">pay</a>")
                .doesNotContain("This gateway serves one cell");
        assertThat(html.indexOf("data-cell=\"default\"")).as("the default cell first")
                .isLessThan(html.indexOf("data-cell=\"b\""));

        HttpResponse<String> fragment = get("/console/cells?fragment=1");
        assertThat(fragment.statusCode()).isEqualTo(200);
        assertThat(fragment.body()).doesNotContain("<html").contains("id=\"cells\"").contains("class=\"asof\"");
    }

    @Test
    void cellsPage_showsEnsemblesAndChroots_toAdminsOnly() throws Exception {
        start(TOKEN);
        backend.cells = Fixtures.twoCells("rolled back");

        String viewer = get("/console/cells").body();
        assertThat(viewer).doesNotContain("zkb1:2181").doesNotContain("/warden-b").doesNotContain("<th>Ensemble</th>")
                .contains("id=\"ensembles-hidden\"");

        String admin = get("/console/cells", login("jane")).body();
        assertThat(admin).contains("<th>Ensemble</th><th>Chroot</th>")
                .contains("<code class=\"mono\">zkb1:2181,zkb2:2181</code>").contains("<code class=\"mono\">/warden-b</code>")
                .doesNotContain("id=\"ensembles-hidden\"");
    }

    @Test
    void cellsPage_ofAOneCellGateway_saysItServesOneCell() throws Exception {
        start(TOKEN);
        String html = get("/console/cells").body();
        assertThat(html).contains("id=\"single-cell\"").contains("This gateway serves one cell")
                .contains("tr data-cell=\"default\" data-serving=\"yes\"").doesNotContain("NOT SERVING");
        assertThat(get("/console").body()).doesNotContain("cell-down").contains("id=\"cells-summary\"")
                .contains("one cell");
    }

    @Test
    void overview_warnsOfEachCellThatDoesNotServe_namingIt() throws Exception {
        start(TOKEN);
        backend.cells = Fixtures.twoCells("not connected to ZooKeeper at zkb1:2181,zkb2:2181");

        HttpResponse<String> r = get("/console");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("class=\"banner error cell-down\" role=\"alert\" data-cell=\"b\"")
                .contains("Cell <strong>b</strong> is").contains("<strong>NOT SERVING</strong>: not connected to ZooKeeper at zkb1:2181")
                .contains("<code class=\"mono\">pay</code>")
                .doesNotContain("data-cell=\"default\"")
                .contains("tr data-lock=\"payments/invoice-42\""); // the rest of the overview as usual
        assertThat(get("/console?fragment=1").body()).contains("cell-down");

        backend.cells = Fixtures.twoCells(null).stream()
                .map(c -> new io.warden.console.model.CellInfo(c.name(), c.zk(), c.chroot(), true, null, c.namespaces()))
                .toList();
        assertThat(get("/console").body()).doesNotContain("cell-down").contains("2 cells");
    }

    @Test
    void namespacePage_namesTheCellThatServesIt() throws Exception {
        start(TOKEN);
        backend.cells = Fixtures.twoCells("rolled back: its high-water mark is ahead");

        String pay = get("/console/ns/pay").body();
        assertThat(pay).contains("<p id=\"cell\" data-cell=\"b\">Served by cell <a class=\"mono\" href=\"/console/cells\">b</a>")
                .contains("NOT SERVING").contains("rolled back: its high-water mark is ahead")
                .contains("nothing in <code class=\"mono\">pay</code> is held") // the backend lists every cell's locks
                .doesNotContain("id=\"other-cell\"");

        String payments = get("/console/ns/payments").body();
        assertThat(payments).contains("<p id=\"cell\" data-cell=\"default\">").contains("serving")
                .doesNotContain("id=\"other-cell\"").contains("tr data-lock=\"payments/invoice-42\"");
    }

    @Test
    void aBackendThatListsNoCells_leavesThemOut_andItsCellsPageSaysSo() throws Exception {
        start(TOKEN);
        backend.cells = null;

        HttpResponse<String> cells = get("/console/cells");
        assertThat(cells.statusCode()).isEqualTo(503);
        assertHtml(cells);
        assertThat(cells.body()).contains("this gateway lists no cells");

        HttpResponse<String> overview = get("/console");
        assertThat(overview.statusCode()).isEqualTo(200);
        assertThat(overview.body()).doesNotContain("cells-summary").doesNotContain("cell-down");
        HttpResponse<String> ns = get("/console/ns/payments");
        assertThat(ns.statusCode()).isEqualTo(200);
        assertThat(ns.body()).doesNotContain("id=\"cell\"").contains("tr data-lock=\"payments/invoice-42\"");
    }
}
