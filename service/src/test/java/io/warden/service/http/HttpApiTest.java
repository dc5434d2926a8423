package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.config.WardenConfig;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The HTTP API end to end: a real gateway (engine on a real ZooKeeper {@code TestingServer}, on a
 * {@code ManualClock}) called over HTTP with {@link java.net.http.HttpClient}. Replies must have exactly the
 * contract's shape; rejected requests must leave no trace in the lock state.
 */
class HttpApiTest {
    private static final AtomicInteger NAMES = new AtomicInteger();

    private static WardenFixture fixture;
    private static Gateway gateway;
    private static HttpTestClient http;

    @BeforeAll
    static void startGateway() throws Exception {
        fixture = new WardenFixture();
        try {
            gateway = fixture.gateway();
        } catch (UnsupportedOperationException e) {
            fixture.close();
            fixture = null;
            Assumptions.abort("the engine is not written yet: " + e.getMessage());
        }
        http = new HttpTestClient(gateway.httpPort(), OpenApiContract.load());
    }

    @AfterAll
    static void stopGateway() throws Exception {
        if (fixture != null) {
            fixture.close();
        }
    }

    /** A lock name no other test uses. */
    private static String freshName(String namespace) {
        return namespace + "/lock-" + NAMES.incrementAndGet();
    }

    private static String openSession(String clientId) {
        HttpTestClient.Reply r = http.postJson("/v1/sessions", "client_id", clientId, "ttl_ms", 30_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static JsonNode acquire(String sessionId, String name) {
        HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", sessionId, "name", name);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static JsonNode lock(String name) {
        HttpTestClient.Reply r = http.get("/v1/locks/" + name);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static void assertFree(String name) {
        JsonNode view = lock(name);
        assertThat(view.get("mode").asText()).isEqualTo("FREE");
        assertThat(view.get("holders")).isEmpty();
        assertThat(view.get("waiters")).isEmpty();
    }

    private static void assertProblem(HttpTestClient.Reply r, int status, String code) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.isProblem()).as(r.toString()).isTrue();
        assertThat(r.json().get("code").asText()).isEqualTo(code);
        assertThat(r.json().get("status").asInt()).isEqualTo(status);
    }

    private static void awaitWaiters(String name, int count) {
        WardenFixture.await(name + " has " + count + " waiters", () -> lock(name).get("waiters").size() == count);
    }

    private static HttpTestClient.Reply join(CompletableFuture<HttpTestClient.Reply> reply) {
        return reply.orTimeout(30, TimeUnit.SECONDS).join();
    }

    @Test
    void session_open_read_keepalive_close() {
        HttpTestClient.Reply created = http.postJson("/v1/sessions", "client_id", "alice", "ttl_ms", 1);
        assertThat(created.status()).isEqualTo(201);
        JsonNode grant = created.json();
        String sid = grant.get("session_id").asText();
        assertThat(sid).matches("[0-9a-f]{32}");
        assertThat(grant.get("ttl_ms").asLong()).as("clamped up to the minimum").isEqualTo(2000);
        assertThat(grant.get("keepalive_interval_ms").asLong()).isPositive().isLessThan(2000);

        JsonNode view = http.get("/v1/sessions/" + sid).json();
        assertThat(view.get("session_id").asText()).isEqualTo(sid);
        assertThat(view.get("client_id").asText()).isEqualTo("alice");
        assertThat(view.get("ttl_ms").asLong()).isEqualTo(2000);
        assertThat(view.get("ttl_ms_remaining").asLong()).isBetween(1L, 2000L);
        assertThat(view.get("lock_delay_ms").asLong()).isZero();
        assertThat(view.get("holds")).isEmpty();
        assertThat(view.get("waiting")).isEmpty();

        HttpTestClient.Reply kept = http.post("/v1/sessions/" + sid + "/keepalive", null);
        assertThat(kept.status()).as(kept.toString()).isEqualTo(200);
        assertThat(kept.json().get("ttl_ms_remaining").asLong()).isBetween(1L, 2000L);

        String name = freshName("sessions");
        acquire(sid, name);
        HttpTestClient.Reply closed = http.delete("/v1/sessions/" + sid);
        assertThat(closed.status()).as(closed.toString()).isEqualTo(200);
        assertThat(closed.json().get("released")).extracting(JsonNode::asText).containsExactly(name);
        assertThat(closed.json().get("cancelled")).isEmpty();
        assertFree(name);

        assertProblem(http.get("/v1/sessions/" + sid), 404, "SESSION_NOT_FOUND");
        assertProblem(http.post("/v1/sessions/" + sid + "/keepalive", ""), 404, "SESSION_NOT_FOUND");
    }

    @Test
    void sessionOptions_lockDelayAndTtlChange() {
        HttpTestClient.Reply created = http.postJson("/v1/sessions", "client_id", "delayed", "ttl_ms", 5000, "lock_delay_ms", 1500);
        String sid = created.json().get("session_id").asText();
        assertThat(http.get("/v1/sessions/" + sid).json().get("lock_delay_ms").asLong()).isEqualTo(1500);
        HttpTestClient.Reply kept = http.post("/v1/sessions/" + sid + "/keepalive", "{\"ttl_ms\":8000}");
        assertThat(kept.json().get("ttl_ms_remaining").asLong()).isEqualTo(8000);
        assertThat(http.get("/v1/sessions/" + sid).json().get("ttl_ms").asLong()).isEqualTo(8000);
    }

    @Test
    void acquire_release_check_withFencingTokens() {
        String name = freshName("payments");
        String a = openSession("writer-a");
        String b = openSession("writer-b");

        JsonNode granted = acquire(a, name);
        assertThat(granted.get("status").asText()).isEqualTo("GRANTED");
        long t1 = granted.get("token").asLong();
        assertThat(t1).isPositive();
        assertThat(granted.has("position")).isFalse();
        assertThat(granted.get("revision").asLong()).isPositive();
        assertThat(granted.get("holders")).hasSize(1);
        JsonNode holder = granted.get("holders").get(0);
        assertThat(holder.get("session_id").asText()).isEqualTo(a);
        assertThat(holder.get("client_id").asText()).isEqualTo("writer-a");
        assertThat(holder.get("mode").asText()).isEqualTo("EXCLUSIVE");
        assertThat(holder.get("token").asLong()).isEqualTo(t1);
        assertThat(holder.has("expired")).isFalse();

        JsonNode busy = acquire(b, name);
        assertThat(busy.get("status").asText()).isEqualTo("TIMED_OUT");
        assertThat(busy.has("token")).isFalse();
        assertThat(busy.get("holders").get(0).get("session_id").asText()).isEqualTo(a);

        JsonNode view = lock(name);
        assertThat(view.get("name").asText()).isEqualTo(name);
        assertThat(view.get("mode").asText()).isEqualTo("EXCLUSIVE");
        assertThat(view.get("holders")).hasSize(1);
        assertThat(view.get("waiters")).isEmpty();
        assertThat(view.get("revision").asLong()).isPositive();

        JsonNode check = http.get("/v1/check?name=" + name + "&token=" + t1).json();
        assertThat(check.get("current").asBoolean()).isTrue();
        assertThat(check.get("latest_token").asLong()).isEqualTo(t1);

        HttpTestClient.Reply foreign = http.postJson("/v1/release", "session_id", b, "name", name, "token", t1);
        assertThat(foreign.json().get("released").asBoolean()).as("a foreign token is a no-op").isFalse();
        assertThat(lock(name).get("holders")).hasSize(1);

        HttpTestClient.Reply released = http.postJson("/v1/release", "session_id", a, "name", name, "token", t1);
        assertThat(released.status()).isEqualTo(200);
        assertThat(released.json().get("released").asBoolean()).isTrue();
        JsonNode after = http.get("/v1/check?name=" + name + "&token=" + t1).json();
        assertThat(after.get("current").asBoolean()).isFalse();
        assertThat(after.has("latest_token")).isTrue();
        assertThat(after.get("latest_token").isNull()).isTrue();
        assertFree(name);

        JsonNode next = acquire(b, name);
        long t2 = next.get("token").asLong();
        assertThat(t2).isGreaterThan(t1);
        JsonNode session = http.get("/v1/sessions/" + b).json();
        assertThat(session.get("holds")).hasSize(1);
        assertThat(session.get("holds").get(0).get("name").asText()).isEqualTo(name);
        assertThat(session.get("holds").get(0).get("mode").asText()).isEqualTo("EXCLUSIVE");
        assertThat(session.get("holds").get(0).get("token").asLong()).isEqualTo(t2);
    }

    @Test
    void sharedHolders_areGrantedTogether() {
        String name = freshName("reports");
        String a = openSession("reader-a");
        String b = openSession("reader-b");
        JsonNode ra = http.postJson("/v1/acquire", "session_id", a, "name", name, "mode", "SHARED").json();
        JsonNode rb = http.postJson("/v1/acquire", "session_id", b, "name", name, "mode", "SHARED").json();
        assertThat(ra.get("status").asText()).isEqualTo("GRANTED");
        assertThat(rb.get("status").asText()).isEqualTo("GRANTED");
        JsonNode view = lock(name);
        assertThat(view.get("mode").asText()).isEqualTo("SHARED");
        assertThat(view.get("holders")).hasSize(2);
    }

    @Test
    void heldAcquire_isAnsweredWhenTheHolderReleases() {
        String name = freshName("held");
        String a = openSession("holder");
        String b = openSession("waiter");
        long t1 = acquire(a, name).get("token").asLong();

        CompletableFuture<HttpTestClient.Reply> waiting = http.postAsync("/v1/acquire",
                "{\"session_id\":\"" + b + "\",\"name\":\"" + name + "\",\"wait_ms\":60000,\"request_id\":\"w-1\"}");
        awaitWaiters(name, 1);
        JsonNode waiter = lock(name).get("waiters").get(0);
        assertThat(waiter.get("session_id").asText()).isEqualTo(b);
        assertThat(waiter.get("client_id").asText()).isEqualTo("waiter");
        assertThat(waiter.get("mode").asText()).isEqualTo("EXCLUSIVE");
        assertThat(waiter.get("request_id").asText()).isEqualTo("w-1");
        assertThat(waiter.get("position").asInt()).isEqualTo(1);
        assertThat(waiting).isNotDone();

        http.postJson("/v1/release", "session_id", a, "name", name, "token", t1);
        HttpTestClient.Reply granted = join(waiting);
        assertThat(granted.status()).as(granted.toString()).isEqualTo(200);
        assertThat(granted.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(granted.json().get("token").asLong()).isGreaterThan(t1);
    }

    @Test
    void heldAcquire_timesOut_cancelRemovesIt_keepLeavesItQueued() {
        String name = freshName("timeouts");
        String a = openSession("holder");
        String b = openSession("patient");
        acquire(a, name);

        CompletableFuture<HttpTestClient.Reply> cancel = http.postAsync("/v1/acquire",
                "{\"session_id\":\"" + b + "\",\"name\":\"" + name + "\",\"wait_ms\":5000}");
        awaitWaiters(name, 1);
        fixture.clock.advance(Duration.ofMillis(5000));
        HttpTestClient.Reply timedOut = join(cancel);
        assertThat(timedOut.json().get("status").asText()).isEqualTo("TIMED_OUT");
        awaitWaiters(name, 0);

        CompletableFuture<HttpTestClient.Reply> keep = http.postAsync("/v1/acquire",
                "{\"session_id\":\"" + b + "\",\"name\":\"" + name + "\",\"wait_ms\":1000,\"on_timeout\":\"KEEP\",\"request_id\":\"keep-1\"}");
        awaitWaiters(name, 1);
        fixture.clock.advance(Duration.ofMillis(1000));
        JsonNode queued = join(keep).json();
        assertThat(queued.get("status").asText()).isEqualTo("QUEUED");
        assertThat(queued.get("position").asInt()).isEqualTo(1);
        assertThat(queued.has("token")).isFalse();
        assertThat(queued.get("request_id").asText()).isEqualTo("keep-1");
        JsonNode session = http.get("/v1/sessions/" + b).json();
        assertThat(session.get("waiting")).hasSize(1);
        assertThat(session.get("waiting").get(0).get("request_id").asText()).isEqualTo("keep-1");
        assertThat(session.get("waiting").get(0).get("name").asText()).isEqualTo(name);

        HttpTestClient.Reply cancelled = http.postJson("/v1/release", "session_id", b, "name", name, "request_id", "keep-1");
        assertThat(cancelled.json().get("released").asBoolean()).isTrue();
        awaitWaiters(name, 0);
    }

    @Test
    void heldCalls_holdNoThreads_moreWaitersThanJettyHasThreads() {
        // The HTTP server has at most http-threads (32) threads: if a held call kept one, 300 of them would starve it.
        String holder = openSession("herd-holder");
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String name = freshName("herd");
            acquire(holder, name);
            names.add(name);
        }
        List<CompletableFuture<HttpTestClient.Reply>> held = new ArrayList<>();
        for (int s = 0; s < 30; s++) {
            String waiter = openSession("herd-" + s);
            for (String name : names) {
                held.add(http.postAsync("/v1/acquire",
                        "{\"session_id\":\"" + waiter + "\",\"name\":\"" + name + "\",\"wait_ms\":20000}"));
            }
        }
        for (String name : names) {
            awaitWaiters(name, 30);
        }
        long start = System.nanoTime();
        assertThat(http.get("/health/live").status()).isEqualTo(200);
        assertThat(lock(names.get(0)).get("waiters")).hasSize(30);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(held).allMatch(f -> !f.isDone());
        assertThat(gateway.registry().find("jetty.threads.current").gauge().value())
                .as("HTTP threads while 300 calls are held").isLessThanOrEqualTo(WardenConfig.DEFAULT_HTTP_THREADS);

        fixture.clock.advance(Duration.ofMillis(20_000));
        for (CompletableFuture<HttpTestClient.Reply> f : held) {
            HttpTestClient.Reply r = join(f);
            assertThat(r.status()).as(r.toString()).isEqualTo(200);
            assertThat(r.json().get("status").asText()).isEqualTo("TIMED_OUT");
        }
        for (String name : names) {
            awaitWaiters(name, 0);
        }
    }

    @Test
    void rejectedRequests_changeNothing() {
        String name = freshName("untouched");
        String a = openSession("careful");
        List<HttpTestClient.Reply> rejected = new ArrayList<>();
        rejected.add(http.postJson("/v1/acquire", "session_id", a, "name", name, "mode", "exclusive"));
        rejected.add(http.postJson("/v1/acquire", "session_id", a, "name", name, "wait_ms", 300_001));
        rejected.add(http.postJson("/v1/acquire", "session_id", a, "name", name, "wait_ms", 1.5));
        rejected.add(http.postJson("/v1/acquire", "session_id", a, "name", name, "request_id", "no spaces"));
        rejected.add(http.postJson("/v1/acquire", "session_id", a, "name", name, "surprise", true));
        rejected.add(http.post("/v1/acquire", "{\"session_id\":\"" + a + "\",\"name\":\"" + name + "\""));
        rejected.add(http.post("/v1/acquire", "{\"session_id\":\"" + a + "\",\"name\":\"" + name + "\"} []"));
        rejected.add(http.postJson("/v1/sessions", "client_id", "x".repeat(129)));
        rejected.add(http.postJson("/v1/sessions", "client_id", "ok", "lock_delay_ms", 60_001));
        for (HttpTestClient.Reply r : rejected) {
            assertProblem(r, 400, "INVALID_ARGUMENT");
        }
        assertFree(name);
        JsonNode session = http.get("/v1/sessions/" + a).json();
        assertThat(session.get("holds")).isEmpty();
        assertThat(session.get("waiting")).isEmpty();
        assertThat(fixture.queueSize(name)).isZero();

        HttpTestClient.Reply unknownSession = http.postJson("/v1/acquire", "session_id", "f".repeat(32), "name", name);
        assertProblem(unknownSession, 404, "SESSION_NOT_FOUND");
        assertFree(name);
    }

    /** {@code text/plain} needs no CORS preflight, so another site's page could open sessions and take leases. */
    @Test
    void wrongContentType_isA415_jsonWithCharsetIsRead() {
        HttpTestClient.Reply r = http.send("POST", "/v1/sessions", "{\"client_id\":\"plain\"}", "text/plain");
        assertProblem(r, 415, "UNSUPPORTED_MEDIA_TYPE");
        HttpTestClient.Reply utf8 = http.send("POST", "/v1/sessions", "{\"client_id\":\"utf8\"}", "application/json; charset=utf-8");
        assertThat(utf8.status()).as(utf8.toString()).isEqualTo(201);
        assertThat(utf8.contentType()).startsWith("application/json");
    }

    @Test
    void lockNames_withSlashesAndEscapes() {
        String a = openSession("deep");
        String name = "deep/a/b:c/d.e";
        acquire(a, name);
        assertThat(lock("deep/a/b:c/d.e").get("holders")).hasSize(1);
        assertThat(lock("deep/a/b%3Ac/d.e").get("name").asText()).isEqualTo(name);
        assertThat(http.get("/v1/check?name=deep%2Fa%2Fb%3Ac%2Fd.e&token=1").json().get("current").asBoolean()).isFalse();
    }

    @Test
    void listing_pages_and_namespaces() {
        String a = openSession("lister");
        for (int i = 1; i <= 3; i++) {
            acquire(a, "listing/item-" + i);
        }
        JsonNode first = http.get("/v1/locks?namespace=listing&limit=2").json();
        assertThat(first.get("locks")).hasSize(2);
        assertThat(first.get("locks").get(0).get("name").asText()).isEqualTo("listing/item-1");
        assertThat(first.get("locks").get(0).get("mode").asText()).isEqualTo("EXCLUSIVE");
        assertThat(first.get("locks").get(0).get("holders").asInt()).isEqualTo(1);
        String after = first.get("next_after").asText();
        JsonNode second = http.get("/v1/locks?namespace=listing&limit=2&after=" + after).json();
        assertThat(second.get("locks")).extracting(n -> n.get("name").asText()).containsExactly("listing/item-3");
        assertThat(second.has("next_after")).isFalse();

        JsonNode namespaces = http.get("/v1/namespaces").json().get("namespaces");
        JsonNode listing = null;
        for (JsonNode n : namespaces) {
            if (n.get("namespace").asText().equals("listing")) {
                listing = n;
            }
        }
        assertThat(listing).as(namespaces.toString()).isNotNull();
        assertThat(listing.get("locks").asInt()).isEqualTo(3);
        assertThat(listing.get("holders").asInt()).isEqualTo(3);
        assertThat(listing.get("waiters").asInt()).isZero();
        assertThat(listing.get("sessions").asInt()).isEqualTo(1);
    }

    @Test
    void leaseApi_acquireConflictRenewRelease() {
        String resource = "user:" + NAMES.incrementAndGet();
        HttpTestClient.Reply got = http.postJson("/lock/acquire", "resource", resource, "client_id", "svc-a", "ttl", 5000);
        assertThat(got.status()).as(got.toString()).isEqualTo(200);
        String lease = got.json().get("lease_id").asText();
        long token = got.json().get("fencing_token").asLong();
        assertThat(token).isPositive();
        assertThat(got.json().get("ttl").asLong()).isEqualTo(5000);

        HttpTestClient.Reply conflict = http.postJson("/lock/acquire", "resource", resource, "client_id", "svc-b", "ttl", 5000);
        assertProblem(conflict, 409, "CONFLICT");
        assertThat(conflict.json().get("holder").get("client_id").asText()).isEqualTo("svc-a");
        JsonNode view = lock("default/" + resource);
        assertThat(view.get("holders")).hasSize(1);
        assertThat(view.get("waiters")).as("the loser's session was closed").isEmpty();

        HttpTestClient.Reply renewed = http.postJson("/lock/renew", "lease_id", lease, "ttl", 7000);
        assertThat(renewed.status()).as(renewed.toString()).isEqualTo(200);
        assertThat(renewed.json().get("ttl").asLong()).isEqualTo(7000);

        assertThat(http.postJson("/lock/release", "resource", "other", "lease_id", lease).json().get("released").asBoolean()).isFalse();
        assertThat(lock("default/" + resource).get("holders")).hasSize(1);
        assertThat(http.postJson("/lock/release", "resource", resource, "lease_id", lease).json().get("released").asBoolean()).isTrue();
        assertFree("default/" + resource);
        assertThat(http.postJson("/lock/release", "resource", resource, "lease_id", lease).json().get("released").asBoolean()).isFalse();
        assertProblem(http.postJson("/lock/renew", "lease_id", lease, "ttl", 7000), 404, "SESSION_NOT_FOUND");

        HttpTestClient.Reply again = http.postJson("/lock/acquire", "resource", resource, "client_id", "svc-b", "ttl", 5000);
        assertThat(again.json().get("fencing_token").asLong()).isGreaterThan(token);
    }

    /**
     * Found by {@link HttpFuzzTest}: a lease try-lock of a held resource answered 409 only after opening a
     * session and closing it again, so a rejected request moved the zxid (two writes). Now the 409 comes from a read.
     */
    @Test
    void issue12_leaseTryLockOfAHeldResource_is409_andWritesNothingToZooKeeper() throws Exception {
        String resource = "held:" + NAMES.incrementAndGet();
        HttpTestClient.Reply got = http.postJson("/lock/acquire", "resource", resource, "client_id", "svc-a", "ttl", 5000);
        assertThat(got.status()).as(got.toString()).isEqualTo(200);
        long before = fixture.lastZxid();
        HttpTestClient.Reply conflict = http.postJson("/lock/acquire", "resource", resource, "client_id", "svc-b", "ttl", 5000);
        assertProblem(conflict, 409, "CONFLICT");
        assertThat(conflict.json().get("holder").get("client_id").asText()).isEqualTo("svc-a");
        assertThat(fixture.lastZxid()).as("the zxid after a rejected lease acquire").isEqualTo(before);
    }

    @Test
    void leaseApi_heldAcquire_isGrantedOnRelease() {
        String resource = "job:" + NAMES.incrementAndGet();
        String lease = http.postJson("/lock/acquire", "resource", resource, "client_id", "first", "ttl", 5000)
                .json().get("lease_id").asText();
        CompletableFuture<HttpTestClient.Reply> second = http.postAsync("/lock/acquire",
                "{\"resource\":\"" + resource + "\",\"client_id\":\"second\",\"ttl\":5000,\"wait_ms\":60000}");
        awaitWaiters("default/" + resource, 1);
        http.postJson("/lock/release", "resource", resource, "lease_id", lease);
        HttpTestClient.Reply granted = join(second);
        assertThat(granted.status()).as(granted.toString()).isEqualTo(200);
        assertThat(granted.json().get("lease_id").asText()).isNotEqualTo(lease);
    }

    @Test
    void metrics_countRequestsByRouteTemplate() {
        String a = openSession("metered");
        acquire(a, freshName("metered"));
        String text = http.get("/metrics").text();
        assertThat(text).contains("warden_http_requests_seconds_count{method=\"POST\",route=\"/v1/acquire\",status=\"200\"}");
        assertThat(text).contains("route=\"/v1/sessions\",status=\"201\"");
        assertThat(http.get("/health/ready").status()).isEqualTo(200);
    }

    /** The figures an operator alerts on for a hostile edge (docs/operations.md, "Alerts"). */
    @Test
    void metrics_exposeJvmProcessJettyAndEdgeFigures() {
        String text = http.get("/metrics").text();
        assertThat(text).contains("jvm_memory_used_bytes{area=\"heap\"", "jvm_gc_");
        // Whole names (a sample line starts with the name, then labels or the value): a prefix of a longer name is not it.
        java.util.Set<String> names = text.lines().filter(l -> !l.startsWith("#") && !l.isBlank())
                .map(l -> l.split("[{ ]", 2)[0]).collect(java.util.stream.Collectors.toSet());
        assertThat(names).contains("jvm_memory_max_bytes", "jvm_threads_live", "jvm_classes_currently_loaded",
                "process_cpu_usage", "process_cpu_seconds_total", "system_cpu_count", "process_uptime_seconds",
                "process_files_open", "process_files_max");
        assertThat(names).contains("jetty_threads_busy", "jetty_threads_config_max", "jetty_threads_jobs",
                "jetty_connections_current", "jetty_connections_max");
        assertThat(names).contains("warden_http_connections_refused_total", "warden_http_body_timeouts_total",
                "warden_http_body_too_large_total", "warden_ws_closed_backlog_total", "warden_ws_backlog_max_frames");
    }

    @Test
    void drain_answersHeldCallsBeforeStopping() throws Exception {
        Gateway draining = fixture.gateway();
        HttpTestClient client = new HttpTestClient(draining.httpPort(), OpenApiContract.load());
        String name = freshName("drain");
        HttpTestClient.Reply a = client.postJson("/v1/sessions", "client_id", "a");
        HttpTestClient.Reply b = client.postJson("/v1/sessions", "client_id", "b");
        String sa = a.json().get("session_id").asText();
        String sb = b.json().get("session_id").asText();
        client.postJson("/v1/acquire", "session_id", sa, "name", name);
        CompletableFuture<HttpTestClient.Reply> held = client.postAsync("/v1/acquire",
                "{\"session_id\":\"" + sb + "\",\"name\":\"" + name + "\",\"wait_ms\":60000,\"request_id\":\"d-1\"}");
        awaitWaiters(name, 1);

        draining.drain();
        HttpTestClient.Reply answer = join(held);
        assertProblem(answer, 503, "UNAVAILABLE");
        assertThat(answer.retryAfter()).isPresent();
    }
}
