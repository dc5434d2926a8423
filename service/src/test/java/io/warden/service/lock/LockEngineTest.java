package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Contract §2 on a real ZooKeeper: each test fails when its guarantee is missing. */
class LockEngineTest {
    private WardenFixture fx;
    private Gateway gw;
    private Warden w;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gw = fx.gateway();
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void grant_tokenIsTheQueueNodesCzxid() throws Exception {
        String s = session(w, "a", 10_000);
        AcquireResult r = join(w.acquire(exclusive(s, "pay/inv-1", 0)));

        assertThat(r.status()).isEqualTo(Status.GRANTED);
        List<String> queue = fx.queue("pay/inv-1");
        assertThat(queue).hasSize(1);
        assertThat(queue.get(0)).matches("_c_[0-9a-f-]{36}-__WRIT__\\d{10}");
        Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath("pay/inv-1") + "/" + queue.get(0));
        assertThat(r.token()).isEqualTo(stat.getCzxid()).isPositive();
        assertThat(r.holders()).singleElement().satisfies(h -> {
            assertThat(h.sessionId()).isEqualTo(s);
            assertThat(h.clientId()).isEqualTo("a");
            assertThat(h.token()).isEqualTo(r.token());
        });
    }

    @Test
    void tryLock_heldByOther_timesOutAndLeavesNoQueueEntry() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        AcquireResult held = join(w.acquire(exclusive(a, "pay/x", 0)));

        AcquireResult r = join(w.acquire(exclusive(b, "pay/x", 0)));

        assertThat(r.status()).isEqualTo(Status.TIMED_OUT);
        assertThat(r.token()).isNull();
        assertThat(r.holders()).extracting(h -> h.token()).containsExactly(held.token());
        assertThat(fx.queue("pay/x")).hasSize(1);
        List<String> children = fx.curator.getChildren().forPath(CellPaths.session(b));
        assertThat(children).as("a tombstone and its end marker").hasSize(2);
        String record = children.stream().filter(c -> !c.startsWith("~")).findFirst().orElseThrow();
        assertThat(children).contains("~" + record + "_" + children.stream().filter(c -> c.startsWith("~")).findFirst()
                .orElseThrow().substring(record.length() + 2));
        assertThat(new String(fx.curator.getData().forPath(CellPaths.sessionRequest(b, record)))).contains("\"done\":true");
    }

    @Test
    void fencing_successiveExclusiveGrantsHaveStrictlyIncreasingTokens_andReleaseHandsOver() {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        AcquireResult first = join(w.acquire(exclusive(a, "pay/y", 0)));
        CompletableFuture<AcquireResult> waiting = w.acquire(exclusive(b, "pay/y", 60_000));
        await("b is queued", () -> fx.queueSize("pay/y") == 2 || waiting.isDone());
        assertThat(waiting).isNotDone();

        assertThat(w.release(a, LockName.parse("pay/y"), first.token()).join()).isTrue();

        AcquireResult second = join(waiting);
        assertThat(second.status()).isEqualTo(Status.GRANTED);
        assertThat(second.token()).isGreaterThan(first.token());
    }

    @Test
    void release_staleOrForeignToken_isNoopAndKeepsTheHolder() {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        AcquireResult held = join(w.acquire(exclusive(a, "pay/z", 0)));

        assertThat(w.release(b, LockName.parse("pay/z"), held.token()).join()).as("foreign").isFalse();
        assertThat(w.release(a, LockName.parse("pay/z"), held.token() - 1).join()).as("stale").isFalse();
        assertThat(w.release(a, LockName.parse("pay/other"), held.token()).join()).as("other lock").isFalse();

        LockView view = w.lock(LockName.parse("pay/z")).join();
        assertThat(view.mode()).isEqualTo(LockView.LockMode.EXCLUSIVE);
        assertThat(view.holders()).extracting(h -> h.token()).containsExactly(held.token());
        assertThat(w.release(a, LockName.parse("pay/z"), held.token()).join()).isTrue();
        assertThat(w.release(a, LockName.parse("pay/z"), held.token()).join()).as("twice").isFalse();
        assertThat(w.lock(LockName.parse("pay/z")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }

    @Test
    void fairness_sharedRunsAreGrantedTogether_butNeverOvertakeAQueuedExclusive() {
        String r1 = session(w, "r1", 10_000);
        String r2 = session(w, "r2", 10_000);
        String wr = session(w, "w", 10_000);
        String r3 = session(w, "r3", 10_000);
        AcquireResult s1 = join(w.acquire(shared(r1, "db/t", 0)));
        AcquireResult s2 = join(w.acquire(shared(r2, "db/t", 0)));
        assertThat(s1.status()).isEqualTo(Status.GRANTED);
        assertThat(s2.status()).isEqualTo(Status.GRANTED);
        assertThat(s2.holders()).hasSize(2);

        CompletableFuture<AcquireResult> writer = w.acquire(exclusive(wr, "db/t", 60_000));
        await("writer queued", () -> fx.queueSize("db/t") == 3);
        AcquireResult lateReader = join(w.acquire(shared(r3, "db/t", 0)));
        assertThat(lateReader.status()).as("a reader never overtakes a queued writer").isEqualTo(Status.TIMED_OUT);

        w.release(r1, LockName.parse("db/t"), s1.token()).join();
        assertThat(writer).isNotDone();
        w.release(r2, LockName.parse("db/t"), s2.token()).join();
        AcquireResult granted = join(writer);
        assertThat(granted.status()).isEqualTo(Status.GRANTED);
        assertThat(granted.token()).isGreaterThan(s2.token());
    }

    @Test
    void cancel_atTheHeadOfTheQueue_promotesWhoItBlocked() {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        String c = session(w, "c", 10_000);
        String d = session(w, "d", 10_000);
        AcquireResult held = join(w.acquire(shared(a, "db/u", 0)));
        AcquireRequest writerReq = exclusive(b, "db/u", 60_000);
        CompletableFuture<AcquireResult> writer = w.acquire(writerReq);
        await("writer queued", () -> fx.queueSize("db/u") == 2);
        CompletableFuture<AcquireResult> reader1 = w.acquire(shared(c, "db/u", 60_000));
        CompletableFuture<AcquireResult> reader2 = w.acquire(shared(d, "db/u", 60_000));
        await("readers queued", () -> fx.queueSize("db/u") == 4);

        assertThat(w.cancel(b, LockName.parse("db/u"), writerReq.requestId()).join()).isTrue();

        assertThat(join(writer).status()).as("the cancelled call is answered").isEqualTo(Status.TIMED_OUT);
        assertThat(join(reader1).status()).isEqualTo(Status.GRANTED);
        assertThat(join(reader2).status()).isEqualTo(Status.GRANTED);
        assertThat(w.lock(LockName.parse("db/u")).join().holders()).hasSize(3);
        assertThat(held.token()).isPositive();
    }

    @Test
    void retry_sameRequestId_yieldsTheSameEntry_evenFromAnotherGateway() throws Exception {
        Gateway other = fx.gateway();
        String a = session(w, "a", 10_000);
        AcquireRequest req = exclusive(a, "pay/idem", 0);
        AcquireResult first = join(w.acquire(req));
        AcquireResult again = join(w.acquire(req));
        AcquireResult elsewhere = join(other.warden().acquire(req));

        assertThat(again.token()).isEqualTo(first.token());
        assertThat(elsewhere.token()).isEqualTo(first.token());
        assertThat(fx.queue("pay/idem")).hasSize(1);
        assertThat(fx.curator.getChildren().forPath(CellPaths.session(a))).hasSize(1);
    }

    @Test
    void onTimeoutKeep_leavesTheRequestQueued_andARetryLearnsTheGrant() {
        String a = session(w, "a", 60_000);
        String b = session(w, "b", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "pay/keep", 0)));
        AcquireRequest req = new AcquireRequest(b, LockName.parse("pay/keep"), Mode.EXCLUSIVE, 1_000, "job-7", OnTimeout.KEEP);
        CompletableFuture<AcquireResult> call = w.acquire(req);
        await("waiting", () -> gw.pendingAcquires() == 1);

        fx.clock.advance(Duration.ofMillis(1_000));

        AcquireResult queued = join(call);
        assertThat(queued.status()).isEqualTo(Status.QUEUED);
        assertThat(queued.position()).isEqualTo(1);
        assertThat(fx.queueSize("pay/keep")).isEqualTo(2);

        w.release(a, LockName.parse("pay/keep"), held.token()).join();
        AcquireResult later = join(w.acquire(req));
        assertThat(later.status()).isEqualTo(Status.GRANTED);
        assertThat(later.token()).isGreaterThan(held.token());
    }

    @Test
    void timedWait_onTimeoutCancel_removesTheRequestWhenTheClockRunsOut() {
        String a = session(w, "a", 60_000);
        String b = session(w, "b", 60_000);
        join(w.acquire(exclusive(a, "pay/t", 0)));
        CompletableFuture<AcquireResult> call = w.acquire(exclusive(b, "pay/t", 5_000));
        await("waiting", () -> gw.pendingAcquires() == 1);

        fx.clock.advance(Duration.ofMillis(4_999));
        assertThat(call).isNotDone();
        fx.clock.advance(Duration.ofMillis(1));

        assertThat(join(call).status()).isEqualTo(Status.TIMED_OUT);
        await("removed", () -> fx.queueSize("pay/t") == 1);
    }

    @Test
    void reads_areLinearizable_andCheckNamesTheLatestToken() {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        LockName name = LockName.parse("pay/read");
        assertThat(w.check(name, 5).join().latestToken()).isNull();
        AcquireResult r1 = join(w.acquire(shared(a, "pay/read", 0)));
        AcquireResult r2 = join(w.acquire(shared(b, "pay/read", 0)));

        LockView view = w.lock(name).join();
        assertThat(view.mode()).isEqualTo(LockView.LockMode.SHARED);
        assertThat(view.holders()).extracting(h -> h.sessionId()).containsExactly(a, b);
        assertThat(view.revision()).isGreaterThanOrEqualTo(r2.token());
        var check = w.check(name, r1.token()).join();
        assertThat(check.current()).isTrue();
        assertThat(check.latestToken()).isEqualTo(r2.token());
        w.release(a, name, r1.token()).join();
        assertThat(w.check(name, r1.token()).join().current()).isFalse();
    }

    @Test
    void acquire_unknownSession_isSessionNotFound_andChangesNothing() throws Exception {
        assertThatThrownBy(() -> w.acquire(exclusive("0123456789abcdef0123456789abcdef", "pay/n", 0)).join())
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
        assertThat(fx.queue("pay/n")).isEmpty();
    }

    @Test
    void noHerd_aReleaseWakesOnlyTheNextWaiter() {
        String holder = session(w, "h", 60_000);
        AcquireResult held = join(w.acquire(exclusive(holder, "hot/lock", 0)));
        int waiters = 12;
        List<CompletableFuture<AcquireResult>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            calls.add(w.acquire(exclusive(session(w, "w" + i, 60_000), "hot/lock", 60_000)));
        }
        await("all queued", () -> fx.queueSize("hot/lock") == waiters + 1);
        await("all watching", () -> fx.queueNodeWatches("hot/lock") == waiters); // each the node ahead of it
        double before = fx.childReads(gw);

        w.release(holder, LockName.parse("hot/lock"), held.token()).join();
        join(calls.get(0));

        double reads = fx.childReads(gw) - before;
        // The release reads the session's requests and the queue (2); the one woken waiter reads the queue (1).
        // A herd would add a read per waiter.
        assertThat(reads).as("getChildren reads for one handoff with %d waiters", waiters).isLessThanOrEqualTo(3);
        assertThat(calls.subList(1, waiters)).allMatch(f -> !f.isDone());
    }

    @Test
    void limits_perSessionAndPerLock_answerResourceExhausted_andChangeNothing() throws Exception {
        Gateway small = fx.gateway(fx.config().withLimits(2, 1, 3)); // one waiter per lock besides its holder
        Warden sw = small.warden();
        String a = session(sw, "a", 60_000);
        join(sw.acquire(exclusive(a, "lim/1", 0)));
        AcquireRequest second = exclusive(a, "lim/2", 0);
        join(sw.acquire(second));
        assertThatThrownBy(() -> join(sw.acquire(exclusive(a, "lim/3", 0))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED));
        assertThat(fx.queue("lim/3")).isEmpty();
        assertThat(join(sw.acquire(second)).status()).as("a retry of an existing request still works").isEqualTo(Status.GRANTED);

        String b = session(sw, "b", 60_000);
        String c = session(sw, "c", 60_000);
        CompletableFuture<AcquireResult> bWaits = sw.acquire(exclusive(b, "lim/1", 60_000));
        await("b waits", () -> small.pendingAcquires() == 1);
        assertThatThrownBy(() -> join(sw.acquire(exclusive(c, "lim/1", 60_000))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED));
        await("the refused request is removed", () -> fx.queueSize("lim/1") == 2);
        assertThatThrownBy(() -> sw.openSession("d", 60_000, 0).join())
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED));
        assertThat(bWaits).isNotDone();
    }

    /**
     * GatewayPauseIT found this: a gateway paused with an acquire in flight woke up after the client had retried it
     * elsewhere and released the lock, and queued the stale request again, so the session held a lock it never knew
     * of. An ended request's record stays as a tombstone; a late duplicate now fails and queues nothing.
     */
    @Test
    void lateDuplicate_ofAnEndedRequest_failsAndQueuesNothing() throws Exception {
        String a = session(w, "a", 60_000);
        AcquireRequest req = exclusive(a, "pay/dup", 0);
        AcquireResult first = join(w.acquire(req));
        assertThat(w.release(a, LockName.parse("pay/dup"), first.token()).join()).isTrue();

        assertThatThrownBy(() -> join(w.acquire(req))).satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("request_id");
        assertThat(fx.queue("pay/dup")).isEmpty();
        assertThat(w.session(a).join().holds()).isEmpty();
    }

    /**
     * A cancel that overtook its acquire (a relay held {@code POST /v1/acquire} for 3 s, the client
     * gave up after 1 s and cancelled) found nothing, then the late acquire arrived and was granted, and the session
     * held the lock until its client closed. A cancel of an unknown request id now leaves a tombstone, as an ended
     * request does, so the late acquire fails and queues nothing.
     */
    @Test
    void cancelOfAnUnknownRequest_leavesATombstone_soTheLateAcquireFailsAndQueuesNothing() throws Exception {
        String a = session(w, "a", 60_000);
        AcquireRequest req = exclusive(a, "pay/late", 0);

        assertThat(w.cancel(a, LockName.parse("pay/late"), req.requestId()).join()).as("nothing was cancelled").isFalse();

        assertThatThrownBy(() -> join(w.acquire(req))).satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("request_id");
        assertThat(fx.queue("pay/late")).isEmpty();
        assertThat(w.session(a).join().holds()).isEmpty();
        assertThat(w.session(a).join().waiting()).isEmpty();
        // a second cancel finds the tombstone: still nothing cancelled, nothing else written
        assertThat(w.cancel(a, LockName.parse("pay/late"), req.requestId()).join()).isFalse();
        assertThat(fx.curator.getChildren().forPath(CellPaths.session(a))).as("one tombstone and its end marker").hasSize(2);
        // other requests of the session are not affected
        assertThat(join(w.acquire(exclusive(a, "pay/late", 0))).status()).isEqualTo(Status.GRANTED);
    }

    @Test
    void cancelOfAnUnknownRequest_ofAGoneSession_isSessionNotFound() {
        String a = session(w, "a", 60_000);
        w.closeSession(a).join();
        assertThatThrownBy(() -> w.cancel(a, LockName.parse("pay/late"), "r-1").join())
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
    }

    @Test
    void tombstones_arePruned_soALongLivedSessionDoesNotPileUpRecords() throws Exception {
        String a = session(w, "a", 60_000);
        for (int i = 0; i < 3 * 32 + 5; i++) {
            AcquireResult r = join(w.acquire(exclusive(a, "pay/many", 0)));
            assertThat(w.release(a, LockName.parse("pay/many"), r.token()).join()).isTrue();
        }
        // Each ended request leaves a tombstone and an end marker: at most KEPT + PRUNE_EVERY (and a little) of each.
        await("pruned", () -> {
            try {
                return fx.curator.getChildren().forPath(CellPaths.session(a)).size() <= 2 * (Tombstones.KEPT + Tombstones.PRUNE_EVERY + 1);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertThat(fx.curator.getChildren().forPath(CellPaths.session(a)).size()).isGreaterThanOrEqualTo(2 * Tombstones.KEPT);
        assertThat(fx.curator.getChildren().forPath(CellPaths.session(a)).size() % 2).as("tombstones go with their markers").isZero();
    }
}
