package io.warden.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.javalin.Javalin;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The console with an auth file: every page needs a login, the login is the bearer token of a principal
 * that is admin of every namespace (whose name then stands in the audit log), the admin token is no login any more,
 * and without an auth file a banner says the gateway is in open mode.
 */
class ConsolePrincipalsTest {
    static final String ADMIN_TOKEN = "0123456789abcdef-admin";
    static final Map<String, ConsolePrincipals.Principal> PRINCIPALS = Map.of(
            "sre-token", new ConsolePrincipals.Principal("sre", true),
            "app-token", new ConsolePrincipals.Principal("billing", false));

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
    private Javalin app;

    private void start(ConsolePrincipals principals) {
        ConsoleSettings settings = new ConsoleSettings(ADMIN_TOKEN, Duration.ofSeconds(2), Duration.ofHours(8), principals);
        WardenConsole console = new WardenConsole(new FakeBackend(), settings, Clock.systemUTC());
        app = Fixtures.serve(console);
    }

    @AfterEach
    void stop() {
        if (app != null) {
            app.stop();
        }
    }

    private HttpResponse<String> get(String path, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + path));
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> login(String token) throws Exception {
        String form = "actor=ignored&token=" + URLEncoder.encode(token, StandardCharsets.UTF_8) + "&next=%2Fconsole%2Fsessions";
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + "/console/login"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void withPrincipals_everyPageNeedsTheLoginOfAnAdminOfEveryNamespace() throws Exception {
        start(token -> Optional.ofNullable(PRINCIPALS.get(token)));
        HttpResponse<String> anonymous = get("/console/sessions", null);
        assertThat(anonymous.statusCode()).isEqualTo(303);
        assertThat(anonymous.headers().firstValue("Location").orElse("")).startsWith("/console/login?next=");
        assertThat(get("/console/sessions?fragment=1", null).statusCode()).isEqualTo(401);
        assertThat(get("/console/login", null).statusCode()).isEqualTo(200);
        assertThat(get("/console/login", null).body()).contains("Bearer token").doesNotContain("Open mode");

        assertThat(login(ADMIN_TOKEN).statusCode()).as("the admin token is no login with principals").isEqualTo(401);
        HttpResponse<String> notAdmin = login("app-token");
        assertThat(notAdmin.statusCode()).isEqualTo(403);
        assertThat(notAdmin.body()).contains("principal billing may not use the console");

        HttpResponse<String> ok = login("sre-token");
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(303);
        assertThat(ok.headers().firstValue("Location")).hasValue("/console/sessions");
        String cookie = ok.headers().firstValue("Set-Cookie").orElseThrow().split(";")[0];
        HttpResponse<String> page = get("/console/sessions", cookie);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("sre").doesNotContain("open-mode-banner");
    }

    @Test
    void withoutAnAuthFile_pagesAreOpen_andABannerSaysSo() throws Exception {
        start(null);
        HttpResponse<String> page = get("/console/sessions", null);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("open-mode-banner", "Open mode");
    }
}
