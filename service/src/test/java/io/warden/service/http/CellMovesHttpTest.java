package io.warden.service.http;

import io.warden.service.Gateway;
import io.warden.service.support.TwoCellFixture;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code PUT /v1/namespaces/{namespace}/cell} on a gateway with two cells (each a real ZooKeeper server): the default
 * one and {@code b}, which serves {@code pay} at the start. A move flips the namespace with its tokens still growing;
 * acquires during it wait and go on in the new cell; holds left at the deadline are ended; a move cut short is completed
 * by asking again, and only towards the cell it was going to.
 */
class CellMovesHttpTest {
    private TwoCellFixture cells;
    private WardenFixture fx;
    private CuratorFramework zkB;
    private TestingServer cellB;
    private Gateway gw;
    private HttpTestClient http;

    @BeforeEach
    void setUp() throws Exception {
        cells = new TwoCellFixture();
        fx = cells.fx;
        zkB = cells.zkB;
        cellB = cells.cellB;
        gw = cells.gateway;
        http = new HttpTestClient(gw.httpPort(), OpenApiContract.load());
    }

    @AfterEach
    void tearDown() throws Exception {
        cells.close();
    }

    private String open() {
        return http.postJson("/v1/sessions", "client_id", "c", "ttl_ms", 60_000).json().get("session_id").asText();
    }

    private HttpTestClient.Reply acquire(String session, String name, long waitMs) {
        return http.postJson("/v1/acquire", "session_id", session, "name", name, "wait_ms", waitMs);
    }

    private HttpTestClient.Reply move(String namespace, String cell, long deadlineMs) {
        return http.send("PUT", "/v1/namespaces/" + namespace + "/cell",
                "{\"cell\":\"" + cell + "\",\"deadline_ms\":" + deadlineMs + "}", "application/json");
    }

    /** The gateway runs on the fixture's manual clock: the move's polls and deadline move only with it. */
    private <T> T advanceUntilDone(CompletableFuture<T> f) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!f.isDone() && System.nanoTime() < until) {
            fx.clock.advance(java.time.Duration.ofMillis(100));
            Thread.sleep(20);
        }
        return f.get(1, TimeUnit.SECONDS);
    }

    private static int queueSize(CuratorFramework zk, String name) throws Exception {
        return TwoCellFixture.queueSize(zk, name);
    }

    private static String routes(CuratorFramework zk) throws Exception {
        return new String(zk.getData().forPath(CellPaths.ROUTING), StandardCharsets.UTF_8);
    }

    @Test
    void aMoveFlipsTheNamespace_andItsTokensKeepGrowing_bothWays() throws Exception {
        String s = open();
        HttpTestClient.Reply first = acquire(s, "pay/x", 0);
        long onB = first.json().get("token").asLong();
        http.postJson("/v1/release", "session_id", s, "name", "pay/x", "token", onB);
        // The default cell's zxids are far below b's tokens here only if b is busier; make it so, to test the floor.
        for (int i = 0; i < 50; i++) {
            zkB.setData().forPath(CellPaths.PROBE, new byte[0]);
        }
        HttpTestClient.Reply again = acquire(s, "pay/x", 0);
        long lastOnB = again.json().get("token").asLong();
        http.postJson("/v1/release", "session_id", s, "name", "pay/x", "token", lastOnB);

        HttpTestClient.Reply moved = move("pay", "default", 5_000);
        assertThat(moved.status()).as(moved.text()).isEqualTo(200);
        assertThat(moved.json().get("from").asText()).isEqualTo("b");
        assertThat(moved.json().get("to").asText()).isEqualTo("default");
        assertThat(moved.json().get("forced").asInt()).isZero();

        HttpTestClient.Reply onDefault = acquire(s, "pay/x", 0);
        assertThat(onDefault.json().get("status").asText()).isEqualTo("GRANTED");
        long token = onDefault.json().get("token").asLong();
        assertThat(token).as("a token of the new cell is above every token of the old one").isGreaterThan(lastOnB);
        assertThat(queueSize(fx.curator, "pay/x")).as("the hold is in the default cell now").isEqualTo(1);
        assertThat(queueSize(zkB, "pay/x")).isZero();
        assertThat(routes(zkB)).doesNotContain("pay");
        assertThat(routes(fx.curator)).doesNotContain("pay");
        assertThat(http.get("/v1/cells").json().get("cells").get(1).get("namespaces")).isEmpty();
        http.postJson("/v1/release", "session_id", s, "name", "pay/x", "token", token);

        assertThat(move("pay", "default", 5_000).json().get("from").asText()).as("already there: nothing moves")
                .isEqualTo("default");
        HttpTestClient.Reply back = move("pay", "b", 5_000);
        assertThat(back.status()).as(back.text()).isEqualTo(200);
        HttpTestClient.Reply onBAgain = acquire(s, "pay/x", 0);
        assertThat(onBAgain.json().get("token").asLong()).as("and back again, still growing").isGreaterThan(token);
        assertThat(queueSize(zkB, "pay/x")).isEqualTo(1);
    }

    @Test
    void acquiresDuringAMove_wait_andAreGrantedInTheNewCell_onceTheOldHoldsEnd() throws Exception {
        String holder = open();
        String waiter = open();
        long held = acquire(holder, "pay/x", 0).json().get("token").asLong();

        CompletableFuture<HttpTestClient.Reply> moving = CompletableFuture.supplyAsync(() -> move("pay", "default", 20_000));
        WardenFixture.await("pay frozen in cell b", () -> {
            try {
                return routes(zkB).contains("moving");
            } catch (Exception e) {
                return false;
            }
        });
        CompletableFuture<HttpTestClient.Reply> waiting = http.postAsync("/v1/acquire",
                "{\"session_id\":\"" + waiter + "\",\"name\":\"pay/y\",\"wait_ms\":20000}");
        CompletableFuture<HttpTestClient.Reply> waitingMulti = http.postAsync("/v1/acquire",
                "{\"session_id\":\"" + waiter + "\",\"names\":[\"pay/m1\",\"pay/m2\"],\"wait_ms\":20000}");
        HttpTestClient.Reply tried = acquire(waiter, "pay/z", 0);
        assertThat(tried.status()).as("a try during the move: 503, nothing written").isEqualTo(503);
        Thread.sleep(300);
        assertThat(waiting).as("an acquire with a wait is held while the holds drain").isNotDone();
        assertThat(moving).isNotDone();
        assertThat(queueSize(zkB, "pay/y") + queueSize(fx.curator, "pay/y")).isZero();

        http.postJson("/v1/release", "session_id", holder, "name", "pay/x", "token", held);
        HttpTestClient.Reply moved = advanceUntilDone(moving);
        assertThat(moved.status()).as(moved.text()).isEqualTo(200);
        HttpTestClient.Reply granted = waiting.get(20, TimeUnit.SECONDS);
        assertThat(granted.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(granted.json().get("token").asLong()).isGreaterThan(held);
        assertThat(queueSize(fx.curator, "pay/y")).as("granted in the new cell").isEqualTo(1);
        HttpTestClient.Reply multi = waitingMulti.get(20, TimeUnit.SECONDS);
        assertThat(multi.json().get("status").asText()).as(multi.text()).isEqualTo("GRANTED");
        assertThat(queueSize(fx.curator, "pay/m1") + queueSize(fx.curator, "pay/m2")).isEqualTo(2);
    }

    @Test
    void holdsLeftAtTheDeadline_areEnded_andTheMoveGoesOn() throws Exception {
        String holder = open();
        String waiter = open();
        long held = acquire(holder, "pay/x", 0).json().get("token").asLong();
        acquire(waiter, "pay/x", 0); // refused: held
        CompletableFuture<HttpTestClient.Reply> queued = http.postAsync("/v1/acquire",
                "{\"session_id\":\"" + waiter + "\",\"name\":\"pay/x\",\"wait_ms\":30000,\"request_id\":\"q\"}");
        WardenFixture.await("the waiter is queued in cell b", () -> {
            try {
                return queueSize(zkB, "pay/x") == 2;
            } catch (Exception e) {
                return false;
            }
        });

        HttpTestClient.Reply moved = advanceUntilDone(CompletableFuture.supplyAsync(() -> move("pay", "default", 300)));
        assertThat(moved.status()).as(moved.text()).isEqualTo(200);
        assertThat(moved.json().get("forced").asInt()).as("the hold and the queued request").isEqualTo(2);
        assertThat(queueSize(zkB, "pay/x")).isZero();
        HttpTestClient.Reply ended = queued.get(20, TimeUnit.SECONDS);
        assertThat(ended.status() == 200 ? ended.json().get("status").asText() : "problem " + ended.status())
                .as("the queued call is answered, not granted: %s", ended.text()).isNotEqualTo("GRANTED");
        assertThat(http.postJson("/v1/release", "session_id", holder, "name", "pay/x", "token", held).json()
                .get("released").asBoolean()).as("the old token holds nothing").isFalse();
        HttpTestClient.Reply now = acquire(holder, "pay/x", 0);
        assertThat(now.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(now.json().get("token").asLong()).isGreaterThan(held);
        assertThat(fx.curator.getChildren().forPath(CellPaths.AUDIT).size()).as("the ended holds and the move, audited")
                .isGreaterThanOrEqualTo(3);
    }

    @Test
    void aHoldKeptForAnExpiredSessionsLockDelay_isWaitedFor_neverEnded() throws Exception {
        String s = http.postJson("/v1/sessions", "client_id", "c", "ttl_ms", 60_000, "lock_delay_ms", 3_000).json()
                .get("session_id").asText();
        acquire(s, "pay/x", 0);
        assertThat(gw.sessionManager("b").expireNow(s).get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(queueSize(zkB, "pay/x")).as("kept for the lock-delay").isEqualTo(1);

        CompletableFuture<HttpTestClient.Reply> moving = CompletableFuture.supplyAsync(() -> move("pay", "default", 0));
        HttpTestClient.Reply moved = advanceUntilDone(moving);
        assertThat(moved.status()).as(moved.text()).isEqualTo(200);
        assertThat(moved.json().get("forced").asInt()).as("nothing ended: the lock-delay ran out").isZero();
        assertThat(moved.json().get("took_ms").asLong()).as("the move waited for the lock-delay").isGreaterThanOrEqualTo(2_500);
        assertThat(queueSize(zkB, "pay/x")).isZero();
    }

    @Test
    void aMoveCutShort_isCompletedByAskingAgain_onlyTowardsItsCell() throws Exception {
        String s = open();
        // As a gateway leaves it that stopped after the freeze: pay frozen in b on its way to default.
        zkB.setData().forPath(CellPaths.ROUTING, "{\"serves\":[\"pay\"],\"moving\":{\"pay\":\"default\"}}"
                .getBytes(StandardCharsets.UTF_8));
        WardenFixture.await("the gateway sees pay frozen", () -> acquire(s, "pay/a", 0).status() == 503);

        HttpTestClient.Reply elsewhere = move("pay", "b", 1_000);
        assertThat(elsewhere.status()).as("frozen towards default: only that move can be completed").isEqualTo(409);
        assertThat(elsewhere.json().get("detail").asText()).contains("default");

        HttpTestClient.Reply completed = move("pay", "default", 1_000);
        assertThat(completed.status()).as(completed.text()).isEqualTo(200);
        assertThat(acquire(s, "pay/a", 0).json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(queueSize(fx.curator, "pay/a")).isEqualTo(1);
    }

    @Test
    void aCellsTokenFloor_isRaisedAboveAGivenToken_neverLowered() throws Exception {
        String s = open();
        long before = acquire(s, "pay/t", 0).json().get("token").asLong();
        http.postJson("/v1/release", "session_id", s, "name", "pay/t", "token", before);
        HttpTestClient.Reply raised = http.postJson("/v1/cells/b/token-floor", "above", before + 1_000_000);
        assertThat(raised.status()).as(raised.text()).isEqualTo(200);
        assertThat(raised.json().has("floor")).isTrue();
        assertThat(acquire(s, "pay/t", 0).json().get("token").asLong()).isGreaterThan(before + 1_000_000);
        assertThat(http.postJson("/v1/cells/b/token-floor", "above", before).json().has("floor"))
                .as("above already: nothing raised").isFalse();
        assertThat(http.postJson("/v1/cells/nowhere/token-floor", "above", 5).json().get("field").asText()).isEqualTo("cell");
        assertThat(http.postJson("/v1/cells/b/token-floor", "above", 0).json().get("field").asText()).isEqualTo("above");
    }

    @Test
    void badMoves_areRefusedNamingTheField_andChangeNothing() throws Exception {
        String before = routes(zkB);
        assertThat(move("pay", "nowhere", 1_000).json().get("field").asText()).isEqualTo("cell");
        assertThat(move("pay", "B", 1_000).json().get("field").asText()).isEqualTo("cell");
        assertThat(move("pay", "default", 300_001).json().get("field").asText()).isEqualTo("deadline_ms");
        assertThat(move("Pay", "default", 1_000).json().get("field").asText()).isEqualTo("namespace");
        assertThat(http.send("PUT", "/v1/namespaces/pay/cell", "{\"cell\":\"default\",\"x\":1}", "application/json")
                .status()).isEqualTo(400);
        assertThat(routes(zkB)).isEqualTo(before);
    }
}
