package io.warden.service.lock;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.Deadlock;
import io.warden.service.api.DeadlockException;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnDeadlock;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import io.warden.service.watch.WatchHub;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Deadlocks found in the watch mirror and broken by one conditional multi (docs/decisions/0013-deadlock-detection.md),
 * with sessions on two gateways. Time for the delay is the fixture's manual clock: a victim is removed only when the
 * test moves it past the delay.
 */
class DeadlockTest {
    private static final long WAIT = 60_000;

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    private static AcquireRequest fail(AcquireRequest r) {
        return r.withOnDeadlock(OnDeadlock.FAIL);
    }

    private static List<Deadlock> deadlocks(Gateway g) {
        return g.watches().deadlocks().deadlocks();
    }

    private static void awaitDeadlocks(Gateway g, int count, int sessions) {
        await("gateway " + g.gatewayId() + " shows " + count + " deadlock(s) of " + sessions + " sessions",
                Duration.ofSeconds(1), () -> {
                    List<Deadlock> d = deadlocks(g);
                    return d.size() == count && (count == 0 || d.get(0).members().stream()
                            .map(Deadlock.Member::sessionId).distinct().count() == sessions);
                });
    }

    private static Throwable cause(CompletableFuture<?> f) {
        try {
            f.join();
            throw new AssertionError("expected a failure, got " + f.join());
        } catch (CompletionException e) {
            return e.getCause();
        }
    }

    @Test
    void twoSessionsOnTwoGateways_allWaiting_isReportedWithinASecond_andLeftAlone() {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String a = session(w1, "alice", 60_000);
        String b = session(w2, "bob", 60_000);
        join(w1.acquire(exclusive(a, "dl/x", 0)));
        join(w2.acquire(exclusive(b, "dl/y", 0)));
        AcquireRequest aRequest = exclusive(a, "dl/y", WAIT);
        AcquireRequest bRequest = exclusive(b, "dl/x", WAIT);
        CompletableFuture<AcquireResult> aWaits = w1.acquire(aRequest);
        CompletableFuture<AcquireResult> bWaits = w2.acquire(bRequest);

        awaitDeadlocks(g1, 1, 2);
        awaitDeadlocks(g2, 1, 2);
        Deadlock d = deadlocks(g1).get(0);
        assertThat(d.members()).extracting(Deadlock.Member::sessionId, Deadlock.Member::name, Deadlock.Member::waitsFor)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(a, "dl/y", List.of(b)),
                        org.assertj.core.groups.Tuple.tuple(b, "dl/x", List.of(a)));
        assertThat(d.members()).allMatch(m -> m.onDeadlock() == OnDeadlock.WAIT);
        assertThat(deadlocks(g2).get(0).members()).isEqualTo(d.members()); // every gateway computes the same

        // Listed over HTTP, each member names its client's request id (read from its record when listed).
        HttpResponse<String> listed = get(g2, "/v1/deadlocks");
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(listed.body()).contains("\"request_id\":\"" + aRequest.requestId() + "\"")
                .contains("\"request_id\":\"" + bRequest.requestId() + "\"");

        // The console's wait-for page draws the same graph: the same deadlock, and its two edges.
        io.warden.console.model.WaitFor page = g1.consoleBackend().waitFor().join();
        assertThat(page.cycles()).singleElement().satisfies(c -> assertThat(c.members())
                .extracting(io.warden.console.model.WaitFor.Member::sessionId, io.warden.console.model.WaitFor.Member::requestId)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(a, aRequest.requestId()),
                        org.assertj.core.groups.Tuple.tuple(b, bRequest.requestId())));
        assertThat(page.edges()).extracting(io.warden.console.model.WaitFor.Edge::waiter,
                        io.warden.console.model.WaitFor.Edge::blocker, io.warden.console.model.WaitFor.Edge::blockerHolds)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(a, b, true),
                        org.assertj.core.groups.Tuple.tuple(b, a, true));

        fx.clock.advance(Duration.ofSeconds(5)); // far past the delay and the grace: nobody said FAIL
        assertThat(deadlocks(g1)).hasSize(1);
        assertThat(aWaits).isNotDone();
        assertThat(bWaits).isNotDone();
    }

    @Test
    void threeSessionsOnTwoGateways_theYoungestFailRequestIsTheOneVictim_andItsRetryAnywhereGetsTheSame409() {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String a = session(w1, "a", 60_000);
        String b = session(w2, "b", 60_000);
        String c = session(w1, "c", 60_000);
        join(w1.acquire(exclusive(a, "dl/x", 0)));
        join(w2.acquire(exclusive(b, "dl/y", 0)));
        join(w1.acquire(exclusive(c, "dl/z", 0)));
        CompletableFuture<AcquireResult> aWaits = w1.acquire(fail(exclusive(a, "dl/y", WAIT)));
        await("a queued", () -> fx.queueSize("dl/y") == 2);
        CompletableFuture<AcquireResult> bWaits = w2.acquire(exclusive(b, "dl/z", WAIT));
        await("b queued", () -> fx.queueSize("dl/z") == 2);
        AcquireRequest cRequest = fail(exclusive(c, "dl/x", WAIT));
        CompletableFuture<AcquireResult> cWaits = w1.acquire(cRequest);

        awaitDeadlocks(g1, 1, 3);
        awaitDeadlocks(g2, 1, 3);
        assertThat(aWaits).isNotDone();
        assertThat(cWaits).isNotDone();

        fx.clock.advance(Gateway.DEADLOCK_DELAY.plusMillis(50));
        Throwable failed = cause(cWaits.orTimeout(5, java.util.concurrent.TimeUnit.SECONDS));
        assertThat(failed).isInstanceOf(DeadlockException.class);
        Deadlock cycle = ((DeadlockException) failed).cycle();
        assertThat(cycle.members()).extracting(Deadlock.Member::sessionId).containsExactlyInAnyOrder(a, b, c);
        awaitDeadlocks(g1, 0, 0);
        awaitDeadlocks(g2, 0, 0);
        fx.clock.advance(Duration.ofSeconds(5));
        assertThat(aWaits).isNotDone(); // exactly one request failed; the holders keep their holds
        assertThat(bWaits).isNotDone();
        assertThat(fx.queueSize("dl/x")).isEqualTo(1);

        // A repeat of the victim's acquire (a lost reply), on either gateway, is the same 409 with the same cycle.
        for (Warden w : List.of(w1, w2)) {
            Throwable again = cause(w.acquire(cRequest));
            assertThat(again).isInstanceOf(DeadlockException.class);
            assertThat(((DeadlockException) again).cycle().members()).isEqualTo(cycle.members());
        }
        assertThat(fx.queueSize("dl/x")).isEqualTo(1);
    }

    @Test
    void victimWhoseCallIsHeldNowhere_isRemovedByAnotherGatewayAfterTheGrace() {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String a = session(w1, "a", 60_000);
        String b = session(w2, "b", 60_000);
        join(w1.acquire(exclusive(a, "dl/x", 0)));
        join(w2.acquire(exclusive(b, "dl/y", 0)));
        CompletableFuture<AcquireResult> aWaits = w1.acquire(exclusive(a, "dl/y", WAIT));
        // b's call: KEEP with a short wait, so it answers QUEUED and is held nowhere while its request stays.
        AcquireRequest bRequest = new AcquireRequest(b, LockName.parse("dl/x"), Mode.EXCLUSIVE, 100,
                UUID.randomUUID().toString(), OnTimeout.KEEP, true, 0, OnDeadlock.FAIL);
        CompletableFuture<AcquireResult> bCall = w2.acquire(bRequest);
        await("b's call held, its timer set", () -> g2.pendingAcquires() == 1);
        fx.clock.advance(Duration.ofMillis(150));
        assertThat(join(bCall).status()).isEqualTo(AcquireResult.Status.QUEUED);
        awaitDeadlocks(g1, 1, 2);

        fx.clock.advance(Gateway.DEADLOCK_DELAY.plusMillis(50));
        assertThat(fx.queueSize("dl/x")).isEqualTo(2); // nobody holds its call: the others wait for the grace
        fx.clock.advance(Duration.ofMillis(1100));
        await("the orphan victim removed", () -> fx.queueSize("dl/x") == 1);
        assertThat(cause(w1.acquire(bRequest))).isInstanceOf(DeadlockException.class);
        assertThat(aWaits).isNotDone();
    }

    @Test
    void holderReleasingBeforeTheDelay_noVictim() {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String a = session(w1, "a", 60_000);
        String b = session(w2, "b", 60_000);
        long x = join(w1.acquire(exclusive(a, "dl/x", 0))).token();
        join(w2.acquire(exclusive(b, "dl/y", 0)));
        CompletableFuture<AcquireResult> aWaits = w1.acquire(fail(exclusive(a, "dl/y", WAIT)));
        await("a queued", () -> fx.queueSize("dl/y") == 2);
        CompletableFuture<AcquireResult> bWaits = w2.acquire(fail(exclusive(b, "dl/x", WAIT)));
        awaitDeadlocks(g1, 1, 2);
        awaitDeadlocks(g2, 1, 2);

        assertThat(w1.release(a, LockName.parse("dl/x"), x).join()).isTrue(); // a lets go within the delay
        assertThat(join(bWaits).status()).isEqualTo(AcquireResult.Status.GRANTED);
        awaitDeadlocks(g1, 0, 0);
        awaitDeadlocks(g2, 0, 0);
        fx.clock.advance(Duration.ofSeconds(5));
        assertThat(aWaits).isNotDone();
    }

    @Test
    void semaphoreWaiterThatAnotherHolderCanLetIn_isNoDeadlock() throws Exception {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String a = session(w1, "a", 60_000);
        String b = session(w2, "b", 60_000);
        String c = session(w2, "c", 60_000);
        join(w1.acquire(SemaphoreTest.semaphore(a, "dl/sem", 2, 0)));
        join(w2.acquire(SemaphoreTest.semaphore(b, "dl/sem", 2, 0)));
        join(w2.acquire(exclusive(c, "dl/x", 0)));
        // c waits for one of a or b to go; a waits for c. b waits for nobody: c gets in when b goes.
        CompletableFuture<AcquireResult> cWaits = w2.acquire(fail(SemaphoreTest.semaphore(c, "dl/sem", 2, WAIT)));
        await("c queued", () -> fx.queueSize("dl/sem") == 3);
        CompletableFuture<AcquireResult> aWaits = w1.acquire(fail(exclusive(a, "dl/x", WAIT)));
        await("a queued", () -> fx.queueSize("dl/x") == 2);
        assertNoDeadlockAfterAComputation(g1);
        fx.clock.advance(Duration.ofSeconds(5));
        assertThat(cWaits).isNotDone();
        assertThat(aWaits).isNotDone();
    }

    @Test
    void sharedHolders_aSharedWaiterIsNotBlocked_andAnUpgradeBehindItsOwnHoldIsNoDeadlock() {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String a = session(w1, "a", 60_000);
        String b = session(w2, "b", 60_000);
        join(w1.acquire(shared(a, "dl/s", 0)));
        join(w2.acquire(shared(b, "dl/s", 0)));
        join(w2.acquire(exclusive(b, "dl/x", 0)));
        // a waits for x (held by b); b's second SHARED request joins the shared holders: no cycle through them.
        CompletableFuture<AcquireResult> aWaits = w1.acquire(exclusive(a, "dl/x", WAIT));
        assertThat(join(w2.acquire(shared(b, "dl/s", WAIT))).status()).isEqualTo(AcquireResult.Status.GRANTED);
        assertNoDeadlockAfterAComputation(g2);
        assertThat(aWaits).isNotDone();

        // An upgrade with FAIL: u waits EXCLUSIVE on u2, which it holds SHARED itself. Another thread of u's client may
        // hold that SHARED grant and let go, so it is no deadlock: nothing is reported and the request is not failed.
        String u = session(w1, "upgrader", 60_000);
        AcquireResult read = join(w1.acquire(shared(u, "dl/u", 0)));
        CompletableFuture<AcquireResult> upgrade = w1.acquire(fail(exclusive(u, "dl/u", WAIT)));
        await("the upgrade is queued", () -> fx.queueSize("dl/u") == 2);
        assertNoDeadlockAfterAComputation(g2);
        fx.clock.advance(Gateway.DEADLOCK_DELAY.plusMillis(50));
        assertNoDeadlockAfterAComputation(g1);
        assertThat(upgrade).isNotDone();
        assertThat(w1.release(u, io.warden.service.api.LockName.parse("dl/u"), read.token()).join()).isTrue();
        assertThat(join(upgrade).status()).as("its own other grant let go").isEqualTo(AcquireResult.Status.GRANTED);
    }

    /**
     * A multi-lock-shaped request, made straight in ZooKeeper the way an acquire's multi makes one (its record, a queue
     * node on each name under one uuid, the client and FAIL notes): it holds m1 and waits for m2 behind b, and b waits
     * for m1 behind it. It is one request of the cycle, its victim, and its removal takes both its entries (the holding
     * one too: a request that does not hold every name is not granted), so b gets m1.
     */
    @Test
    void multiLockRequest_holdingOneNameAndWaitingForAnother_isOneVictim_andAllItsEntriesGo() throws Exception {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        String a = session(w1, "a", 60_000);
        String b = session(w1, "b", 60_000);
        join(w1.acquire(exclusive(b, "dl/m2", 0)));
        String m1 = WardenFixture.lockPath("dl/m1");
        String m2 = WardenFixture.lockPath("dl/m2");
        fx.curator.create().creatingParentsIfNeeded().forPath(m1);
        String uuid = UUID.randomUUID().toString();
        String record = io.warden.service.zk.CellPaths.sessionRequest(a, uuid);
        byte[] recordData = io.warden.service.zk.Json.write(new io.warden.service.zk.RequestRecord("dl/m1", Mode.EXCLUSIVE, "multi-1"));
        byte[] nodeData = io.warden.service.zk.Json.write(new io.warden.service.queue.QueueNodeData(a, "a", "multi-1",
                Mode.EXCLUSIVE, null).withOnDeadlock(OnDeadlock.FAIL));
        String prefix = io.warden.service.queue.QueueEntry.prefix(uuid, Mode.EXCLUSIVE);
        String clientNote = record + "/" + io.warden.service.zk.CellPaths.clientIdNote("a");
        String failNote = record + "/" + io.warden.service.zk.CellPaths.DEADLOCK_FAIL_NOTE;
        var ops = fx.curator.transactionOp();
        fx.curator.transaction().forOperations(
                ops.create().forPath(record, recordData),
                ops.setData().withVersion(0).forPath(record, recordData),
                ops.create().withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL).forPath(m1 + "/" + prefix, nodeData),
                ops.create().withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL).forPath(m2 + "/" + prefix, nodeData),
                ops.create().forPath(clientNote), ops.delete().forPath(clientNote),
                ops.create().forPath(failNote), ops.delete().forPath(failNote));
        CompletableFuture<AcquireResult> bWaits = w1.acquire(exclusive(b, "dl/m1", WAIT));
        await("b queued on m1", () -> fx.queueSize("dl/m1") == 2);

        awaitDeadlocks(g2, 1, 2);
        // One member per waiting entry: a's request waits on m2 only (it holds m1), b's on m1.
        assertThat(deadlocks(g2).get(0).members()).extracting(Deadlock.Member::sessionId, Deadlock.Member::name,
                        Deadlock.Member::onDeadlock)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(a, "dl/m2", OnDeadlock.FAIL),
                        org.assertj.core.groups.Tuple.tuple(b, "dl/m1", OnDeadlock.WAIT));
        assertThat(deadlocks(g2).get(0).members()).filteredOn(m -> m.sessionId().equals(a))
                .extracting(Deadlock.Member::request).containsExactly(uuid);

        fx.clock.advance(Gateway.DEADLOCK_DELAY.plusMillis(1_100)); // its call is held nowhere: after the grace
        assertThat(join(bWaits).status()).isEqualTo(AcquireResult.Status.GRANTED);
        assertThat(fx.queueSize("dl/m1")).isEqualTo(1);
        assertThat(fx.queueSize("dl/m2")).isEqualTo(1);
        var stored = io.warden.service.zk.Json.readOrNull(fx.curator.getData().forPath(record),
                io.warden.service.zk.RequestRecord.class);
        assertThat(stored.done()).isTrue();
        assertThat(stored.deadlock().members()).extracting(Deadlock.Member::sessionId).contains(a, b);
    }

    /**
     * A multi-lock request made through the engine with on_deadlock FAIL: a holds p and waits for {q, r} (it holds r, q is
     * b's); b holds q and waits for p (WAIT). The multi-lock request is the one victim: its call (held on g1, and a repeat
     * of it on g2) answers 409 DEADLOCK, both its entries go (r, which it held, too), and a keeps p, so b waits on.
     */
    @Test
    void multiLockRequestThatSaidFail_isTheVictim_everyCallOfItAnswers409_andEveryEntryGoes() throws Exception {
        Gateway g1 = fx.gateway();
        Gateway g2 = fx.gateway();
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String a = session(w1, "a", 60_000);
        String b = session(w2, "b", 60_000);
        AcquireResult aHoldsP = join(w1.acquire(exclusive(a, "dl/p", 0)));
        join(w2.acquire(exclusive(b, "dl/q", 0)));
        io.warden.service.api.MultiAcquireRequest multi = new io.warden.service.api.MultiAcquireRequest(a,
                List.of(LockName.parse("dl/q"), LockName.parse("dl/r")), Mode.EXCLUSIVE, WAIT, "multi-fail",
                OnTimeout.CANCEL).withOnDeadlock(OnDeadlock.FAIL);
        CompletableFuture<io.warden.service.api.MultiAcquireResult> aWaits = w1.acquireAll(multi);
        await("a's entries made", () -> fx.queueSize("dl/q") == 2 && fx.queueSize("dl/r") == 1);
        CompletableFuture<io.warden.service.api.MultiAcquireResult> aAgain = w2.acquireAll(multi); // the same request
        CompletableFuture<AcquireResult> bWaits = w2.acquire(exclusive(b, "dl/p", WAIT));
        await("b queued on p", () -> fx.queueSize("dl/p") == 2);
        await("both calls of a's request held", () -> g1.pendingAcquires() + g2.pendingAcquires() == 3);

        awaitDeadlocks(g1, 1, 2);
        assertThat(deadlocks(g1).get(0).members()).filteredOn(m -> m.sessionId().equals(a))
                .singleElement().satisfies(m -> {
                    assertThat(m.onDeadlock()).isEqualTo(OnDeadlock.FAIL);
                    assertThat(m.name()).isEqualTo("dl/q");
                });
        fx.clock.advance(Gateway.DEADLOCK_DELAY.plusMillis(100));

        for (CompletableFuture<io.warden.service.api.MultiAcquireResult> call : List.of(aWaits, aAgain)) {
            assertThat(cause(call)).isInstanceOf(DeadlockException.class).satisfies(e -> assertThat(
                    ((DeadlockException) e).cycle().members()).extracting(Deadlock.Member::sessionId).contains(a, b));
        }
        assertThat(fx.queueSize("dl/q")).as("b's hold only").isEqualTo(1);
        assertThat(fx.queueSize("dl/r")).as("the entry a's request held goes with it").isZero();
        assertThat(bWaits).isNotDone(); // a keeps p
        awaitDeadlocks(g2, 0, 0);
        assertThat(w1.release(a, LockName.parse("dl/p"), aHoldsP.token()).join()).isTrue();
        assertThat(join(bWaits).status()).isEqualTo(AcquireResult.Status.GRANTED);
        // A repeat of the request afterwards, anywhere, gets the same answer from its record.
        assertThat(cause(w2.acquireAll(multi))).isInstanceOf(DeadlockException.class);
    }

    @Test
    void badOnDeadlockWithNames_is400NamingTheField_andNothingIsWritten() throws Exception {
        Gateway g = fx.gateway();
        String s = session(g.warden(), "a", 60_000);
        for (String value : List.of("\"MAYBE\"", "5", "\"fail\"")) {
            String body = "{\"session_id\":\"" + s + "\",\"names\":[\"dl/b1\",\"dl/b2\"],\"on_deadlock\":" + value + "}";
            HttpResponse<String> r = postAcquire(g, body);
            assertThat(r.statusCode()).as(value).isEqualTo(400);
            assertThat(r.body()).contains("\"field\":\"on_deadlock\"");
        }
        assertThat(fx.queueSize("dl/b1")).isZero();
        String ok = "{\"session_id\":\"" + s + "\",\"names\":[\"dl/b1\",\"dl/b2\"],\"on_deadlock\":\"FAIL\"}";
        HttpResponse<String> granted = postAcquire(g, ok);
        assertThat(granted.statusCode()).isEqualTo(200);
        assertThat(granted.body()).contains("\"status\":\"GRANTED\"");
    }

    @Test
    void badOnDeadlock_is400NamingTheField_andNothingIsWritten() throws Exception {
        Gateway g = fx.gateway();
        String s = session(g.warden(), "a", 60_000);
        long before = fx.lastZxid();
        for (String value : List.of("\"MAYBE\"", "5", "true", "\"fail\"")) {
            String body = "{\"session_id\":\"" + s + "\",\"name\":\"dl/bad\",\"on_deadlock\":" + value + "}";
            HttpResponse<String> r = postAcquire(g, body);
            assertThat(r.statusCode()).as(value).isEqualTo(400);
            assertThat(r.body()).contains("\"field\":\"on_deadlock\"");
        }
        assertThat(fx.queueSize("dl/bad")).isZero();
        HttpResponse<String> list = get(g, "/v1/deadlocks");
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.body()).contains("\"deadlocks\":[]");
    }

    /** {@code POST /v1/acquire} with {@code body} as JSON. */
    private static HttpResponse<String> postAcquire(Gateway g, String body) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.httpPort()
                    + "/v1/acquire")).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static HttpResponse<String> get(Gateway g, String path) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.httpPort()
                    + path)).GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Waits for a computation of the graph after now, then checks it found nothing. */
    private static void assertNoDeadlockAfterAComputation(Gateway g) {
        long n = g.watches().deadlockComputations();
        await("a computation of the graph", Duration.ofSeconds(1), () -> g.watches().deadlockComputations() > n
                || !g.watches().deadlocks().stale() && g.watches().deadlocks().revision() >= 0 && n > 0);
        WatchHub.DeadlockReport r = g.watches().deadlocks();
        assertThat(r.deadlocks()).isEmpty();
    }
}
