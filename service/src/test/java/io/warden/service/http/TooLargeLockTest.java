package io.warden.service.http;

import static io.warden.service.support.WardenFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.warden.console.model.LockState;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.Mode;
import io.warden.service.queue.QueueEntry;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * One lock whose queue listing no longer fits in a ZooKeeper reply cut every gateway that read it
 * off from ZooKeeper. ZooKeeper's client refuses a reply over its {@code jute.maxbuffer} and drops the connection; the
 * gateway reconnected, rebuilt its watch mirror (which reads every lock), got the oversize reply again, and so on; a
 * second gateway entered the same loop from one {@code GET /v1/locks/{name}}. The logs said only "ConnectionLoss" and
 * "could not (re)build the watch mirror".
 *
 * <p>Here the gateway's client accepts replies of at most {@value #PACKET} bytes (instead of 4 MiB), so the gateway lists
 * locks of up to 144 entries, and a lock with {@value #FOREIGN} entries made directly in ZooKeeper (as plain Curator
 * clients on the same node would make them; Warden admits at most {@value #MAX_ENTRIES}) is one it must not list.
 */
class TooLargeLockTest {
    private static final int PACKET = 20_000;
    private static final int MAX_ENTRIES = 100;
    private static final int FOREIGN = 400;
    private static final String BIG = "big/pile";

    private WardenFixture fixture;
    private Gateway gateway;
    private HttpTestClient http;
    private Logger root;
    private ListAppender<ILoggingEvent> logs;

    @BeforeEach
    void start() throws Exception {
        root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
        fixture = new WardenFixture();
        gateway = fixture.gateway(config());
        http = new HttpTestClient(gateway.httpPort(), OpenApiContract.load());
    }

    @AfterEach
    void stop() throws Exception {
        root.detachAppender(logs);
        fixture.close();
    }

    private io.warden.service.config.WardenConfig config() {
        return fixture.config().withZkMaxPacketBytes(PACKET).withMaxEntriesPerLock(MAX_ENTRIES);
    }

    /** Adds {@code n} SHARED queue nodes to the lock as a plain Curator client would: no Warden data, no request record. */
    private void pile(String name, int n) throws Exception {
        String path = WardenFixture.lockPath(name);
        if (fixture.curator.checkExists().forPath(path) == null) {
            fixture.curator.create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).forPath(path);
        }
        for (int made = 0; made < n; ) {
            List<CuratorOp> ops = new ArrayList<>();
            for (int i = 0; i < 100 && made < n; i++, made++) {
                ops.add(fixture.curator.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                        .forPath(path + "/" + QueueEntry.prefix(UUID.randomUUID().toString(), Mode.SHARED), new byte[0]));
            }
            fixture.curator.transaction().forOperations(ops);
        }
    }

    private void unpile(String name) throws Exception {
        String path = WardenFixture.lockPath(name);
        for (String child : fixture.curator.getChildren().forPath(path)) {
            if (fixture.curator.getData().forPath(path + "/" + child).length == 0) {
                fixture.curator.delete().forPath(path + "/" + child);
            }
        }
    }

    private String session(HttpTestClient client, String name) {
        HttpTestClient.Reply r = client.postJson("/v1/sessions", "client_id", name, "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    private static long zkSession(Gateway g) throws Exception {
        return g.curator().getZookeeperClient().getZooKeeper().getSessionId();
    }

    /** SUSPENDED and LOST states the gateway's ZooKeeper client went through. */
    private static double connectionLosses(Gateway g) {
        return g.metrics().registry().find("warden.zk.connection.state").counters().stream()
                .filter(c -> !"RECONNECTED".equals(c.getId().getTag("state")) && !"CONNECTED".equals(c.getId().getTag("state")))
                .mapToDouble(c -> c.count()).sum();
    }

    private List<ILoggingEvent> tooLargeLines() {
        return logs.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                .filter(e -> e.getFormattedMessage().contains(BIG) && e.getFormattedMessage().contains("too large"))
                .toList();
    }

    private static void assertTooLarge(HttpTestClient.Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(429);
        JsonNode doc = r.json();
        assertThat(doc.get("code").asText()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(doc.get("lock").asText()).isEqualTo(BIG);
        assertThat(doc.get("entries").asInt()).isEqualTo(FOREIGN);
        assertThat(doc.get("detail").asText()).contains(BIG).contains(FOREIGN + " entries").contains("zk-max-packet-bytes");
    }

    /**
     * The engine lists a lock without counting it first when the watch mirror knows it is small; a lock can outgrow that
     * count while the mirror's thread is behind (a burst of foreign creates on a busy machine: the 30-minute soak's
     * pile). Here a watch whose sink blocks holds the hub's thread while the lock goes from 2 entries to
     * {@value #FOREIGN} + 2; a read of it must still be a 429, not a listing over the packet limit.
     */
    @Test
    void aLockThatGrowsWhileTheWatchMirrorIsBehind_isCountedBeforeItIsListed() throws Exception {
        String s = session(http, "early");
        assertThat(http.postJson("/v1/acquire", "session_id", s, "name", BIG, "mode", "SHARED").json().get("status")
                .asText()).isEqualTo("GRANTED");
        long stallToken = http.postJson("/v1/acquire", "session_id", s, "name", "lag/stall").json().get("token").asLong();
        await("the mirror to know " + BIG + " is small", () -> !gateway.watches().queueSizes().mayHave(BIG, 72));
        java.util.concurrent.CountDownLatch stalled = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch resume = new java.util.concurrent.CountDownLatch(1);
        io.warden.service.watch.WatchSink blocking = new io.warden.service.watch.WatchSink() {
            @Override
            public boolean events(io.warden.service.watch.EventBatch batch, int[] selected) {
                stalled.countDown();
                try {
                    resume.await(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return true;
            }

            @Override
            public boolean resync(io.warden.service.watch.Resync resync) {
                return true;
            }

            @Override
            public void heartbeat() {
            }

            @Override
            public void close(String reason) {
            }
        };
        gateway.watches().subscribe(io.warden.service.watch.WatchFilter.name(io.warden.service.api.LockName.parse("lag/stall")),
                null, blocking);
        double losses = connectionLosses(gateway);
        try {
            // An event of the watched name: the sink takes the hub's thread and keeps it.
            assertThat(http.postJson("/v1/release", "session_id", s, "name", "lag/stall", "token", stallToken).status())
                    .isEqualTo(200);
            assertThat(stalled.await(20, java.util.concurrent.TimeUnit.SECONDS)).as("the hub's thread is held").isTrue();
            pile(BIG, FOREIGN);
            HttpTestClient.Reply r = http.get("/v1/locks/" + BIG);
            assertThat(r.status()).as(r.toString()).isEqualTo(429);
            assertThat(connectionLosses(gateway)).as("no SUSPENDED or LOST").isEqualTo(losses);
        } finally {
            resume.countDown();
        }
    }

    @Test
    void aLockMadeTooLargeByForeignNodes_costsTheGatewayNoConnection_andEveryReaderAnswers() throws Exception {
        String s = session(http, "bystander");
        assertThat(http.postJson("/v1/acquire", "session_id", s, "name", "other/a").json().get("status").asText())
                .isEqualTo("GRANTED");
        SseTestClient watch = SseTestClient.watch(gateway.httpPort(), "?prefix=other");
        pile(BIG, FOREIGN);
        long zkSession = zkSession(gateway);
        double losses = connectionLosses(gateway);

        for (int i = 0; i < 3; i++) { // a clear answer every time, not a 503 loop
            assertTooLarge(http.get("/v1/locks/" + BIG));
        }
        assertTooLarge(http.get("/v1/check?name=" + BIG + "&token=1"));
        HttpTestClient.Reply refused = http.postJson("/v1/acquire", "session_id", s, "name", BIG, "mode", "SHARED");
        assertThat(refused.status()).as(refused.toString()).isEqualTo(429);
        assertThat(refused.json().get("detail").asText()).contains(BIG).contains("max-entries-per-lock");
        assertThat(fixture.queueSize(BIG)).as("the refused request was taken back").isEqualTo(FOREIGN);

        // Everything else goes on: acquire, release, keepalive, watch.
        HttpTestClient.Reply b = http.postJson("/v1/acquire", "session_id", s, "name", "other/b");
        assertThat(b.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(http.postJson("/v1/release", "session_id", s, "name", "other/b", "token", b.json().get("token").asLong())
                .json().get("released").asBoolean()).isTrue();
        assertThat(http.post("/v1/sessions/" + s + "/keepalive", "{}").status()).isEqualTo(200);
        List<String> seen = new ArrayList<>();
        while (!seen.contains("RELEASED other/b")) {
            SseTestClient.Event e = watch.next();
            seen.add(e.type() + " " + e.name());
        }
        assertThat(seen).contains("GRANTED other/b");

        // Listings show it as too large; namespace counts and the console answer.
        JsonNode page = http.get("/v1/locks?namespace=big").json();
        assertThat(page.get("locks")).hasSize(1);
        assertThat(page.get("locks").get(0).get("name").asText()).isEqualTo(BIG);
        assertThat(page.get("locks").get(0).get("too_large").asBoolean()).isTrue();
        assertThat(page.get("locks").get(0).get("entries").asInt()).isEqualTo(FOREIGN);
        HttpTestClient.Reply spaces = http.get("/v1/namespaces");
        assertThat(spaces.status()).as(spaces.toString()).isEqualTo(200);
        JsonNode big = null;
        for (JsonNode ns : spaces.json().get("namespaces")) {
            if (ns.get("namespace").asText().equals("big")) {
                big = ns;
            }
        }
        assertThat(big).as("namespace big in %s", spaces).isNotNull();
        assertThat(big.get("locks").asInt()).isEqualTo(1);
        assertThat(big.get("too_large_locks").asInt()).isEqualTo(1);
        LockState shown = gateway.consoleBackend().snapshot().join().locks().stream()
                .filter(l -> l.name().equals(BIG)).findFirst().orElseThrow();
        assertThat(shown.tooLargeEntries()).isEqualTo(FOREIGN);
        assertThat(gateway.consoleBackend().lock(BIG).join()).hasValueSatisfying(d ->
                assertThat(d.lock().tooLargeEntries()).isEqualTo(FOREIGN));
        HttpResponse<String> consolePage = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + gateway.httpPort() + "/console/locks/" + BIG)).timeout(Duration.ofSeconds(20))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(consolePage.statusCode()).isEqualTo(200);
        assertThat(consolePage.body()).contains("too large").contains(String.valueOf(FOREIGN));

        assertThat(zkSession(gateway)).as("the same ZooKeeper session throughout").isEqualTo(zkSession);
        assertThat(connectionLosses(gateway)).as("no SUSPENDED or LOST").isEqualTo(losses);
        assertThat(gateway.warden().ready()).isTrue();

        // The cause, named: a metric with the lock, its entries and the packet limit, and one WARN line for the lock.
        assertThat(gateway.metrics().registry().find("warden.lock.too.large.entries").tag("lock", BIG).gauge().value())
                .isEqualTo(FOREIGN);
        assertThat(gateway.metrics().registry().find("warden.zk.max.packet.bytes").gauge().value()).isEqualTo(PACKET);
        List<ILoggingEvent> lines = tooLargeLines();
        assertThat(lines).as("one WARN for the lock, however often it is read").hasSize(1);
        assertThat(lines.get(0).getFormattedMessage()).contains(FOREIGN + " entries").contains(String.valueOf(PACKET));
        watch.close();
    }

    @Test
    void theWatchMirror_isRebuilt_withTheLargeLockPresent_afterAReconnectAndByAGatewayStartingAfterIt() throws Exception {
        pile(BIG, FOREIGN);
        SseTestClient watch = SseTestClient.watch(gateway.httpPort(), "?prefix=big");
        await("the first gateway has the pile in its mirror", () -> gateway.watches().counts().join()
                .map(c -> c.waiters() + c.holds() >= FOREIGN).orElse(false));

        fixture.server.restart(); // every client reconnects; the gateway rebuilds its mirror from a full read
        SseTestClient.Event resync;
        do {
            resync = watch.next();
        } while (!resync.type().equals("RESYNC"));
        JsonNode locks = resync.data().get("locks");
        assertThat(locks).hasSize(1);
        assertThat(locks.get(0).get("name").asText()).isEqualTo(BIG);
        assertThat(locks.get(0).get("too_large").asBoolean()).isTrue();
        assertThat(locks.get(0).get("entries").asInt()).isEqualTo(FOREIGN);

        Gateway second = fixture.gateway(config()); // its first read of the cell meets the pile
        assertThat(second.watches().counts().join()).as("the second gateway's mirror is ready").isPresent();
        HttpTestClient http2 = new HttpTestClient(second.httpPort(), OpenApiContract.load());
        assertTooLarge(http2.get("/v1/locks/" + BIG));
        String s = session(http2, "after");
        SseTestClient other = SseTestClient.watch(second.httpPort(), "?prefix=other");
        HttpTestClient.Reply c = http2.postJson("/v1/acquire", "session_id", s, "name", "other/c");
        assertThat(c.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(other.next().type()).isEqualTo("QUEUED");
        assertThat(other.next().type()).isEqualTo("GRANTED");
        assertThat(gateway.warden().ready()).isTrue();
        watch.close();
        other.close();
    }

    @Test
    void aWaiter_onALockThatGrowsTooLargeBehindIt_waits_andIsGrantedOnceItShrinks() throws Exception {
        var w = gateway.warden();
        String a = WardenFixture.session(w, "first", 60_000);
        String b = WardenFixture.session(w, "second", 60_000);
        AcquireResult held = WardenFixture.join(w.acquire(WardenFixture.exclusive(a, BIG, 0)));
        CompletableFuture<AcquireResult> waiting = w.acquire(WardenFixture.exclusive(b, BIG, 120_000));
        await("the second request is queued", () -> fixture.queueSize(BIG) == 2);
        pile(BIG, FOREIGN);
        long zkSession = zkSession(gateway);

        assertThat(w.release(a, io.warden.service.api.LockName.parse(BIG), held.token()).join()).isTrue();
        await("the waiter looked and found the lock too large", () -> !tooLargeLines().isEmpty());
        assertThat(waiting).as("still waiting: it cannot be decided, it is not refused").isNotDone();

        unpile(BIG);
        // Its next look comes on the gateway's clock (a second, doubling): advance it, a second at a time, at most 30 s
        // (its session's TTL is 60 s), awaiting the answer after each step.
        for (int i = 0; i < 30 && !waiting.isDone(); i++) {
            fixture.clock.advance(Duration.ofSeconds(1));
            try {
                await("an answer", Duration.ofMillis(300), waiting::isDone);
            } catch (AssertionError notYet) {
                // not this second
            }
        }
        assertThat(waiting.join().status()).isEqualTo(AcquireResult.Status.GRANTED);
        assertThat(zkSession(gateway)).isEqualTo(zkSession);
        assertThat(gateway.metrics().registry().find("warden.lock.too.large.entries").tag("lock", BIG).gauge())
                .as("no longer reported once listable").isNull();
    }
}
