package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request quotas (with sessions capped per principal, one principal could still open
 * max-sessions-per-principal sessions with max-requests-per-session holds and waits each, and fill the cell with locks
 * and waiters for everyone): {@code max-requests-per-principal}. Real HTTP on a real ZooKeeper.
 */
class RequestQuotaTest {
    private static final String A = "a-token-0123456789abcdef";
    private static final String B = "b-token-0123456789abcdef";

    @TempDir
    Path dir;
    private WardenFixture fixture;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new WardenFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    private Path authFile() throws Exception {
        return io.warden.service.support.TestAuthFiles.lockers(dir, "a", A, "b", B);
    }

    private Gateway capped(int maxRequestsPerPrincipal) throws Exception {
        return fixture.gateway(fixture.config().toBuilder().authFile(authFile())
                .maxRequestsPerPrincipal(maxRequestsPerPrincipal).build());
    }

    private static String open(HttpTestClient as) {
        HttpTestClient.Reply r = as.postJson("/v1/sessions", "client_id", "quota", "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    /** An acquire that answers at once: GRANTED, or (the lock held) QUEUED with the request left in the queue. */
    private static HttpTestClient.Reply acquire(HttpTestClient as, String session, String name, String requestId) {
        return as.postJson("/v1/acquire", "session_id", session, "name", name, "request_id", requestId, "wait_ms", 0,
                "on_timeout", "KEEP");
    }

    private static JsonNode ok(HttpTestClient.Reply r, String status) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("status").asText()).as(r.toString()).isEqualTo(status);
        return r.json();
    }

    private static void refusedForThePrincipal(HttpTestClient.Reply r, String owner, int count) {
        assertThat(r.status()).as(r.toString()).isEqualTo(429);
        assertThat(r.json().get("code").asText()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(r.json().get("detail").asText()).contains(owner + " already has " + count + " holds and queued requests",
                "max-requests-per-principal");
    }

    /** Holds plus waits of the session, as ZooKeeper has them. */
    private static int requestsOf(HttpTestClient as, String session) {
        JsonNode v = as.get("/v1/sessions/" + session).json();
        return v.get("holds").size() + v.get("waiting").size();
    }

    @Test
    void onePrincipal_getsItsQuotaOfHoldsAndWaitsAcrossSessions_andNoMore_whileOthersStillCan() throws Exception {
        Gateway g = capped(5);
        HttpTestClient http = new HttpTestClient(g.httpPort(), OpenApiContract.load());
        HttpTestClient a = http.withToken(A);
        String s1 = open(a);
        String s2 = open(a);
        String s3 = open(a);
        long t1 = ok(acquire(a, s1, "quota/one", "r1"), "GRANTED").get("token").asLong();
        ok(acquire(a, s1, "quota/two", "r2"), "GRANTED");
        ok(acquire(a, s2, "quota/three", "r3"), "GRANTED");
        ok(acquire(a, s3, "quota/one", "r4"), "QUEUED"); // waits count as well as holds
        ok(acquire(a, s3, "quota/two", "r5"), "QUEUED");

        long before = fixture.lastZxid();
        HttpTestClient.Reply refused = acquire(a, s2, "quota/four", "r6");
        refusedForThePrincipal(refused, "principal a", 5);
        assertThat(fixture.lastZxid()).as("a refused acquire writes nothing").isEqualTo(before);
        assertThat(requestsOf(a, s1) + requestsOf(a, s2) + requestsOf(a, s3)).isEqualTo(5);
        refusedForThePrincipal(acquire(a, open(a), "quota/four", "r6"), "principal a", 5); // a new session does not help

        HttpTestClient b = http.withToken(B);
        String other = open(b);
        ok(acquire(b, other, "quota/four", "b1"), "GRANTED");
        ok(acquire(b, other, "quota/three", "b2"), "QUEUED");

        // A retry of an existing request (same request_id) still works at the limit, and writes nothing.
        before = fixture.lastZxid();
        ok(acquire(a, s3, "quota/one", "r4"), "QUEUED");
        ok(acquire(a, s1, "quota/two", "r2"), "GRANTED");
        assertThat(fixture.lastZxid()).isEqualTo(before);

        // A release gives its place back: s3's r4 now holds quota/one, and one more request fits.
        HttpTestClient.Reply released = a.postJson("/v1/release", "session_id", s1, "name", "quota/one", "token", t1);
        assertThat(released.json().get("released").asBoolean()).as(released.toString()).isTrue();
        ok(acquire(a, s2, "quota/five", "r7"), "GRANTED");
        refusedForThePrincipal(acquire(a, s2, "quota/six", "r8"), "principal a", 5);

        // So does a cancel of a queued request, and a closed session gives back all of its own.
        HttpTestClient.Reply cancelled = a.postJson("/v1/release", "session_id", s3, "name", "quota/two", "request_id", "r5");
        assertThat(cancelled.json().get("released").asBoolean()).as(cancelled.toString()).isTrue();
        ok(acquire(a, s2, "quota/six", "r8"), "GRANTED");
        refusedForThePrincipal(acquire(a, s2, "quota/seven", "r9"), "principal a", 5);
        assertThat(a.delete("/v1/sessions/" + s1).status()).isEqualTo(200); // it had r2
        ok(acquire(a, s2, "quota/seven", "r9"), "GRANTED");
    }

    @Test
    void anExpiredSession_givesItsPlacesBack() throws Exception {
        Gateway g = capped(2);
        HttpTestClient a = new HttpTestClient(g.httpPort()).withToken(A);
        HttpTestClient.Reply opened = a.postJson("/v1/sessions", "client_id", "short", "ttl_ms", 2_000);
        String shortLived = opened.json().get("session_id").asText();
        String longLived = open(a);
        ok(acquire(a, shortLived, "expiry/one", "e1"), "GRANTED");
        ok(acquire(a, shortLived, "expiry/two", "e2"), "GRANTED");
        refusedForThePrincipal(acquire(a, longLived, "expiry/three", "e3"), "principal a", 2);

        fixture.clock.advance(Duration.ofSeconds(3));
        WardenFixture.await("the short session expired", () -> a.get("/v1/sessions/" + shortLived).status() == 404);
        ok(acquire(a, longLived, "expiry/three", "e3"), "GRANTED");
    }

    @Test
    void requestsEndedThroughAnotherGateway_areCountedAgainFromZooKeeper_beforeARefusal() throws Exception {
        Gateway first = capped(2);
        Gateway second = fixture.gateway(fixture.config().toBuilder().authFile(authFile()).build());
        HttpTestClient atFirst = new HttpTestClient(first.httpPort()).withToken(A);
        HttpTestClient atSecond = new HttpTestClient(second.httpPort()).withToken(A);
        String s = open(atFirst);
        long t1 = ok(acquire(atFirst, s, "elsewhere/one", "x1"), "GRANTED").get("token").asLong();
        ok(acquire(atFirst, s, "elsewhere/two", "x2"), "GRANTED");

        // Released through the second gateway: the first does not hear of it, and counts it again before refusing.
        HttpTestClient.Reply r = atSecond.postJson("/v1/release", "session_id", s, "name", "elsewhere/one", "token", t1);
        assertThat(r.json().get("released").asBoolean()).as(r.toString()).isTrue();
        ok(acquire(atFirst, s, "elsewhere/three", "x3"), "GRANTED");
        refusedForThePrincipal(acquire(atFirst, s, "elsewhere/four", "x4"), "principal a", 2);
        // The quota is per gateway: the second one has counted nothing of principal a's.
        ok(acquire(atSecond, s, "elsewhere/four", "x4"), "GRANTED");
    }

    @Test
    void concurrentAcquires_neverTakeAPrincipalPastItsQuota() throws Exception {
        Gateway g = capped(10);
        HttpTestClient a = new HttpTestClient(g.httpPort()).withToken(A);
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            sessions.add(open(a));
        }
        List<CompletableFuture<HttpTestClient.Reply>> calls = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String body = "{\"session_id\":\"" + sessions.get(i % 4) + "\",\"name\":\"race/n" + i
                    + "\",\"request_id\":\"c" + i + "\",\"wait_ms\":0,\"on_timeout\":\"KEEP\"}";
            calls.add(a.postAsync("/v1/acquire", body));
        }
        List<HttpTestClient.Reply> replies = calls.stream().map(CompletableFuture::join).toList();
        assertThat(replies.stream().filter(r -> r.status() == 200).count()).as(replies.toString()).isEqualTo(10);
        assertThat(replies.stream().filter(r -> r.status() == 429).count()).as(replies.toString()).isEqualTo(30);
        assertThat(sessions.stream().mapToInt(s -> requestsOf(a, s)).sum()).as("in ZooKeeper").isEqualTo(10);
    }

    @Test
    void inOpenMode_theQuotaIsPerAddressThatOpenedTheSession() throws Exception {
        Gateway g = fixture.gateway(fixture.config().toBuilder().httpHost("0.0.0.0").maxRequestsPerPrincipal(2).build());
        HttpTestClient http = new HttpTestClient(g.httpPort());
        String fromOne = openFrom("127.0.0.1", g.httpPort());
        String alsoFromOne = openFrom("127.0.0.1", g.httpPort());
        String fromTwo = openFrom("127.0.0.2", g.httpPort());
        ok(acquire(http, fromOne, "open/one", "o1"), "GRANTED");
        ok(acquire(http, alsoFromOne, "open/two", "o2"), "GRANTED");
        long before = fixture.lastZxid();
        refusedForThePrincipal(acquire(http, alsoFromOne, "open/three", "o3"), "address 127.0.0.1", 2);
        assertThat(fixture.lastZxid()).isEqualTo(before);
        // The acquires all come from 127.0.0.1; they count against the address that opened their session.
        ok(acquire(http, fromTwo, "open/three", "o3"), "GRANTED");
        ok(acquire(http, fromTwo, "open/four", "o4"), "GRANTED");
        refusedForThePrincipal(acquire(http, fromTwo, "open/five", "o5"), "address 127.0.0.2", 2);
    }

    /** {@code POST /v1/sessions} on a socket bound to {@code source}; the new session's id. */
    private static String openFrom(String source, int port) throws Exception {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.setSoTimeout(10_000);
            byte[] body = "{\"client_id\":\"quota\",\"ttl_ms\":60000}".getBytes(StandardCharsets.UTF_8);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            InputStream in = s.getInputStream();
            String reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(reply).startsWith("HTTP/1.1 201");
            String json = reply.substring(reply.indexOf("\r\n\r\n") + 4);
            return HttpTestClient.MAPPER.readTree(json).get("session_id").asText();
        }
    }
}
