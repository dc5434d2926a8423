package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.MultiAcquireResult;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueEntry;
import io.warden.service.support.WardenFixture;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Multi-lock requests (contract §2.11, docs/decisions/0012) on a real ZooKeeper. */
class MultiLockTest {
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

    static MultiAcquireRequest multi(String session, long waitMs, String... names) {
        return multi(session, UUID.randomUUID().toString(), waitMs, OnTimeout.CANCEL, names);
    }

    static MultiAcquireRequest multi(String session, String requestId, long waitMs, OnTimeout onTimeout, String... names) {
        List<LockName> ns = new ArrayList<>();
        for (String n : names) {
            ns.add(LockName.parse(n));
        }
        return new MultiAcquireRequest(session, ns, Mode.EXCLUSIVE, waitMs, requestId, onTimeout);
    }

    static MultiAcquireResult joinAll(CompletableFuture<MultiAcquireResult> f) {
        return f.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
    }

    private Stat stat(String name, String node) throws Exception {
        return fx.curator.checkExists().forPath(WardenFixture.lockPath(name) + "/" + node);
    }

    @Test
    void grant_everyNameInOneTransaction_tokenIsEachNodesCzxid() throws Exception {
        String s = session(w, "a", 10_000);

        MultiAcquireResult r = joinAll(w.acquireAll(multi(s, 0, "m/a", "m/b", "m/c")));

        assertThat(r.status()).isEqualTo(Status.GRANTED);
        assertThat(r.tokens()).containsOnlyKeys("m/a", "m/b", "m/c");
        String uuid = null;
        for (String name : List.of("m/a", "m/b", "m/c")) {
            List<String> q = fx.queue(name);
            assertThat(q).hasSize(1);
            String id = QueueEntry.parse(q.get(0)).orElseThrow().id();
            uuid = uuid == null ? id : uuid;
            assertThat(id).as("one request uuid on every name").isEqualTo(uuid);
            assertThat(r.tokens().get(name)).isEqualTo(stat(name, q.get(0)).getCzxid());
            assertThat(r.holders().get(name)).singleElement().satisfies(h -> assertThat(h.sessionId()).isEqualTo(s));
        }
        assertThat(r.tokens().values()).as("one transaction, one zxid").containsOnly(r.tokens().get("m/a"));
    }

    @Test
    void token_isAboveEveryEarlierExclusiveGrantOfEachName() {
        String s = session(w, "a", 10_000);
        AcquireResult first = join(w.acquire(exclusive(s, "m/x", 0)));
        assertThat(w.release(s, LockName.parse("m/x"), first.token()).join()).isTrue();

        MultiAcquireResult r = joinAll(w.acquireAll(multi(s, 0, "m/y", "m/x")));

        assertThat(r.tokens().get("m/x")).isGreaterThan(first.token());
    }

    @Test
    void crossedOrders_queueInOneOrderOnEverySharedName_andBothComplete() throws Exception {
        String holder = session(w, "h", 10_000);
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        AcquireResult hx = join(w.acquire(exclusive(holder, "m/x", 0)));
        AcquireResult hy = join(w.acquire(exclusive(holder, "m/y", 0)));

        CompletableFuture<MultiAcquireResult> ra = w.acquireAll(multi(a, "ra", 60_000, OnTimeout.CANCEL, "m/x", "m/y"));
        await("a queued on both", () -> fx.queueSize("m/x") == 2 && fx.queueSize("m/y") == 2);
        CompletableFuture<MultiAcquireResult> rb = w.acquireAll(multi(b, 60_000, "m/y", "m/x"));
        await("b queued on both", () -> fx.queueSize("m/x") == 3 && fx.queueSize("m/y") == 3);
        // The same request is second on x and on y: nobody is ahead on one name and behind on the other.
        // (ZooKeeper lists children in no order; the queue's is by sequence number)
        String secondOnX = LockQueue.of(fx.queue("m/x")).entries().get(1).id();
        String secondOnY = LockQueue.of(fx.queue("m/y")).entries().get(1).id();
        assertThat(secondOnX).isEqualTo(secondOnY);

        assertThat(w.release(holder, LockName.parse("m/y"), hy.token()).join()).isTrue();
        assertThat(w.release(holder, LockName.parse("m/x"), hx.token()).join()).isTrue();
        MultiAcquireResult ga = joinAll(ra);
        assertThat(ga.status()).isEqualTo(Status.GRANTED);
        assertThat(rb).isNotDone();
        assertThat(w.releaseRequest(a, "ra").join()).isTrue();
        assertThat(joinAll(rb).status()).isEqualTo(Status.GRANTED);
    }

    @Test
    void waiting_holdsTheFreeNames_soTheyAreNotGrantedToOthers() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        join(w.acquire(exclusive(a, "m/y", 0)));

        CompletableFuture<MultiAcquireResult> r = w.acquireAll(multi(b, 60_000, "m/x", "m/y"));
        await("queued", () -> fx.queueSize("m/y") == 2);

        assertThat(join(w.acquire(exclusive(a, "m/x", 0))).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(r).isNotDone();
    }

    @Test
    void timeout_cancel_removesEveryEntryInOneTransaction() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        join(w.acquire(exclusive(a, "m/z", 0)));
        CompletableFuture<MultiAcquireResult> r = w.acquireAll(multi(b, 5_000, "m/x", "m/y", "m/z"));
        await("queued", () -> fx.queueSize("m/z") == 2);
        long before = fx.lastZxid();

        fx.clock.advance(Duration.ofMillis(5_000));

        assertThat(joinAll(r).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(fx.queueSize("m/x")).isZero();
        assertThat(fx.queueSize("m/y")).isZero();
        assertThat(fx.queueSize("m/z")).isEqualTo(1);
        assertThat(fx.lastZxid()).as("one transaction removed all three").isEqualTo(before + 1);
    }

    @Test
    void timeout_keep_leavesTheEntries_andARetryIsGranted() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        AcquireResult held = join(w.acquire(exclusive(a, "m/y", 0)));
        MultiAcquireResult q = joinAll(w.acquireAll(multi(b, "k1", 0, OnTimeout.KEEP, "m/x", "m/y")));
        assertThat(q.status()).isEqualTo(Status.QUEUED);
        assertThat(q.position()).isEqualTo(1);

        w.release(a, LockName.parse("m/y"), held.token()).join();
        MultiAcquireResult again = joinAll(w.acquireAll(multi(b, "k1", 1_000, OnTimeout.KEEP, "m/y", "m/x")));

        assertThat(again.status()).isEqualTo(Status.GRANTED);
        assertThat(fx.queueSize("m/x")).isEqualTo(1);
        assertThat(fx.queueSize("m/y")).isEqualTo(1);
    }

    @Test
    void retry_sameRequestId_sameTokens_noSecondEntries_otherNamesIs400() throws Exception {
        String s = session(w, "a", 10_000);
        MultiAcquireResult first = joinAll(w.acquireAll(multi(s, "r1", 0, OnTimeout.CANCEL, "m/a", "m/b")));
        MultiAcquireResult again = joinAll(w.acquireAll(multi(s, "r1", 0, OnTimeout.CANCEL, "m/b", "m/a")));

        assertThat(again.status()).isEqualTo(Status.GRANTED);
        assertThat(again.tokens()).isEqualTo(first.tokens());
        assertThat(fx.queueSize("m/a")).isEqualTo(1);
        assertThat(fx.queueSize("m/b")).isEqualTo(1);
        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(s, "r1", 0, OnTimeout.CANCEL, "m/a", "m/c"))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("names");
    }

    @Test
    void releaseRequest_endsHoldsAndWaits_once() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        join(w.acquire(exclusive(a, "m/y", 0)));
        CompletableFuture<MultiAcquireResult> r = w.acquireAll(multi(b, "whole", 60_000, OnTimeout.CANCEL, "m/x", "m/y"));
        await("queued", () -> fx.queueSize("m/y") == 2);
        long before = fx.lastZxid();

        assertThat(w.releaseRequest(b, "whole").join()).isTrue();

        assertThat(fx.lastZxid()).as("one transaction").isEqualTo(before + 1);
        assertThat(fx.queueSize("m/x")).isZero();
        assertThat(fx.queueSize("m/y")).isEqualTo(1);
        assertThat(joinAll(r).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(w.releaseRequest(b, "whole").join()).isFalse();
        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(b, "whole", 0, OnTimeout.CANCEL, "m/x", "m/y"))))
                .hasMessageContaining("already ended");
    }

    @Test
    void releaseByToken_ofOneName_keepsTheOthers_andTheRequest() throws Exception {
        String s = session(w, "a", 10_000);
        MultiAcquireResult r = joinAll(w.acquireAll(multi(s, "part", 0, OnTimeout.CANCEL, "m/a", "m/b")));

        assertThat(w.release(s, LockName.parse("m/a"), r.tokens().get("m/a")).join()).isTrue();

        assertThat(fx.queueSize("m/a")).isZero();
        assertThat(fx.queueSize("m/b")).isEqualTo(1);
        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(s, "part", 0, OnTimeout.CANCEL, "m/a", "m/b"))))
                .hasMessageContaining("request_id");
        assertThat(fx.queueSize("m/a")).as("no second entry").isZero();
        assertThat(w.releaseRequest(s, "part").join()).isTrue();
        assertThat(fx.queueSize("m/b")).isZero();
    }

    @Test
    void sessionClose_whileWaiting_endsEveryEntry_andAnswersTheCall() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        join(w.acquire(exclusive(a, "m/y", 0)));
        CompletableFuture<MultiAcquireResult> r = w.acquireAll(multi(b, 60_000, "m/x", "m/y"));
        await("queued", () -> fx.queueSize("m/y") == 2);

        w.closeSession(b).join();

        assertThat(fx.queueSize("m/x")).isZero();
        assertThat(fx.queueSize("m/y")).isEqualTo(1);
        assertThatThrownBy(() -> joinAll(r)).satisfies(e ->
                assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
    }

    @Test
    void sessionExpiry_whileWaiting_endsEveryEntryAtOnce() throws Exception {
        String a = session(w, "a", 60_000);
        String b = w.openSession("b", 2_000, 0).join().sessionId();
        join(w.acquire(exclusive(a, "m/y", 0)));
        CompletableFuture<MultiAcquireResult> r = w.acquireAll(multi(b, 60_000, "m/x", "m/y"));
        await("queued", () -> fx.queueSize("m/y") == 2);

        fx.clock.advance(Duration.ofSeconds(30));

        await("expired", () -> fx.queueSize("m/x") == 0 && fx.queueSize("m/y") == 1);
        assertThatThrownBy(() -> joinAll(r)).satisfies(e ->
                assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
    }

    @Test
    void cancelByNameAndRequestId_endsTheWholeRequest() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        join(w.acquire(exclusive(a, "m/y", 0)));
        CompletableFuture<MultiAcquireResult> r = w.acquireAll(multi(b, "c1", 60_000, OnTimeout.CANCEL, "m/x", "m/y"));
        await("queued", () -> fx.queueSize("m/y") == 2);

        assertThat(w.cancel(b, LockName.parse("m/y"), "c1").join()).isTrue();

        assertThat(fx.queueSize("m/x")).isZero();
        assertThat(joinAll(r).status()).isEqualTo(Status.TIMED_OUT);
    }

    @Test
    void countsOnceAgainstTheSessionsRequests() throws Exception {
        fx.close();
        fx = new WardenFixture();
        gw = fx.gateway(fx.config().toBuilder().maxRequestsPerSession(2).build());
        w = gw.warden();
        String s = session(w, "a", 10_000);

        assertThat(joinAll(w.acquireAll(multi(s, 0, "m/a", "m/b", "m/c"))).status()).isEqualTo(Status.GRANTED);
        assertThat(joinAll(w.acquireAll(multi(s, 0, "m/d", "m/e", "m/f"))).status()).isEqualTo(Status.GRANTED);
        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(s, 0, "m/g", "m/h")))).satisfies(e ->
                assertThat(code(e)).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED));
        assertThat(fx.queueSize("m/g")).isZero();
    }

    @Test
    void aFullName_refusesTheWholeRequest_andTakesItBack() throws Exception {
        fx.close();
        fx = new WardenFixture();
        gw = fx.gateway(fx.config().toBuilder().maxEntriesPerLock(2).build());
        w = gw.warden();
        String a = session(w, "a", 10_000);
        join(w.acquire(exclusive(a, "m/y", 0)));
        w.acquire(exclusive(a, "m/y", 60_000));
        await("full", () -> fx.queueSize("m/y") == 2);
        String b = session(w, "b", 10_000);

        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(b, 60_000, "m/x", "m/y")))).satisfies(e ->
                assertThat(code(e)).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED));
        assertThat(fx.queueSize("m/x")).isZero();
        assertThat(fx.queueSize("m/y")).isEqualTo(2);
    }

    @Test
    void semaphoreName_isAConflict_andNothingStays() throws Exception {
        String a = session(w, "a", 10_000);
        join(w.acquire(new io.warden.service.api.AcquireRequest(a, LockName.parse("m/sem"), Mode.SEMAPHORE, 0, "s1",
                OnTimeout.CANCEL, true, 3)));
        String b = session(w, "b", 10_000);

        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(b, 60_000, "m/x", "m/sem")))).satisfies(e ->
                assertThat(code(e)).isEqualTo(WardenException.ErrorCode.CONFLICT));
        assertThat(fx.queueSize("m/x")).isZero();
        assertThat(fx.queueSize("m/sem")).isEqualTo(1);
    }

    /**
     * The largest acquire: 64 names of 512 characters. Its multi carries the record twice (create and set: about 64 x 515
     * bytes of names each, 66 KB), 64 creates (a lock path of about 540 bytes and about 200 bytes of node data each, 47
     * KB) and the client id note: about 120 KB, far below ZooKeeper's 1 MiB packet limit (jute.maxbuffer). The end of the
     * request (64 deletes, the tombstone, the marker) is smaller.
     */
    @Test
    void worstCase_64NamesOfMaximumLength_fitsOneTransaction() throws Exception {
        String s = session(w, "a", 10_000);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < MultiAcquireRequest.MAX_NAMES; i++) {
            names.add(longestName(i));
        }
        assertThat(names.get(0)).hasSize(LockName.MAX_LENGTH);

        MultiAcquireResult r = joinAll(w.acquireAll(multi(s, 0, names.toArray(String[]::new))));

        assertThat(r.status()).isEqualTo(Status.GRANTED);
        assertThat(r.tokens()).hasSize(64);
        assertThat(w.releaseRequest(s, idOfAny(s, names.get(0))).join()).isTrue();
        assertThat(fx.queueSize(names.get(63))).isZero();
    }

    /**
     * Contract §3: a try that cannot be granted writes nothing. The first refused multi-lock try on a name may be made
     * and taken back (this gateway had not seen the name busy); every try after it reads the busy names first, and is
     * refused with that name's holders without a write — or, with the caller's request id, with only the tombstone
     * that makes its repeat (a lost reply resent) never granted.
     */
    @Test
    void triesOnANameHeldByAnother_areRefusedWithItsHolders_andWriteNothing() throws Exception {
        String a = session(w, "holder", 60_000);
        String b = session(w, "trier", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "mt/held", 0)));
        assertThat(joinAll(w.acquireAll(tryAll(b, "mt/free", "mt/held"))).status()).isEqualTo(Status.TIMED_OUT);

        long zxid = fx.lastZxid();
        for (int i = 0; i < 20; i++) {
            MultiAcquireResult r = joinAll(w.acquireAll(tryAll(b, "mt/free", "mt/held")));
            assertThat(r.status()).isEqualTo(Status.TIMED_OUT);
            assertThat(r.holders().get("mt/held")).singleElement()
                    .satisfies(h -> assertThat(h.token()).isEqualTo(held.token()));
        }
        assertThat(fx.lastZxid()).as("the cell's last zxid after 20 refused tries").isEqualTo(zxid);
        assertThat(fx.queue("mt/free")).isEmpty();
        assertThat(fx.queue("mt/held")).hasSize(1);

        MultiAcquireRequest named = multi(b, "job-9", 0, OnTimeout.CANCEL, "mt/free", "mt/held");
        assertThat(joinAll(w.acquireAll(named)).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(fx.lastZxid()).as("one write: the tombstone's multi").isEqualTo(zxid + 1);
        assertThat(w.release(a, LockName.parse("mt/held"), held.token()).join()).isTrue();
        assertThatThrownBy(() -> joinAll(w.acquireAll(named)))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("already ended");
        assertThat(fx.queue("mt/free")).isEmpty();
        assertThat(fx.queue("mt/held")).isEmpty();

        assertThat(joinAll(w.acquireAll(tryAll(b, "mt/free", "mt/held"))).status())
                .as("both free now: a try reads, then is made and granted").isEqualTo(Status.GRANTED);
    }

    /** A try without the caller's request id (the gateway makes one up, as for a call that gave none). */
    private static MultiAcquireRequest tryAll(String session, String... names) {
        MultiAcquireRequest r = multi(session, 0, names);
        return new MultiAcquireRequest(session, r.names(), Mode.EXCLUSIVE, 0, r.requestId(), OnTimeout.CANCEL, false);
    }

    private String idOfAny(String session, String name) throws Exception {
        String node = fx.queue(name).get(0);
        byte[] data = fx.curator.getData().forPath(WardenFixture.lockPath(name) + "/" + node);
        return io.warden.service.zk.Json.readOrNull(data, io.warden.service.queue.QueueNodeData.class).requestId();
    }

    /** A 512-character name, distinct per {@code i}: a 63-character namespace and 4 segments of up to 128. */
    static String longestName(int i) {
        String ns = "n" + "s".repeat(61) + (char) ('a' + i % 26);
        StringBuilder sb = new StringBuilder(ns);
        String tag = String.format("%03d", i);
        for (int seg = 0; seg < 3; seg++) {
            sb.append('/').append(tag).append("x".repeat(125));
        }
        int left = LockName.MAX_LENGTH - sb.length() - 1;
        sb.append('/').append(tag).append("y".repeat(left - 3));
        return sb.toString();
    }

    @Test
    void badInput_isRefusedBeforeAnyWrite() {
        String s = "0123456789abcdef0123456789abcdef";
        assertThatThrownBy(() -> multi(s, 0, "m/a")).hasMessageContaining("names");
        assertThatThrownBy(() -> multi(s, 0, "m/a", "m/a")).hasMessageContaining("twice");
        String[] many = new String[65];
        for (int i = 0; i < many.length; i++) {
            many[i] = "m/n" + i;
        }
        assertThatThrownBy(() -> multi(s, 0, many)).hasMessageContaining("65");
        assertThatThrownBy(() -> new MultiAcquireRequest(s, List.of(LockName.parse("m/a"), LockName.parse("m/b")),
                Mode.SEMAPHORE, 0, "x", OnTimeout.CANCEL)).hasMessageContaining("SEMAPHORE");
    }
}
