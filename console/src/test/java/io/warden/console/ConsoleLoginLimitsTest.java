package io.warden.console;

import static io.warden.console.Fixtures.NOW;
import static org.assertj.core.api.Assertions.assertThat;

import io.javalin.Javalin;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The login form took 818 guesses a second, and {@code next=} could lead out of {@code /console}.
 * Now failures are limited per client address and in all ({@link LoginThrottle}), and {@code next} must be a path under
 * {@code /console}.
 */
class ConsoleLoginLimitsTest {
    static final String TOKEN = "0123456789abcdef-admin";

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
    private final MutableClock clock = new MutableClock();
    private Javalin app;

    static final class MutableClock extends Clock {
        private volatile Instant now = NOW;
        /** The monotonic clock beside it: moved by {@link #advance}, not by a {@link #step} of the wall clock. */
        private volatile long nanos = 5_000_000_000L;

        void advance(Duration d) {
            now = now.plus(d);
            nanos += d.toNanos();
        }

        /** The wall clock is set (NTP, an operator): time does not pass. */
        void step(Duration d) {
            now = now.plus(d);
        }

        long nanos() {
            return nanos;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private void start() {
        ConsoleSettings settings = new ConsoleSettings(TOKEN, Duration.ofSeconds(2), Duration.ofHours(8));
        WardenConsole console = new WardenConsole(new FakeBackend(), settings, clock, clock::nanos);
        app = Fixtures.serve(console);
    }

    @AfterEach
    void stop() {
        if (app != null) {
            app.stop();
        }
    }

    private static String form(String actor, String token, String next) {
        return "actor=" + URLEncoder.encode(actor, StandardCharsets.UTF_8) + "&token=" + URLEncoder.encode(token, StandardCharsets.UTF_8)
                + (next == null ? "" : "&next=" + URLEncoder.encode(next, StandardCharsets.UTF_8));
    }

    private HttpResponse<String> login(String token) throws Exception {
        return login(token, null);
    }

    private HttpResponse<String> login(String token, String next) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + "/console/login"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form("jane", token, next))).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A login from another loopback address (java.net.http cannot choose its source address): the status line. */
    private String loginFrom(String source, String token) throws IOException {
        byte[] body = form("joe", token, null).getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket(InetAddress.getByName("127.0.0.1"), app.port(), InetAddress.getByName(source), 0)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("POST /console/login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().write(body);
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().findFirst().orElse("");
        }
    }

    @Test
    void fiveWrongTokens_fromOneAddress_thenEvenTheRightOneIs429_untilAMinutePassed() throws Exception {
        start();
        for (int i = 1; i <= LoginThrottle.PER_ADDRESS; i++) {
            assertThat(login("wrong-token-" + i).statusCode()).as("failure %d", i).isEqualTo(401);
        }
        HttpResponse<String> limited = login(TOKEN);
        assertThat(limited.statusCode()).as(limited.body()).isEqualTo(429);
        assertThat(limited.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(limited.headers().firstValue("Set-Cookie")).isEmpty();
        assertThat(limited.body()).contains("too many failed logins");

        // another address is not limited by this one's failures
        assertThat(loginFrom("127.0.0.2", TOKEN)).startsWith("HTTP/1.1 303");

        clock.advance(Duration.ofSeconds(30));
        HttpResponse<String> later = login(TOKEN);
        assertThat(later.statusCode()).isEqualTo(429);
        assertThat(later.headers().firstValue("Retry-After")).hasValue("30");
        clock.advance(Duration.ofSeconds(31));
        assertThat(login(TOKEN).statusCode()).as("a minute after the first failure").isEqualTo(303);
    }

    @Test
    void wallClockSteps_neitherKeepFailuresCounting_norClearThemEarly() throws Exception {
        start();
        for (int i = 1; i <= LoginThrottle.PER_ADDRESS; i++) {
            assertThat(login("wrong").statusCode()).isEqualTo(401);
        }
        clock.step(Duration.ofHours(1));
        assertThat(login(TOKEN).statusCode()).as("the wall clock set an hour ahead: still limited").isEqualTo(429);
        clock.step(Duration.ofHours(-2));
        clock.advance(Duration.ofSeconds(61));
        assertThat(login(TOKEN).statusCode()).as("a minute passed, the wall clock set back an hour").isEqualTo(303);
    }

    @Test
    void aSuccess_clearsTheAddressesFailures() throws Exception {
        start();
        for (int i = 1; i < LoginThrottle.PER_ADDRESS; i++) {
            assertThat(login("wrong").statusCode()).isEqualTo(401);
        }
        assertThat(login(TOKEN).statusCode()).isEqualTo(303);
        for (int i = 1; i <= LoginThrottle.PER_ADDRESS; i++) {
            assertThat(login("wrong").statusCode()).as("failure %d after the success", i).isEqualTo(401);
        }
        assertThat(login(TOKEN).statusCode()).isEqualTo(429);
    }

    @Test
    void failuresFromManyAddresses_hitTheGlobalLimit() {
        LoginThrottle throttle = new LoginThrottle(5, 20, Duration.ofMinutes(1));
        long t = -3_000_000_000L; // nanoTime values may be negative
        for (int i = 0; i < 20; i++) {
            String address = "10.0.0." + i;
            assertThat(throttle.retryAfter(address, t)).as("address %d", i).isEmpty();
            throttle.failed(address, t);
        }
        assertThat(throttle.retryAfter("10.0.1.1", t)).as("a fresh address, once 20 failed in a minute").isPresent();
        assertThat(throttle.retryAfter("10.0.1.1", t + Duration.ofSeconds(61).toNanos())).isEmpty();
        assertThat(throttle.addresses(t + Duration.ofSeconds(61).toNanos())).as("nothing kept past the window").isZero();
    }

    @ParameterizedTest(name = "next={0}")
    @ValueSource(strings = {"/console/../v1/locks", "/console/..", "/console/./../evil", "/console/%2e%2e/v1",
            "/console/.%2E/x", "/console/a/%2E%2e/%2e%2e/x", "/console/..;/x", "/console/%2f%2fevil.example",
            "/console/%5cevil", "https://evil.example/console", "//evil.example/console", "/console@evil.example"})
    void next_outsideTheConsole_isIgnored(String next) throws Exception {
        start();
        HttpResponse<String> r = login(TOKEN, next);
        assertThat(r.statusCode()).isEqualTo(303);
        assertThat(r.headers().firstValue("Location")).as(next).hasValue("/console");
    }

    @ParameterizedTest(name = "next={0}")
    @ValueSource(strings = {"/console", "/console/locks/payments/invoice-42", "/console/sessions?client=a", "/console/go?q=a.b"})
    void next_underTheConsole_isFollowed(String next) throws Exception {
        start();
        HttpResponse<String> r = login(TOKEN, next);
        assertThat(r.headers().firstValue("Location")).hasValue(next);
    }
}
