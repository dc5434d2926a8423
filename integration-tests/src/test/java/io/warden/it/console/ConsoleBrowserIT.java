package io.warden.it.console;

import io.warden.it.support.Await;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.config.WardenConfig;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The admin console in a real browser (headless Debian Chromium) against a real gateway on a real ZooKeeper: what an
 * operator sees, live updates without reloads, the audited force-release, what a viewer may not do, escaping, the
 * stale banner and the phone layout.
 *
 * <p>Gateways run in-process on the real clock (the console shares a snapshot for a second on the gateway's ticker,
 * so a manual clock would freeze the pages). Each test has a gateway of its own on its own cell (a chroot of the one
 * ZooKeeper server), so no test sees another's locks. One browser serves all tests; cookies are cleared before each.
 *
 * <p>With {@code -Dwarden.screenshots=DIR} (an absolute directory) the pages of a populated cell are saved there as
 * PNGs, for docs/screenshots.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ConsoleBrowserIT {
    private static final String ADMIN_TOKEN = "browser-test-admin-token-0123456789";
    private static final long TTL_MS = 120_000;   // longer than the whole class: nothing expires by accident
    private static final long WAIT_MS = 120_000;  // queued acquires stay queued for the test's lifetime

    private static TestingServer zookeeper;
    private static Browser browser;

    private Gateway gateway;
    private Warden warden;
    private String base;
    private String cell;

    /** On a failure: the page as the browser showed it, beside the other IT logs, before the gateway stops. */
    @RegisterExtension
    static final AfterTestExecutionCallback KEEP_THE_PAGE_OF_A_FAILURE = context -> {
        if (context.getExecutionException().isEmpty() || browser == null) {
            return;
        }
        Path dir = Path.of(System.getProperty("warden.it.logs", "target/it-logs"), "ConsoleBrowserIT");
        String name = context.getRequiredTestMethod().getName();
        try {
            browser.screenshotOfPage(dir.resolve(name + ".png"), 3000);
            Files.writeString(dir.resolve(name + ".html"), "<!-- " + browser.currentUrl() + " -->\n" + browser.pageSource());
        } catch (RuntimeException e) {
            context.getExecutionException().get().addSuppressed(e);
        }
    };

    @BeforeAll
    static void startZooKeeperAndBrowser() throws Exception {
        System.setProperty("zookeeper.4lw.commands.whitelist", "*"); // the console's health probe asks 'srvr'
        zookeeper = new TestingServer(true);
        browser = Browser.start();
    }

    @AfterAll
    static void stopBrowserAndZooKeeper() throws Exception {
        try {
            if (browser != null) {
                browser.close();
            }
        } finally {
            if (zookeeper != null) {
                zookeeper.close();
            }
        }
    }

    @BeforeEach
    void startGateway(TestInfo test) {
        cell = "/console-" + test.getTestMethod().orElseThrow().getName().toLowerCase().replace('_', '-');
        gateway = startGateway(ADMIN_TOKEN);
        warden = gateway.warden();
        base = "http://127.0.0.1:" + gateway.httpPort();
        browser.clearCookies();
        browser.resize(1280, 900);
    }

    @AfterEach
    void stopGateway() {
        if (gateway != null) {
            gateway.close();
        }
    }

    private Gateway startGateway(String adminToken) {
        WardenConfig config = WardenConfig.defaults().toBuilder()
                .zkConnect(zookeeper.getConnectString()).chroot(cell).httpHost("127.0.0.1").httpPort(0)
                .consoleAdminToken(adminToken).build();
        return Gateway.start(config);
    }

    // ------------------------------------------------------------------ tests

    @Test
    void overview_showsNamespacesWithCounts_andTheHealthOfGatewayAndZooKeeper_withoutScriptErrors() {
        String a = session("billing-worker");
        String b = session("billing-retry");
        hold(a, "billing/invoice-7");
        hold(a, "billing/invoice-8");
        queue(b, "billing/invoice-7");
        browser.consoleErrors(); // only this page's messages count

        browser.open(base + "/console");

        assertThat(browser.driver().getTitle()).containsIgnoringCase("Warden");
        WebElement row = browser.await(By.cssSelector("tr[data-lock='billing/invoice-7']"));
        assertThat(row.getText()).contains("billing-worker");
        WebElement namespace = browser.await(By.cssSelector("#namespaces tr[data-namespace='billing']"));
        assertThat(namespace.findElements(By.tagName("td"))).extracting(WebElement::getText)
                .as("namespace, locks, holders, waiting, sessions").containsExactly("billing", "2", "2", "1", "2");
        namespace.findElement(By.cssSelector("a[href='/console/ns/billing']"));
        String page = text();
        assertThat(page).as("the gateway serving the page").contains(gateway.gatewayId());
        assertThat(page).as("the ZooKeeper server it probes").contains(zookeeper.getConnectString());
        assertThat(page.toLowerCase()).as("what the server says of itself").contains("standalone");
        assertThat(browser.await(By.id("stale-banner")).isDisplayed()).as("stale banner on a fresh page").isFalse();

        awaitOnePoll();
        assertThat(browser.consoleErrors()).as("errors in the browser's console").isEmpty();
    }

    @Test
    void newHold_appearsWithoutReload_andAQueuedRequestJoinsTheWaiters() {
        browser.open(base + "/console");
        browser.markDocument();
        String a = session("report-writer");
        long token = hold(a, "reports/daily");

        browser.await(By.cssSelector("tr[data-lock='reports/daily']"));
        assertThat(browser.sameDocument()).as("shown by a live update, not a reload").isTrue();

        browser.open(base + "/console/locks/reports/daily");
        WebElement holder = browser.await(By.cssSelector(row("holders", a, token)));
        assertThat(holder.getText()).contains("report-writer");
        assertThat(browser.all(By.cssSelector("#waiters tr[data-session]"))).isEmpty();
        browser.markDocument();
        String b = session("report-reader");
        String c = session("report-auditor");
        queue(b, "reports/daily");
        awaitQueue("reports/daily", 2);
        queue(c, "reports/daily");

        browser.until("both waiters, in queue order", d -> sessionsIn("waiters").equals(List.of(b, c)));
        assertThat(browser.sameDocument()).as("shown by a live update, not a reload").isTrue();
        assertThat(browser.await(By.cssSelector("#waiters tr[data-session='" + b + "']")).getText()).contains("report-reader");
        assertThat(sessionsIn("holders")).containsExactly(a);
    }

    @Test
    void forceRelease_byALoggedInAdmin_withAReason_promotesTheWaiter_andIsAudited() {
        String stuck = session("stuck-worker");
        String next = session("next-worker");
        long token = hold(stuck, "payments/invoice-42");
        CompletableFuture<AcquireResult> waiting = queue(next, "payments/invoice-42");
        awaitQueue("payments/invoice-42", 2);

        logIn("alice");
        browser.open(base + "/console/locks/payments/invoice-42");
        browser.await(By.cssSelector(row("waiters", next, null)));
        browser.await(By.cssSelector(row("holders", stuck, token) + " .force-release")).click();

        WebElement reason = browser.await(By.cssSelector("textarea[name='reason']"));
        reason.sendKeys("stuck since the 14:00 deploy");
        browser.await(By.id("confirm")).click();

        browser.until("the waiter promoted to holder", d -> sessionsIn("holders").equals(List.of(next)));
        assertThat(sessionsIn("waiters")).isEmpty();
        assertThat(browser.all(By.cssSelector("#holders tr[data-session='" + stuck + "']"))).isEmpty();
        assertThat(browser.await(By.id("flash")).getText()).as("the outcome, told to the admin").contains(String.valueOf(token));
        AcquireResult granted = waiting.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(granted.status()).isEqualTo(AcquireResult.Status.GRANTED);
        assertThat(granted.token()).isGreaterThan(token);
        assertThat(lockView("payments/invoice-42").holders()).extracting(h -> h.sessionId()).containsExactly(next);

        browser.open(base + "/console/audit");
        List<String> entry = browser.await(By.cssSelector("#audit tbody tr")).findElements(By.tagName("td")).stream()
                .map(WebElement::getText).toList();
        assertThat(entry).as("the audit entry: when, who, action, target, why, from, gateway, outcome").hasSize(8);
        assertThat(entry.get(1)).isEqualTo("alice");
        assertThat(entry.get(2)).isEqualTo("FORCE_RELEASE");
        assertThat(entry.get(3)).isEqualTo("payments/invoice-42 token " + token);
        assertThat(entry.get(4)).isEqualTo("stuck since the 14:00 deploy");
        assertThat(entry.get(7)).startsWith("done: released payments/invoice-42 token " + token);
    }

    @Test
    void viewer_seesNoForceRelease_andAPostWithoutLoginIsRefused_andTheHoldStays() throws Exception {
        String a = session("batch-owner");
        long token = hold(a, "batch/nightly");

        browser.open(base + "/console/locks/batch/nightly");
        browser.await(By.cssSelector(row("holders", a, token)));
        assertThat(browser.all(By.cssSelector(".force-release"))).as("admin controls shown to a viewer").isEmpty();

        // The form an admin would send: log in only to read it, then forget the login.
        logIn("carol");
        browser.open(base + "/console/locks/batch/nightly");
        browser.await(By.cssSelector(row("holders", a, token) + " .force-release")).click();
        WebElement form = browser.await(By.cssSelector("form:has(button#confirm)"));
        String action = form.getAttribute("action");
        Map<String, String> fields = new LinkedHashMap<>();
        for (WebElement input : form.findElements(By.cssSelector("input[name], textarea[name]"))) {
            fields.put(input.getAttribute("name"), input.getAttribute("value") == null ? "" : input.getAttribute("value"));
        }
        fields.put("reason", "no login, no CSRF token");
        browser.clearCookies();
        assertThat(action).endsWith("/console/actions/force-release");
        assertThat(fields).containsKeys("name", "token", "csrf", "reason");

        HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
        HttpResponse<String> withFormFields = post(http, action, fields);
        assertThat(withFormFields.statusCode()).as("POST with the form's fields but no login cookie: %s", withFormFields.body())
                .isEqualTo(403);
        Map<String, String> noCsrf = new LinkedHashMap<>(fields);
        noCsrf.remove("csrf");
        HttpResponse<String> plain = post(http, action, noCsrf);
        assertThat(plain.statusCode()).as("POST without login or CSRF token: %s", plain.body()).isEqualTo(403);
        String confirmUrl = action + "?name=batch/nightly&token=" + token;
        HttpResponse<String> confirm = http.send(HttpRequest.newBuilder(URI.create(base).resolve(confirmUrl))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(confirm.statusCode()).as("a viewer asking for the confirmation page").isEqualTo(303);
        assertThat(confirm.headers().firstValue("Location")).hasValueSatisfying(l -> assertThat(l).contains("/console/login"));

        assertThat(lockView("batch/nightly").holders()).extracting(h -> h.sessionId(), h -> h.token())
                .containsExactly(tuple(a, token));
        browser.open(base + "/console/locks/batch/nightly");
        browser.await(By.cssSelector(row("holders", a, token)));
        assertThat(browser.all(By.cssSelector(".force-release"))).isEmpty();
    }

    @Test
    void aClientIdThatLooksLikeMarkup_isShownAsText_andNeverRuns() throws Exception {
        String evil = "<script>alert(1)</script>";
        String a = session(evil);
        long token = hold(a, "escape/target");
        queue(session("<img src=x onerror=alert(2)>"), "escape/target");
        awaitQueue("escape/target", 2);

        for (String page : List.of("/console", "/console/ns/escape", "/console/sessions", "/console/locks/escape/target")) {
            browser.open(base + page);
            assertThat(browser.alertOpen()).as("a dialog opened on %s", page).isFalse();
            assertThat(text()).as("the client id as text on %s", page).contains(evil);
        }
        WebElement holder = browser.await(By.cssSelector(row("holders", a, token)));
        assertThat(holder.getText()).contains(evil);
        assertThat(browser.pageSource()).contains("&lt;script&gt;alert(1)&lt;/script&gt;");
        awaitOnePoll(); // and after a live update swapped the rows in
        assertThat(browser.alertOpen()).isFalse();
        assertThat(browser.all(By.cssSelector("#holders script, #waiters img"))).isEmpty();

        String raw = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/console/locks/escape/target"))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
        assertThat(raw).as("the HTML as served").contains("&lt;script&gt;alert(1)&lt;/script&gt;")
                .doesNotContain(evil).doesNotContain("<img src=x");
    }

    @Test
    void stoppedGateway_turnsTheStaleBannerOn_withinAFewPolls() {
        hold(session("lonely"), "stale/thing");
        browser.open(base + "/console/locks/stale/thing");
        WebElement banner = browser.await(By.id("stale-banner"));
        assertThat(banner.isDisplayed()).isFalse();
        awaitOnePoll();
        assertThat(banner.isDisplayed()).as("stale banner while the gateway answers").isFalse();

        gateway.close();

        browser.until("the stale banner", Duration.ofSeconds(15), d -> browser.await(By.id("stale-banner")).isDisplayed());
        assertThat(browser.await(By.id("stale-banner")).getText()).containsIgnoringCase("stale");
    }

    @Test
    void lockPage_atPhoneWidth_doesNotScrollTheWholePageSideways() {
        String a = session("mobile-holder-with-a-rather-long-client-id");
        long token = hold(a, "ops/a-lock-with-a-fairly-long-name-for-a-phone-screen");
        queue(session("mobile-waiter"), "ops/a-lock-with-a-fairly-long-name-for-a-phone-screen");
        awaitQueue("ops/a-lock-with-a-fairly-long-name-for-a-phone-screen", 2);

        browser.resize(375, 800);
        browser.open(base + "/console/locks/ops/a-lock-with-a-fairly-long-name-for-a-phone-screen");
        browser.await(By.cssSelector(row("holders", a, token)));
        browser.await(By.cssSelector("#waiters tr[data-session]"));
        assertThat(((Number) browser.js("return window.innerWidth")).intValue()).isLessThanOrEqualTo(400);

        // Either the page fits, or whatever is wider (the tables) scrolls inside a wrapper that fits.
        @SuppressWarnings("unchecked")
        List<String> overflowing = (List<String>) browser.js("""
                const vw = window.innerWidth;
                const out = [];
                if (document.body.scrollWidth > vw + 1) {
                  out.push('body scrollWidth ' + document.body.scrollWidth + ' > innerWidth ' + vw);
                }
                for (const t of document.querySelectorAll('table')) {
                  let scroller = null;
                  for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
                    const o = getComputedStyle(e).overflowX;
                    if (o === 'auto' || o === 'scroll') { scroller = e; break; }
                  }
                  const box = (scroller || t).getBoundingClientRect();
                  if (box.right > vw + 1 || box.left < -1) {
                    out.push((t.id || 'table') + (scroller ? ' wrapper' : '') + ' spans ' + box.left + '..' + box.right);
                  }
                }
                return out;""");
        assertThat(overflowing).as("wider than a %d px phone", 375).isEmpty();
    }

    /**
     * Two sessions each holding one lock and waiting for the other's: the wait-for page shows the cycle. A populated
     * cell also makes the screenshots for docs/screenshots when {@code warden.screenshots} is set.
     */
    @Test
    void waitForPage_showsADeadlockOfTwoSessions_andEveryPageRendersAPopulatedCell() {
        String left = session("reconciler-east");
        String right = session("reconciler-west");
        hold(left, "jobs/reconcile-east");
        hold(right, "jobs/reconcile-west");
        queue(left, "jobs/reconcile-west");
        queue(right, "jobs/reconcile-east");
        String billing = session("billing-worker-1");
        String billing2 = session("billing-worker-2");
        String auditor = session("ledger-auditor");
        long invoiceToken = hold(billing, "payments/invoice-42");
        hold(billing, "payments/invoice-43");
        hold(billing2, "payments/invoice-44");
        queue(billing2, "payments/invoice-42");
        awaitQueue("payments/invoice-42", 2);
        queue(auditor, "payments/invoice-42");
        shared(auditor, "payments/ledger");
        shared(session("ledger-reader"), "payments/ledger");
        hold(session("nightly-etl"), "reports/etl-2026-11-29");
        session("idle-dashboard");
        awaitQueue("payments/invoice-42", 3);
        awaitQueue("jobs/reconcile-east", 2);
        awaitQueue("jobs/reconcile-west", 2);

        browser.open(base + "/console/waits");
        WebElement deadlocks = browser.await(By.id("deadlocks"));
        browser.until("the cycle under #deadlocks", d -> {
            String t = browser.await(By.id("deadlocks")).getText();
            return t.contains("reconciler-east") && t.contains("reconciler-west");
        });
        assertThat(deadlocks.isDisplayed()).isTrue();
        screenshot("waits");

        browser.open(base + "/console");
        browser.await(By.cssSelector("tr[data-lock='payments/invoice-42']"));
        browser.await(By.cssSelector("a[href='/console/ns/payments']"));
        screenshot("overview");

        browser.open(base + "/console/ns/payments");
        for (String name : List.of("payments/invoice-42", "payments/invoice-43", "payments/invoice-44", "payments/ledger")) {
            browser.await(By.cssSelector("tr[data-lock='" + name + "']"));
        }
        assertThat(browser.all(By.cssSelector("tr[data-lock^='jobs/']"))).as("other namespaces' locks").isEmpty();
        screenshot("namespace");

        browser.open(base + "/console/locks/payments/invoice-42");
        browser.await(By.cssSelector(row("holders", billing, invoiceToken)));
        browser.until("both waiters", d -> sessionsIn("waiters").equals(List.of(billing2, auditor)));
        screenshot("lock");

        browser.open(base + "/console/sessions");
        for (String client : List.of("billing-worker-1", "ledger-auditor", "idle-dashboard", "reconciler-east")) {
            browser.until(client + " listed", d -> text().contains(client));
        }
        screenshot("sessions");
    }

    // ------------------------------------------------------------------ helpers

    private String session(String clientId) {
        return warden.openSession(clientId, TTL_MS, 0).orTimeout(10, TimeUnit.SECONDS).join().sessionId();
    }

    /** Takes the lock now (it must be free) and returns the fencing token. */
    private long hold(String session, String name) {
        AcquireResult r = warden.acquire(request(session, name, Mode.EXCLUSIVE, 0)).orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(r.status()).as("%s free for %s", name, session).isEqualTo(AcquireResult.Status.GRANTED);
        return r.token();
    }

    private long shared(String session, String name) {
        AcquireResult r = warden.acquire(request(session, name, Mode.SHARED, 0)).orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(r.status()).isEqualTo(AcquireResult.Status.GRANTED);
        return r.token();
    }

    /** Asks for the lock and leaves the request waiting; the future completes when it is granted. */
    private CompletableFuture<AcquireResult> queue(String session, String name) {
        return warden.acquire(request(session, name, Mode.EXCLUSIVE, WAIT_MS));
    }

    private static AcquireRequest request(String session, String name, Mode mode, long waitMs) {
        return new AcquireRequest(session, LockName.parse(name), mode, waitMs, UUID.randomUUID().toString(), OnTimeout.KEEP);
    }

    private LockView lockView(String name) {
        return warden.lock(LockName.parse(name)).orTimeout(10, TimeUnit.SECONDS).join();
    }

    /** Waits until the lock's queue (holders and waiters) has {@code size} entries, as a linearizable read sees it. */
    private void awaitQueue(String name, int size) {
        Await.until(name + " to have " + size + " queue entries", Duration.ofSeconds(10), Duration.ofMillis(20), () -> {
            LockView v = lockView(name);
            return v.holders().size() + v.waiters().size() >= size;
        }, () -> String.valueOf(lockView(name)));
    }

    private void logIn(String actor) {
        browser.open(base + "/console/login");
        browser.await(By.cssSelector("input[name='actor']")).sendKeys(actor);
        browser.await(By.cssSelector("input[name='token']")).sendKeys(ADMIN_TOKEN);
        browser.await(By.id("login")).click();
        browser.until("the login to go through", d -> !browser.currentUrl().endsWith("/console/login")
                || !browser.all(By.id("flash")).isEmpty());
        assertThat(browser.currentUrl()).as("still on the login page: %s", text()).doesNotEndWith("/console/login");
    }

    /** The CSS selector of a row of #holders or #waiters; {@code token} null matches any token. */
    private static String row(String table, String session, Long token) {
        return "#" + table + " tr[data-session='" + session + "']" + (token == null ? "" : "[data-token='" + token + "']");
    }

    private static List<String> sessionsIn(String table) {
        return browser.all(By.cssSelector("#" + table + " tr[data-session]")).stream()
                .map(e -> e.getAttribute("data-session")).toList();
    }

    private static String text() {
        return browser.await(By.tagName("body")).getText();
    }

    /** Lets at least one live refresh (every 2 s) happen: waits for the next htmx request to finish. */
    private static void awaitOnePoll() {
        browser.js("""
                window.__wardenPolls = 0;
                if (!window.__wardenPollHook) {
                  window.__wardenPollHook = true;
                  document.body.addEventListener('htmx:afterRequest', () => { window.__wardenPolls++; });
                }""");
        browser.until("a live refresh", Duration.ofSeconds(8),
                d -> ((Number) browser.js("return window.__wardenPolls")).intValue() > 0);
    }

    private HttpResponse<String> post(HttpClient http, String action, Map<String, String> fields) throws Exception {
        URI uri = URI.create(base).resolve(action);
        String body = fields.entrySet().stream()
                .map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void screenshot(String name) {
        String dir = System.getProperty("warden.screenshots", "");
        if (!dir.isBlank()) {
            browser.screenshotOfPage(Path.of(dir, name + ".png"), 1600);
        }
    }
}
