package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/watch} (contract §3) end to end: a real gateway on a real ZooKeeper, its Server-Sent Events read
 * over HTTP. Events come from the gateway's watch on ZooKeeper, so each test drives the lock API and reads what the
 * stream says about it, in order.
 */
class WatchStreamTest {
    private static final AtomicInteger NAMES = new AtomicInteger();
    private static WardenFixture fixture;
    private static Gateway gateway;
    private static HttpTestClient http;

    @BeforeAll
    static void start() throws Exception {
        fixture = new WardenFixture();
        gateway = fixture.gateway();
        http = new HttpTestClient(gateway.httpPort(), OpenApiContract.load());
    }

    @AfterAll
    static void stop() throws Exception {
        fixture.close();
    }

    private static String fresh(String namespace) {
        return namespace + "/lock-" + NAMES.incrementAndGet();
    }

    private static String openSession(String client, long ttlMs) {
        HttpTestClient.Reply r = http.postJson("/v1/sessions", "client_id", client, "ttl_ms", ttlMs);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static JsonNode acquire(String sid, String name) {
        HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", sid, "name", name);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static CompletableFuture<HttpTestClient.Reply> wait(String sid, String name, String requestId) {
        return http.postAsync("/v1/acquire", "{\"session_id\":\"" + sid + "\",\"name\":\"" + name
                + "\",\"wait_ms\":60000,\"request_id\":\"" + requestId + "\"}");
    }

    private static void release(String sid, String name, long token) {
        HttpTestClient.Reply r = http.postJson("/v1/release", "session_id", sid, "name", name, "token", token);
        assertThat(r.json().get("released").asBoolean()).as(r.toString()).isTrue();
    }

    private static SseTestClient watch(String query) {
        SseTestClient sse = SseTestClient.open(gateway.httpPort(), query);
        assertThat(sse.status()).isEqualTo(200);
        assertThat(sse.contentType()).startsWith("text/event-stream");
        return sse;
    }

    private static void assertEvent(SseTestClient.Event e, String type, String name, String sid) {
        assertThat(e.type()).as(e.toString()).isEqualTo(type);
        assertThat(e.data().get("type").asText()).isEqualTo(type);
        assertThat(e.name()).as(e.toString()).isEqualTo(name);
        assertThat(e.sessionId()).as(e.toString()).isEqualTo(sid);
        // Only the last event of a revision carries the SSE id, so Last-Event-ID never points into a revision.
        if (e.id() != null) {
            assertThat(e.id()).isEqualTo(Long.toString(e.revision()));
        }
        assertThat(e.token()).isPositive();
        assertThat(e.data().get("mode").asText()).isEqualTo("EXCLUSIVE");
    }

    @Test
    void watchByName_seesQueuedGrantedCancelledReleased_inOrder() {
        String name = fresh("orders");
        String alice = openSession("alice", 60_000);
        String bob = openSession("bob", 60_000);
        String carol = openSession("carol", 60_000);
        try (SseTestClient sse = watch("?name=" + name)) {
            long aliceToken = acquire(alice, name).get("token").asLong();
            List<SseTestClient.Event> granted = sse.next(2);
            assertEvent(granted.get(0), "QUEUED", name, alice);
            assertEvent(granted.get(1), "GRANTED", name, alice);
            assertThat(granted.get(0).token()).isEqualTo(aliceToken);
            assertThat(granted.get(1).token()).isEqualTo(aliceToken);
            assertThat(granted.get(0).revision()).as("one transaction").isEqualTo(granted.get(1).revision())
                    .isEqualTo(aliceToken);

            CompletableFuture<HttpTestClient.Reply> bobWaits = wait(bob, name, "bob-1");
            SseTestClient.Event bobQueued = sse.next();
            assertEvent(bobQueued, "QUEUED", name, bob);
            CompletableFuture<HttpTestClient.Reply> carolWaits = wait(carol, name, "carol-1");
            SseTestClient.Event carolQueued = sse.next();
            assertEvent(carolQueued, "QUEUED", name, carol);

            HttpTestClient.Reply cancel = http.postJson("/v1/release", "session_id", bob, "name", name, "request_id", "bob-1");
            assertThat(cancel.json().get("released").asBoolean()).isTrue();
            SseTestClient.Event bobCancelled = sse.next();
            assertEvent(bobCancelled, "CANCELLED", name, bob);
            assertThat(bobCancelled.token()).isEqualTo(bobQueued.token());
            assertThat(bobWaits.orTimeout(20, TimeUnit.SECONDS).join().json().get("status").asText()).isEqualTo("TIMED_OUT");

            release(alice, name, aliceToken);
            List<SseTestClient.Event> handoff = sse.next(2);
            assertEvent(handoff.get(0), "RELEASED", name, alice);
            assertEvent(handoff.get(1), "GRANTED", name, carol);
            assertThat(handoff.get(1).token()).isEqualTo(carolQueued.token());
            assertThat(handoff.get(0).revision()).as("the grant is caused by the release").isEqualTo(handoff.get(1).revision());
            assertThat(handoff.get(0).id()).as("not the last event of its revision: no SSE id").isNull();
            assertThat(handoff.get(1).id()).isEqualTo(Long.toString(handoff.get(1).revision()));
            assertThat(carolWaits.orTimeout(20, TimeUnit.SECONDS).join().json().get("token").asLong())
                    .isEqualTo(carolQueued.token());

            assertThat(List.of(granted.get(1).revision(), bobQueued.revision(), carolQueued.revision(),
                    bobCancelled.revision(), handoff.get(0).revision())).isSorted().doesNotHaveDuplicates();
        }
    }

    @Test
    void sessionExpiry_isReportedAsExpired_andPromotesTheWaiter() {
        String name = fresh("expiry");
        String shortLived = openSession("short", 2000);
        String waiter = openSession("waiter", 120_000);
        try (SseTestClient sse = watch("?name=" + name)) {
            acquire(shortLived, name);
            sse.next(2);
            CompletableFuture<HttpTestClient.Reply> waits = wait(waiter, name, "w-1");
            assertEvent(sse.next(), "QUEUED", name, waiter);

            fixture.clock.advance(Duration.ofMillis(2500));
            List<SseTestClient.Event> expiry = sse.next(2);
            assertEvent(expiry.get(0), "EXPIRED", name, shortLived);
            assertEvent(expiry.get(1), "GRANTED", name, waiter);
            assertThat(expiry.get(0).revision()).isEqualTo(expiry.get(1).revision());
            assertThat(waits.orTimeout(20, TimeUnit.SECONDS).join().json().get("status").asText()).isEqualTo("GRANTED");
        }
    }

    @Test
    void closingASession_isRelease_notExpiry() {
        String name = fresh("close");
        String sid = openSession("closer", 60_000);
        try (SseTestClient sse = watch("?name=" + name)) {
            acquire(sid, name);
            sse.next(2);
            assertThat(http.delete("/v1/sessions/" + sid).status()).isEqualTo(200);
            assertEvent(sse.next(), "RELEASED", name, sid);
        }
    }

    @Test
    void prefixWatch_seesTheLocksUnderThePrefix_only() {
        String sid = openSession("prefix", 60_000);
        String a = "inside/a-" + NAMES.incrementAndGet();
        String b = "inside/b-" + NAMES.incrementAndGet();
        String outside = "insider/c-" + NAMES.incrementAndGet(); // same leading letters, another namespace
        try (SseTestClient all = watch("?prefix=inside"); SseTestClient some = watch("?prefix=inside/b-")) {
            acquire(sid, outside);
            acquire(sid, a);
            acquire(sid, b);
            // Events come in zxid order: had the outside lock been reported, it would come first.
            List<SseTestClient.Event> events = all.next(4);
            assertEvent(events.get(0), "QUEUED", a, sid);
            assertEvent(events.get(1), "GRANTED", a, sid);
            assertEvent(events.get(2), "QUEUED", b, sid);
            assertEvent(events.get(3), "GRANTED", b, sid);
            assertEvent(some.next(), "QUEUED", b, sid);
        }
    }

    @Test
    void resume_withSinceRevisionOrLastEventId_getsExactlyTheMissedEvents() {
        String name = fresh("resume");
        String sid = openSession("resumer", 60_000);
        long seen;
        try (SseTestClient sse = watch("?name=" + name)) {
            acquire(sid, name);
            seen = sse.next(2).get(1).revision();
        }
        long first = http.get("/v1/locks/" + name).json().get("holders").get(0).get("token").asLong();
        release(sid, name, first);
        long second = acquire(sid, name).get("token").asLong();

        for (Map<String, String> how : List.of(Map.<String, String>of(), Map.of("Last-Event-ID", Long.toString(seen)))) {
            String query = how.isEmpty() ? "?name=" + name + "&since_revision=" + seen : "?name=" + name;
            try (SseTestClient sse = SseTestClient.open(gateway.httpPort(), query, how)) {
                List<SseTestClient.Event> missed = sse.next(3);
                assertEvent(missed.get(0), "RELEASED", name, sid);
                assertThat(missed.get(0).token()).isEqualTo(first);
                assertEvent(missed.get(1), "QUEUED", name, sid);
                assertEvent(missed.get(2), "GRANTED", name, sid);
                assertThat(missed.get(2).token()).isEqualTo(second);
                if (!how.isEmpty()) {
                    // then live, with no duplicate of the replay
                    release(sid, name, second);
                    SseTestClient.Event live = sse.next();
                    assertEvent(live, "RELEASED", name, sid);
                    assertThat(live.token()).isEqualTo(second);
                }
            }
        }
    }

    @Test
    void resume_olderThanTheHistory_getsOneResyncWithTheCurrentHolders_thenLiveEvents() throws Exception {
        String name = fresh("resync");
        String holder = openSession("holder", 60_000);
        String waiter = openSession("waiter", 60_000);
        long token;
        long seen;
        CompletableFuture<HttpTestClient.Reply> waits;
        try (SseTestClient sse = watch("?name=" + name)) {
            token = acquire(holder, name).get("token").asLong();
            sse.next(2);
            waits = wait(waiter, name, "w-1");
            seen = sse.next().revision();
        }
        // A gateway started now has no history before its start: the same resume there is too old.
        Gateway restarted = fixture.gateway();
        try (SseTestClient sse = SseTestClient.open(restarted.httpPort(), "?name=" + name + "&since_revision=" + (seen - 1))) {
            SseTestClient.Event resync = sse.next();
            assertThat(resync.type()).isEqualTo("RESYNC");
            assertThat(resync.revision()).isGreaterThanOrEqualTo(seen);
            JsonNode lock = resync.data().get("locks").get(0);
            assertThat(lock.get("name").asText()).isEqualTo(name);
            assertThat(lock.get("mode").asText()).isEqualTo("EXCLUSIVE");
            assertThat(lock.get("holders")).hasSize(1);
            assertThat(lock.get("holders").get(0).get("session_id").asText()).isEqualTo(holder);
            assertThat(lock.get("holders").get(0).get("token").asLong()).isEqualTo(token);
            assertThat(lock.get("waiters")).hasSize(1);
            assertThat(lock.get("waiters").get(0).get("session_id").asText()).isEqualTo(waiter);

            release(holder, name, token);
            List<SseTestClient.Event> live = sse.next(2);
            assertEvent(live.get(0), "RELEASED", name, holder);
            assertEvent(live.get(1), "GRANTED", name, waiter);
            assertThat(live.get(0).revision()).isGreaterThan(resync.revision());
        }
        assertThat(waits.orTimeout(20, TimeUnit.SECONDS).join().json().get("status").asText()).isEqualTo("GRANTED");
        // The first gateway still has the history: the same resume there is no RESYNC.
        try (SseTestClient sse = SseTestClient.open(gateway.httpPort(), "?name=" + name + "&since_revision=" + seen)) {
            assertEvent(sse.next(), "RELEASED", name, holder);
        }
    }

    @Test
    void sinceRevisionZero_startsWithTheCurrentStateOfAFreeLock() {
        String name = fresh("free");
        try (SseTestClient sse = watch("?name=" + name + "&since_revision=0")) {
            SseTestClient.Event resync = sse.next();
            assertThat(resync.type()).isEqualTo("RESYNC");
            JsonNode lock = resync.data().get("locks").get(0);
            assertThat(lock.get("mode").asText()).isEqualTo("FREE");
            assertThat(lock.get("holders")).isEmpty();
        }
    }

    /**
     * A {@code since_revision} past every revision this gateway has (after a ZooKeeper restore, or
     * on a new ensemble, every saved revision is in the future) was accepted silently and the stream sent nothing at
     * all. It is answered with a RESYNC of the current state, and live events follow.
     */
    @Test
    void sinceRevisionInTheFuture_isAnsweredWithAResync_thenLiveEvents() {
        String name = fresh("future");
        String sid = openSession("future", 60_000);
        long token = acquire(sid, name).get("token").asLong();
        long future = token + 1_000_000_000L;
        for (Map<String, String> how : List.of(Map.<String, String>of(), Map.of("Last-Event-ID", Long.toString(future)))) {
            String query = how.isEmpty() ? "?name=" + name + "&since_revision=" + future : "?name=" + name;
            try (SseTestClient sse = SseTestClient.open(gateway.httpPort(), query, how)) {
                assertThat(sse.status()).isEqualTo(200);
                SseTestClient.Event resync = sse.next();
                assertThat(resync.type()).as(resync.toString()).isEqualTo("RESYNC");
                assertThat(resync.revision()).isGreaterThanOrEqualTo(token).isLessThan(future);
                assertThat(resync.id()).isEqualTo(Long.toString(resync.revision()));
                JsonNode lock = resync.data().get("locks").get(0);
                assertThat(lock.get("holders").get(0).get("token").asLong()).isEqualTo(token);
                if (!how.isEmpty()) {
                    release(sid, name, token);
                    token = acquire(sid, name).get("token").asLong();
                    List<SseTestClient.Event> live = sse.next(3);
                    assertEvent(live.get(0), "RELEASED", name, sid);
                    assertEvent(live.get(1), "QUEUED", name, sid);
                    assertEvent(live.get(2), "GRANTED", name, sid);
                    assertThat(live.get(0).revision()).isGreaterThan(resync.revision());
                }
            }
        }
    }

    /**
     * A number too large for a revision was reported as "must be at least 0". The 400 names the
     * field and its range.
     */
    @Test
    void tooLargeSinceRevision_isA400NamingTheFieldAndItsRange() {
        String huge = "99999999999999999999";
        HttpTestClient.Reply r = http.get("/v1/watch?name=ns/a&since_revision=" + huge);
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.json().get("field").asText()).isEqualTo("since_revision");
        assertThat(r.json().get("detail").asText()).as(r.toString())
                .doesNotContain("at least")
                .contains("between 0 and " + Long.MAX_VALUE).contains(huge);
        try (SseTestClient sse = SseTestClient.open(gateway.httpPort(), "?name=ns/a", Map.of("Last-Event-ID", huge))) {
            assertThat(sse.status()).isEqualTo(400);
            JsonNode problem = sse.next().data();
            assertThat(problem.get("field").asText()).isEqualTo("Last-Event-ID");
            assertThat(problem.get("detail").asText()).doesNotContain("at least").contains("between 0 and " + Long.MAX_VALUE);
        }
        HttpTestClient.Reply negative = http.get("/v1/watch?name=ns/a&since_revision=-99999999999999999999");
        assertThat(negative.status()).isEqualTo(400);
        assertThat(negative.json().get("detail").asText()).contains("between 0 and " + Long.MAX_VALUE);
    }

    @Test
    void badQueries_areProblemDocumentsNamingTheField() {
        assertBad("", "name");
        assertBad("?name=a/b&prefix=a", "prefix");
        assertBad("?name=NoNamespace", "name");
        assertBad("?name=ns", "name");
        assertBad("?prefix=Bad!", "prefix");
        assertBad("?prefix=ok/has%20space", "prefix");
        assertBad("?name=ns/a&since_revision=abc", "since_revision");
        assertBad("?name=ns/a&since_revision=-1", "since_revision");
        assertBad("?name=ns/a&other=1", "other");
    }

    @Test
    void badLastEventId_isAProblemDocument() {
        try (SseTestClient sse = SseTestClient.open(gateway.httpPort(), "?name=ns/a", Map.of("Last-Event-ID", "x"))) {
            assertThat(sse.status()).isEqualTo(400);
            SseTestClient.Event problem = sse.next();
            assertThat(problem.data().get("code").asText()).isEqualTo("INVALID_ARGUMENT");
            assertThat(problem.data().get("field").asText()).isEqualTo("Last-Event-ID");
        }
    }

    private static void assertBad(String query, String field) {
        HttpTestClient.Reply r = http.get("/v1/watch" + query);
        assertThat(r.status()).as(query + " -> " + r).isEqualTo(400);
        assertThat(r.isProblem()).isTrue();
        assertThat(r.json().get("code").asText()).isEqualTo("INVALID_ARGUMENT");
        assertThat(r.json().get("field").asText()).as(r.toString()).isEqualTo(field);
    }
}
