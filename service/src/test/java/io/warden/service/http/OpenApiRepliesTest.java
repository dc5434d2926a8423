package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real replies of a real gateway (on a real ZooKeeper), success and error, for every call of the API, each validated
 * against the OpenAPI document's schema for its route and status: the client here checks every reply it sees
 * ({@link HttpTestClient} with an {@link OpenApiContract}), and the tests check stream frames (SSE events, WebSocket
 * keepalive frames) against the schemas the document names for them.
 */
class OpenApiRepliesTest {
    private static final OpenApiContract CONTRACT = OpenApiContract.load();
    private static final AtomicInteger NAMES = new AtomicInteger();

    private static WardenFixture fixture;
    private static Gateway gateway;
    private static HttpTestClient http;

    @BeforeAll
    static void start() throws Exception {
        fixture = new WardenFixture();
        gateway = fixture.gateway();
        http = new HttpTestClient(gateway.httpPort(), CONTRACT);
    }

    @AfterAll
    static void stop() throws Exception {
        fixture.close();
    }

    private static String fresh(String namespace) {
        return namespace + "/lock-" + NAMES.incrementAndGet();
    }

    private static String openSession(String client) {
        HttpTestClient.Reply r = http.postJson("/v1/sessions", "client_id", client, "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static void assertProblem(HttpTestClient.Reply r, int status, String code) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.isProblem()).as(r.toString()).isTrue();
        assertThat(r.json().get("code").asText()).as(r.toString()).isEqualTo(code);
    }

    private static void assertSchema(String schema, JsonNode node) {
        assertThat(CONTRACT.checkSchema(schema, node)).as(schema + " " + node).isEmpty();
    }

    @Test
    void sessionCalls_andTheirErrors_matchTheDocument() {
        String sid = openSession("alice");
        String name = fresh("docs");
        http.postJson("/v1/acquire", "session_id", sid, "name", name);
        String other = openSession("bob");
        http.postJson("/v1/acquire", "session_id", other, "name", name, "request_id", "bob-1", "on_timeout", "KEEP");

        JsonNode session = http.get("/v1/sessions/" + sid).json();
        assertThat(session.get("holds")).hasSize(1);
        assertThat(http.get("/v1/sessions/" + other).json().get("waiting")).hasSize(1);
        assertThat(http.post("/v1/sessions/" + sid + "/keepalive", "").status()).isEqualTo(200);
        assertThat(http.post("/v1/sessions/" + sid + "/keepalive", "{\"ttl_ms\":30000}").status()).isEqualTo(200);
        assertThat(http.delete("/v1/sessions/" + other).json().get("cancelled")).hasSize(1);
        assertThat(http.delete("/v1/sessions/" + sid).json().get("released")).hasSize(1);

        String gone = "0123456789abcdef0123456789abcdef";
        assertProblem(http.get("/v1/sessions/" + gone), 404, "SESSION_NOT_FOUND");
        assertProblem(http.post("/v1/sessions/" + gone + "/keepalive", ""), 404, "SESSION_NOT_FOUND");
        assertProblem(http.delete("/v1/sessions/" + gone), 404, "SESSION_NOT_FOUND");
        HttpTestClient.Reply invalid = http.postJson("/v1/sessions", "client_id", "c", "ttl", 5);
        assertProblem(invalid, 400, "INVALID_ARGUMENT");
        assertThat(invalid.json().get("field").asText()).isEqualTo("ttl");
        assertProblem(http.get("/v1/sessions/not-a-session"), 400, "INVALID_ARGUMENT");
        assertProblem(http.get("/v1/sessions/" + gone + "?x=1"), 400, "INVALID_ARGUMENT");
        assertProblem(http.post("/v1/sessions", "[]"), 400, "INVALID_ARGUMENT");
    }

    @Test
    void acquires_granted_queued_timedOut_andHeld_matchTheDocument() {
        String alice = openSession("alice");
        String bob = openSession("bob");
        String name = fresh("docs");
        HttpTestClient.Reply granted = http.postJson("/v1/acquire", "session_id", alice, "name", name);
        assertThat(granted.json().get("status").asText()).isEqualTo("GRANTED");
        long token = granted.json().get("token").asLong();

        HttpTestClient.Reply timedOut = http.postJson("/v1/acquire", "session_id", bob, "name", name, "mode", "SHARED");
        assertThat(timedOut.json().get("status").asText()).isEqualTo("TIMED_OUT");
        HttpTestClient.Reply queued = http.postJson("/v1/acquire", "session_id", bob, "name", name,
                "request_id", "bob-1", "on_timeout", "KEEP");
        assertThat(queued.json().get("status").asText()).isEqualTo("QUEUED");
        assertThat(queued.json().get("position").asInt()).isEqualTo(1);

        JsonNode view = http.get("/v1/locks/" + name).json();
        assertThat(view.get("waiters")).hasSize(1);
        CompletableFuture<HttpTestClient.Reply> held = http.postAsync("/v1/acquire", "{\"session_id\":\"" + bob
                + "\",\"name\":\"" + name + "\",\"wait_ms\":60000,\"request_id\":\"bob-1\"}");
        assertThat(http.postJson("/v1/release", "session_id", alice, "name", name, "token", token).json()
                .get("released").asBoolean()).isTrue();
        HttpTestClient.Reply grantedLater = held.orTimeout(30, TimeUnit.SECONDS).join();
        assertThat(grantedLater.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(http.postJson("/v1/release", "session_id", alice, "name", name, "token", token).json()
                .get("released").asBoolean()).isFalse();
        assertThat(http.postJson("/v1/release", "session_id", bob, "name", name, "request_id", "bob-1").json()
                .get("released").asBoolean()).isTrue();

        assertProblem(http.postJson("/v1/acquire", "session_id", "0123456789abcdef0123456789abcdef", "name", name),
                404, "SESSION_NOT_FOUND");
        assertProblem(http.postJson("/v1/acquire", "session_id", bob, "name", "Bad Name"), 400, "INVALID_ARGUMENT");
        assertProblem(http.postJson("/v1/acquire", "session_id", bob, "name", name, "wait_ms", 300_001), 400, "INVALID_ARGUMENT");
        assertProblem(http.postJson("/v1/release", "session_id", bob, "name", name), 400, "INVALID_ARGUMENT");
        assertProblem(http.postJson("/v1/release", "session_id", "0123456789abcdef0123456789abcdef", "name", name,
                "token", 1), 404, "SESSION_NOT_FOUND");
        byte[] big = ("{\"session_id\":\"" + "x".repeat(70_000) + "\"}").getBytes(StandardCharsets.UTF_8);
        assertProblem(http.send("POST", "/v1/acquire", big, "application/json", Duration.ofSeconds(10)), 413, "PAYLOAD_TOO_LARGE");
    }

    @Test
    void semaphores_andTheirErrors_matchTheDocument() throws Exception {
        String alice = openSession("alice");
        String bob = openSession("bob");
        String name = fresh("docs");
        HttpTestClient.Reply granted = http.postJson("/v1/acquire", "session_id", alice, "name", name, "mode", "SEMAPHORE",
                "permits", 2);
        assertThat(granted.json().get("status").asText()).as(granted.toString()).isEqualTo("GRANTED");
        assertThat(http.postJson("/v1/acquire", "session_id", bob, "name", name, "mode", "SEMAPHORE", "permits", 2)
                .json().get("status").asText()).isEqualTo("GRANTED");
        JsonNode view = http.get("/v1/locks/" + name).json();
        assertSchema("Lock", view);
        assertThat(view.get("mode").asText()).isEqualTo("SEMAPHORE");
        assertThat(view.get("permits").asInt()).isEqualTo(2);
        assertThat(view.get("holders")).hasSize(2);
        assertThat(view.get("holders").get(0).get("mode").asText()).isEqualTo("SEMAPHORE");

        HttpTestClient.Reply conflict = http.postJson("/v1/acquire", "session_id", bob, "name", name);
        assertProblem(conflict, 409, "CONFLICT");
        assertThat(conflict.json().get("detail").asText()).contains("SEMAPHORE of 2 permits");
        assertThat(http.get("/v1/locks/" + name).json().get("holders")).hasSize(2);
        long zxid = fixture.lastZxid();
        for (Object[] bad : new Object[][]{
                {"mode", "EXCLUSIVE", "permits", 2}, {"mode", "SEMAPHORE"}, {"mode", "SEMAPHORE", "permits", 1},
                {"mode", "SEMAPHORE", "permits", 1025}, {"mode", "SEMAPHORE", "permits", "two"},
                {"permits", 3}}) {
            Object[] body = new Object[4 + bad.length];
            body[0] = "session_id";
            body[1] = bob;
            body[2] = "name";
            body[3] = name;
            System.arraycopy(bad, 0, body, 4, bad.length);
            HttpTestClient.Reply r = http.postJson("/v1/acquire", body);
            assertProblem(r, 400, "INVALID_ARGUMENT");
            assertThat(r.json().get("field").asText()).as(r.toString()).isEqualTo("permits");
        }
        assertThat(fixture.lastZxid()).as("no change to state").isEqualTo(zxid);
    }

    @Test
    void aPlainCuratorHolder_andWaiter_matchTheDocument() throws Exception {
        String name = fresh("curator");
        var curatorLock = new org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock(fixture.curator,
                WardenFixture.lockPath(name));
        assertThat(curatorLock.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
        try {
            String sid = openSession("next");
            HttpTestClient.Reply queued = http.postJson("/v1/acquire", "session_id", sid, "name", name, "request_id", "r-1",
                    "on_timeout", "KEEP");
            JsonNode holder = queued.json().get("holders").get(0);
            assertThat(holder.has("session_id")).isFalse();
            assertThat(holder.get("client_id").asText()).isEqualTo("curator");
            assertThat(http.get("/v1/locks/" + name).json().get("holders").get(0).get("client_id").asText()).isEqualTo("curator");
            http.delete("/v1/sessions/" + sid);
        } finally {
            curatorLock.writeLock().release();
        }
    }

    @Test
    void reads_matchTheDocument() {
        String alice = openSession("alice");
        String first = "reads/a-" + NAMES.incrementAndGet();
        String second = "reads/b-" + NAMES.incrementAndGet();
        long token = http.postJson("/v1/acquire", "session_id", alice, "name", first).json().get("token").asLong();
        http.postJson("/v1/acquire", "session_id", alice, "name", second, "mode", "SHARED");

        JsonNode page = http.get("/v1/locks?namespace=reads&limit=1").json();
        assertThat(page.get("next_after")).isNotNull();
        assertThat(http.get("/v1/locks?namespace=reads&after=" + page.get("next_after").asText()).status()).isEqualTo(200);
        assertThat(http.get("/v1/locks/" + second).json().get("mode").asText()).isEqualTo("SHARED");
        assertThat(http.get("/v1/locks/reads/free-one").json().get("mode").asText()).isEqualTo("FREE");
        assertThat(http.get("/v1/check?name=" + first + "&token=" + token).json().get("current").asBoolean()).isTrue();
        assertThat(http.get("/v1/check?name=reads/free-one&token=1").json().get("latest_token").isNull()).isTrue();
        assertThat(http.get("/v1/namespaces").json().get("namespaces")).isNotEmpty();

        assertProblem(http.get("/v1/locks?limit=0"), 400, "INVALID_ARGUMENT");
        assertProblem(http.get("/v1/locks/reads"), 400, "INVALID_ARGUMENT");
        assertProblem(http.get("/v1/check?name=" + first), 400, "INVALID_ARGUMENT");
        assertProblem(http.get("/v1/namespaces?all=1"), 400, "INVALID_ARGUMENT");
        http.delete("/v1/sessions/" + alice);
    }

    @Test
    void theLeaseApi_matchesTheDocument() {
        String resource = "docs-" + NAMES.incrementAndGet();
        HttpTestClient.Reply lease = http.postJson("/lock/acquire", "resource", resource, "client_id", "worker-1", "ttl", 30_000);
        assertThat(lease.status()).as(lease.toString()).isEqualTo(200);
        String leaseId = lease.json().get("lease_id").asText();

        HttpTestClient.Reply conflict = http.postJson("/lock/acquire", "resource", resource, "client_id", "worker-2", "ttl", 30_000);
        assertProblem(conflict, 409, "CONFLICT");
        assertThat(conflict.json().get("holder").get("client_id").asText()).isEqualTo("worker-1");
        assertThat(http.postJson("/lock/renew", "lease_id", leaseId, "ttl", 20_000).status()).isEqualTo(200);
        assertThat(http.postJson("/lock/release", "resource", "other", "lease_id", leaseId).json().get("released").asBoolean()).isFalse();
        assertThat(http.postJson("/lock/release", "resource", resource, "lease_id", leaseId).json().get("released").asBoolean()).isTrue();
        assertProblem(http.postJson("/lock/renew", "lease_id", leaseId, "ttl", 20_000), 404, "SESSION_NOT_FOUND");
        assertThat(http.postJson("/lock/release", "resource", resource, "lease_id", leaseId).json().get("released").asBoolean())
                .as("a lease that is gone releases nothing").isFalse();
        assertProblem(http.postJson("/lock/acquire", "resource", resource, "client_id", "w"), 400, "INVALID_ARGUMENT");
    }

    @Test
    void operationsRoutes_andHttpLevelErrors_matchTheDocument() {
        assertThat(http.get("/health/live").json().get("status").asText()).isEqualTo("UP");
        assertThat(http.get("/health/ready").json().get("status").asText()).isEqualTo("READY");
        assertThat(http.get("/metrics").text()).contains("warden_");
        assertThat(http.get(OpenApi.PATH).json().get("openapi").asText()).isEqualTo("3.1.0");

        assertProblem(http.get("/v1/nothing-here"), 404, "NOT_FOUND");
        HttpTestClient.Reply wrongMethod = http.send("PUT", "/v1/acquire", "{}", "application/json");
        assertProblem(wrongMethod, 405, "METHOD_NOT_ALLOWED");
        assertThat(wrongMethod.allow()).contains("POST");
        assertProblem(http.get("/v1/sessions/0123456789abcdef0123456789abcdef/keepalive"), 405, "METHOD_NOT_ALLOWED");
    }

    @Test
    void watchEvents_andItsErrors_matchTheDocument() {
        String name = fresh("watched");
        String sid = openSession("watcher");
        http.postJson("/v1/acquire", "session_id", sid, "name", name);
        try (SseTestClient stream = SseTestClient.watch(gateway.httpPort(), "?name=" + name + "&since_revision=0")) {
            assertThat(CONTRACT.check("GET", "/v1/watch", stream.status(), stream.contentType(), null)).isEmpty();
            SseTestClient.Event resync = stream.next();
            assertThat(resync.type()).isEqualTo("RESYNC");
            assertSchema("Resync", resync.data());
            String bob = openSession("bob");
            http.postJson("/v1/acquire", "session_id", bob, "name", name, "request_id", "bob-1", "on_timeout", "KEEP");
            http.delete("/v1/sessions/" + sid);
            http.delete("/v1/sessions/" + bob);
            List<SseTestClient.Event> events = stream.next(4); // bob QUEUED; alice RELEASED, bob GRANTED; bob RELEASED
            for (SseTestClient.Event e : events) {
                assertThat(e.data().get("type").asText()).isEqualTo(e.type());
                assertSchema("WatchEvent", e.data());
            }
            assertThat(events).extracting(SseTestClient.Event::type).contains("QUEUED", "GRANTED", "RELEASED");
        }
        assertProblem(http.get("/v1/watch"), 400, "INVALID_ARGUMENT");
        assertProblem(http.get("/v1/watch?name=" + name + "&prefix=watched"), 400, "INVALID_ARGUMENT");
    }

    @Test
    void keepaliveFrames_matchTheDocument() {
        String sid = openSession("socket");
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive")) {
            ws.send("ping");
            assertSchema("Keepalive", json(ws.nextFrame()));
        }
        http.delete("/v1/sessions/" + sid);
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/" + sid + "/keepalive")) {
            ws.send("ping");
            assertThat(ws.awaitClose().code()).as("the session is gone").isEqualTo(4404);
        }
        try (WsTestClient ws = new WsTestClient(gateway.httpPort(), "/v1/sessions/not-a-session/keepalive")) {
            assertThat(ws.awaitClose().code()).isEqualTo(4400);
        }
    }

    @Test
    void limitsAndDraining_matchTheDocument() {
        // One request per session, one waiter per lock, two watches of names and prefixes (the console's event log takes one).
        Gateway small = fixture.gateway(fixture.config().withLimits(1, 1, 1000).toBuilder().maxWatches(2).build());
        HttpTestClient client = new HttpTestClient(small.httpPort(), CONTRACT);
        String sid = client.postJson("/v1/sessions", "client_id", "small").json().get("session_id").asText();
        assertThat(client.postJson("/v1/acquire", "session_id", sid, "name", fresh("limits")).status()).isEqualTo(200);
        assertProblem(client.postJson("/v1/acquire", "session_id", sid, "name", fresh("limits")), 429, "RESOURCE_EXHAUSTED");
        try (SseTestClient first = SseTestClient.watch(small.httpPort(), "?prefix=limits")) {
            assertProblem(client.get("/v1/watch?prefix=limits"), 429, "RESOURCE_EXHAUSTED");
        }

        small.httpApi().beginDrain();
        HttpTestClient.Reply drained = client.postJson("/v1/sessions", "client_id", "late");
        assertProblem(drained, 503, "UNAVAILABLE");
        assertThat(drained.retryAfter()).contains("1");
        HttpTestClient.Reply ready = client.get("/health/ready");
        assertThat(ready.status()).isEqualTo(503);
        assertThat(ready.json().get("status").asText()).isEqualTo("DRAINING");
        assertProblem(client.get(OpenApi.PATH), 503, "UNAVAILABLE");
    }

    private static JsonNode json(String text) {
        try {
            return HttpTestClient.MAPPER.readTree(text);
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + text, e);
        }
    }
}
