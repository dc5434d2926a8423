package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.auth.AuthFile;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Who may do what (contract §6), over real HTTP on a real ZooKeeper: a gateway with an auth file of five
 * principals. Each test names the attack it refuses: no or unknown credentials, another principal's session used by
 * someone who knows its id and a token of it, locks outside one's grants, session ids handed out by listings.
 */
class AuthTest {
    static final String BILLING = "billing-token-0123456789";
    static final String OTHER = "other-token-0123456789";
    static final String READER = "reader-token-0123456789";
    static final String SRE = "sre-token-0123456789";
    static final String PAYMENTS_ADMIN = "payments-admin-token-0123";
    static final String LATE = "late-token-0123456789";

    private static final AtomicInteger NAMES = new AtomicInteger();

    @TempDir
    static Path dir;
    private static Path authFile;
    private static WardenFixture fixture;
    private static Gateway gateway;
    private static HttpTestClient anonymous;
    private static HttpTestClient billing;
    private static HttpTestClient other;
    private static HttpTestClient reader;
    private static HttpTestClient sre;
    private static HttpTestClient paymentsAdmin;
    private static ListAppender<ILoggingEvent> audit;

    static String principals(String extra) {
        return "principals:\n"
                + entry("billing", BILLING, "[{namespace: payments, role: lock}, {namespace: builds, role: lock}, {namespace: \"*\", role: read}]")
                + entry("other", OTHER, "[{namespace: payments, role: lock}]")
                + entry("reader", READER, "[{namespace: \"*\", role: read}]")
                + entry("sre", SRE, "[{namespace: \"*\", role: admin}]")
                + entry("payments-admin", PAYMENTS_ADMIN, "[{namespace: payments, role: admin}]")
                + extra;
    }

    static String entry(String name, String token, String grants) {
        return "  - name: " + name + "\n    token_sha256: " + AuthFile.sha256(token) + "\n    grants: " + grants + "\n";
    }

    @BeforeAll
    static void start() throws Exception {
        authFile = dir.resolve("auth.yaml");
        Files.writeString(authFile, principals(""));
        fixture = new WardenFixture();
        gateway = fixture.gateway(fixture.config().toBuilder().authFile(authFile).build());
        anonymous = new HttpTestClient(gateway.httpPort(), OpenApiContract.load());
        billing = anonymous.withToken(BILLING);
        other = anonymous.withToken(OTHER);
        reader = anonymous.withToken(READER);
        sre = anonymous.withToken(SRE);
        paymentsAdmin = anonymous.withToken(PAYMENTS_ADMIN);
        audit = new ListAppender<>();
        audit.start();
        ((Logger) LoggerFactory.getLogger("io.warden.audit")).addAppender(audit);
    }

    @AfterAll
    static void stop() throws Exception {
        ((Logger) LoggerFactory.getLogger("io.warden.audit")).detachAppender(audit);
        if (fixture != null) {
            fixture.close();
        }
    }

    private static String fresh(String namespace) {
        return namespace + "/auth-" + NAMES.incrementAndGet();
    }

    private static String open(HttpTestClient as, String clientId) {
        HttpTestClient.Reply r = as.postJson("/v1/sessions", "client_id", clientId, "ttl_ms", 30_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static long take(HttpTestClient as, String session, String name) {
        HttpTestClient.Reply r = as.postJson("/v1/acquire", "session_id", session, "name", name);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("status").asText()).isEqualTo("GRANTED");
        return r.json().get("token").asLong();
    }

    private static void assertProblem(HttpTestClient.Reply r, int status, String code) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.isProblem()).as(r.toString()).isTrue();
        assertThat(r.json().get("code").asText()).as(r.toString()).isEqualTo(code);
    }

    private static JsonNode holders(HttpTestClient as, String name) {
        HttpTestClient.Reply r = as.get("/v1/locks/" + name);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json().get("holders");
    }

    @Test
    void everyCall_withoutCredentials_is401_withAProblemDocument_butHealthStaysOpen() {
        String someSession = "0123456789abcdef0123456789abcdef";
        List<HttpTestClient.Reply> replies = List.of(
                anonymous.postJson("/v1/sessions", "client_id", "x"),
                anonymous.get("/v1/sessions/" + someSession),
                anonymous.post("/v1/sessions/" + someSession + "/keepalive", "{}"),
                anonymous.delete("/v1/sessions/" + someSession),
                anonymous.postJson("/v1/acquire", "session_id", someSession, "name", "payments/a"),
                anonymous.postJson("/v1/release", "session_id", someSession, "name", "payments/a", "token", 1),
                anonymous.get("/v1/locks/payments/a"),
                anonymous.get("/v1/locks"),
                anonymous.get("/v1/check?name=payments/a&token=1"),
                anonymous.get("/v1/namespaces"),
                anonymous.get("/v1/watch?name=payments/a"),
                anonymous.postJson("/lock/acquire", "resource", "r", "client_id", "x", "ttl", 5000),
                anonymous.postJson("/lock/release", "resource", "r", "lease_id", someSession),
                anonymous.postJson("/lock/renew", "lease_id", someSession, "ttl", 5000));
        for (HttpTestClient.Reply r : replies) {
            assertProblem(r, 401, "UNAUTHENTICATED");
        }
        assertThat(anonymous.get("/health/live").status()).isEqualTo(200);
        assertThat(anonymous.get("/health/ready").status()).isEqualTo(200);
        assertThat(anonymous.get("/metrics").status()).isEqualTo(200);
    }

    @Test
    void anUnknownToken_orAHeaderThatIsNotBearer_is401() {
        assertProblem(anonymous.withToken("not-a-token-of-anyone").get("/v1/namespaces"), 401, "UNAUTHENTICATED");
        assertProblem(anonymous.withAuthorization("Basic YmlsbGluZzp4").get("/v1/namespaces"), 401, "UNAUTHENTICATED");
        assertProblem(anonymous.withAuthorization("Bearer ").get("/v1/namespaces"), 401, "UNAUTHENTICATED");
        assertThat(billing.get("/v1/namespaces").status()).isEqualTo(200);
    }

    @Test
    void anotherPrincipalsSession_knowingItsIdAndToken_cannotBeKeptAliveReleasedClosedOrUsed() throws Exception {
        String name = fresh("payments");
        String session = open(billing, "billing-app");
        long token = take(billing, session, name);
        long zxid = fixture.curator.checkExists().forPath("/").getPzxid();

        assertProblem(other.post("/v1/sessions/" + session + "/keepalive", "{}"), 403, "PERMISSION_DENIED");
        assertProblem(other.postJson("/v1/release", "session_id", session, "name", name, "token", token), 403, "PERMISSION_DENIED");
        assertProblem(other.postJson("/v1/release", "session_id", session, "name", name, "request_id", "r1"), 403, "PERMISSION_DENIED");
        assertProblem(other.delete("/v1/sessions/" + session), 403, "PERMISSION_DENIED");
        assertProblem(other.get("/v1/sessions/" + session), 403, "PERMISSION_DENIED");
        assertProblem(other.postJson("/v1/acquire", "session_id", session, "name", fresh("payments")), 403, "PERMISSION_DENIED");
        assertProblem(other.postJson("/lock/renew", "lease_id", session, "ttl", 5000), 403, "PERMISSION_DENIED");
        assertProblem(reader.delete("/v1/sessions/" + session), 403, "PERMISSION_DENIED");
        HttpTestClient.Reply denied = other.delete("/v1/sessions/" + session);
        assertThat(denied.json().get("detail").asText()).contains("principal other", "belongs to principal billing");

        // Nothing changed: the hold is billing's, and its owner still uses the session.
        assertThat(fixture.curator.checkExists().forPath("/").getPzxid()).isEqualTo(zxid);
        assertThat(holders(billing, name).get(0).get("token").asLong()).isEqualTo(token);
        assertThat(billing.post("/v1/sessions/" + session + "/keepalive", "{}").status()).isEqualTo(200);
        HttpTestClient.Reply released = billing.postJson("/v1/release", "session_id", session, "name", name, "token", token);
        assertThat(released.json().get("released").asBoolean()).isTrue();
    }

    @Test
    void acquiringOutsideOnesGrants_is403_namingTheNamespaceAndRole() {
        String session = open(other, "other-app");
        HttpTestClient.Reply r = other.postJson("/v1/acquire", "session_id", session, "name", fresh("builds"));
        assertProblem(r, 403, "PERMISSION_DENIED");
        assertThat(r.json().get("detail").asText()).contains("needs role lock in namespace builds");
        assertProblem(reader.postJson("/v1/sessions", "client_id", "reader-app"), 403, "PERMISSION_DENIED");
        assertProblem(other.get("/v1/locks/builds/x"), 403, "PERMISSION_DENIED");
        assertProblem(other.get("/v1/check?name=builds/x&token=1"), 403, "PERMISSION_DENIED");
        assertProblem(other.get("/v1/watch?prefix=builds"), 403, "PERMISSION_DENIED");
        assertProblem(other.postJson("/lock/acquire", "resource", "r", "client_id", "x", "ttl", 5000), 403, "PERMISSION_DENIED");
    }

    @Test
    void aReadersListing_showsOtherPrincipalsHoldersByPrincipalAndClientId_neverBySessionId() {
        String name = fresh("payments");
        String session = open(billing, "billing-app");
        take(billing, session, name);
        String waiter = open(other, "other-app");
        HttpTestClient.Reply queued = other.postJson("/v1/acquire", "session_id", waiter, "name", name, "request_id", "w1",
                "on_timeout", "KEEP", "wait_ms", 0);
        assertThat(queued.json().get("status").asText()).isEqualTo("QUEUED");
        // The waiter's own acquire reply shows the holder without its session id.
        assertThat(queued.json().get("holders").get(0).has("session_id")).isFalse();
        assertThat(queued.json().get("holders").get(0).get("principal").asText()).isEqualTo("billing");

        JsonNode seenByReader = reader.get("/v1/locks/" + name).json();
        assertThat(seenByReader.toString()).doesNotContain(session).doesNotContain(waiter);
        assertThat(seenByReader.get("holders").get(0).get("principal").asText()).isEqualTo("billing");
        assertThat(seenByReader.get("holders").get(0).get("client_id").asText()).isEqualTo("billing-app");
        assertThat(seenByReader.get("waiters").get(0).get("principal").asText()).isEqualTo("other");
        assertThat(seenByReader.get("waiters").get(0).has("request_id")).isFalse();

        JsonNode seenByOwner = billing.get("/v1/locks/" + name).json();
        assertThat(seenByOwner.get("holders").get(0).get("session_id").asText()).isEqualTo(session);
        assertThat(seenByOwner.get("waiters").get(0).has("session_id")).isFalse();
        JsonNode seenByAdmin = paymentsAdmin.get("/v1/locks/" + name).json();
        assertThat(seenByAdmin.get("holders").get(0).get("session_id").asText()).isEqualTo(session);
        assertThat(seenByAdmin.get("waiters").get(0).get("session_id").asText()).isEqualTo(waiter);
    }

    @Test
    void anAdminForceRelease_works_andIsAudited() {
        String name = fresh("payments");
        String session = open(billing, "billing-app");
        long token = take(billing, session, name);
        audit.list.clear();

        HttpTestClient.Reply r = sre.postJson("/v1/release", "session_id", session, "name", name, "token", token);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("released").asBoolean()).isTrue();
        assertThat(holders(billing, name)).isEmpty();
        assertThat(audit.list).anySatisfy(e -> assertThat(e.getFormattedMessage())
                .contains("admin action", "principal=sre", "release " + name, session, "principal billing"));
    }

    @Test
    void anAdminOfOneNamespace_mayActOnASessionOnlyWhileItTouchesNoOtherNamespace() {
        String session = open(billing, "billing-app");
        take(billing, session, fresh("payments"));
        assertThat(paymentsAdmin.post("/v1/sessions/" + session + "/keepalive", "{}").status()).isEqualTo(200);
        take(billing, session, fresh("builds"));
        HttpTestClient.Reply r = paymentsAdmin.delete("/v1/sessions/" + session);
        assertProblem(r, 403, "PERMISSION_DENIED");
        assertThat(r.json().get("detail").asText()).contains("touches namespace builds");
        assertThat(sre.delete("/v1/sessions/" + session).status()).isEqualTo(200);
    }

    @Test
    void listingDeadlocks_needsReadOnEveryNamespace_forACycleMaySpanThem() {
        assertProblem(anonymous.get("/v1/deadlocks"), 401, "UNAUTHENTICATED");
        assertProblem(other.get("/v1/deadlocks"), 403, "PERMISSION_DENIED"); // lock on payments only
        for (HttpTestClient allowed : List.of(reader, billing, sre)) {
            HttpTestClient.Reply r = allowed.get("/v1/deadlocks");
            assertThat(r.status()).as(r.toString()).isEqualTo(200);
            assertThat(r.json().get("deadlocks").isArray()).isTrue();
        }
    }

    @Test
    void listingsOfNamespaces_andLocks_showOnlyWhatTheCallerMayRead() {
        String session = open(billing, "billing-app");
        take(billing, session, fresh("builds"));
        take(billing, session, fresh("payments"));
        JsonNode seen = other.get("/v1/namespaces").json().get("namespaces");
        assertThat(seen).isNotEmpty().allSatisfy(n -> assertThat(n.get("namespace").asText()).isEqualTo("payments"));
        JsonNode locks = other.get("/v1/locks").json().get("locks");
        assertThat(locks).isNotEmpty().allSatisfy(l -> assertThat(l.get("name").asText()).startsWith("payments/"));
        assertThat(billing.get("/v1/namespaces").json().get("namespaces").toString()).contains("builds", "payments");
    }

    @Test
    void aWebSocketKeepalive_ofAnotherPrincipalsSession_isClosed4403_andWithoutCredentials4401() {
        String session = open(billing, "billing-app");
        String path = "/v1/sessions/" + session + "/keepalive";
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), path, OTHER)) {
            assertThat(ws.awaitClose().code()).isEqualTo(KeepaliveSockets.CLOSE_PERMISSION_DENIED);
        }
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), path)) {
            assertThat(ws.awaitClose().code()).isEqualTo(KeepaliveSockets.CLOSE_UNAUTHENTICATED);
        }
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), path, BILLING)) {
            ws.send("hb");
            assertThat(ws.nextFrame()).contains("ttl_ms_remaining");
        }
    }

    @Test
    void aReadersWatch_carriesNoSessionIds_andAnotherPrincipalsSessionWatchIsRefused() throws Exception {
        String name = fresh("payments");
        String session = open(billing, "billing-app");
        assertProblem(other.get("/v1/watch?session_id=" + session), 403, "PERMISSION_DENIED");
        try (SseTestClient watch = SseTestClient.open(gateway.httpPort(), "?name=" + name, bearer(READER));
             SseTestClient own = SseTestClient.open(gateway.httpPort(), "?session_id=" + session, bearer(BILLING))) {
            assertThat(watch.status()).isEqualTo(200);
            assertThat(own.status()).isEqualTo(200);
            take(billing, session, name);
            JsonNode event = next(watch, "GRANTED");
            assertThat(event.get("client_id").asText()).isEqualTo("billing-app");
            assertThat(event.has("session_id")).isFalse();
            assertThat(next(own, "GRANTED").get("session_id").asText()).isEqualTo(session);
        }
    }

    @Test
    void aChangedAuthFile_takesEffectWithoutRestart_andABadOneIsRefusedKeepingTheLastGood() throws Exception {
        HttpTestClient late = anonymous.withToken(LATE);
        assertProblem(late.get("/v1/namespaces"), 401, "UNAUTHENTICATED");
        replace(principals(entry("late", LATE, "[{namespace: payments, role: read}]")));
        WardenFixture.await("the new principal is let in", Duration.ofSeconds(10),
                () -> late.get("/v1/namespaces").status() == 200);

        replace(principals(entry("late", LATE, "[{namespace: payments, role: reed}]")));
        assertThat(gateway.reloadAuthFile()).isFalse(); // as SIGHUP does; the poller refuses it too
        assertThat(late.get("/v1/namespaces").status()).isEqualTo(200);

        replace(principals(""));
        assertThat(gateway.reloadAuthFile()).isTrue();
        assertProblem(late.get("/v1/namespaces"), 401, "UNAUTHENTICATED");
    }

    private static java.util.Map<String, String> bearer(String token) {
        return java.util.Map.of("Authorization", "Bearer " + token);
    }

    private static JsonNode next(SseTestClient sse, String type) {
        while (true) {
            SseTestClient.Event e = sse.next();
            if (type.equals(e.type())) {
                return e.data();
            }
        }
    }

    private static void replace(String text) throws Exception {
        Path tmp = dir.resolve("auth.yaml.tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, authFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
