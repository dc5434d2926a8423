package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException.ErrorCode;
import io.warden.service.support.OneBatch;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import io.warden.service.zk.CellPaths;
import io.micrometer.core.instrument.DistributionSummary;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.ZooKeeperServerEmbeddedAdapter;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Group commit (docs/design.md, "Group commit"): the gateway's writes that arrive while one is in flight go to
 * ZooKeeper together, in one {@code multi}. A {@code multi} is all or nothing, so one bad call would fail its batch:
 * the stage then sends each call's operations alone, and every call is answered as if it had been alone. Real
 * ZooKeeper; {@link OneBatch} puts the calls in one batch whatever the machine's timing.
 */
class GroupCommitTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    /**
     * One batch holds a plain acquire, an acquire of a session that is gone (NONODE at its record), a repeat of a request
     * that has ended (NODEEXISTS at its record: a tombstone), an acquire on a lock at its sequence limit (made, then
     * taken back), a repeat of a live request (NODEEXISTS: it finds its node), a release, another plain acquire, and a
     * try-lock on the first acquire's lock (two queue nodes of one name never share a batch: it goes in the next one,
     * after the first acquire). Each is answered exactly as alone.
     */
    @Test
    void aBatchWithFailingCalls_answersEveryCallAsIfItHadBeenAlone() throws Exception {
        Gateway gw = fx.gateway();
        Gateway other = fx.gateway();
        Warden w = gw.warden();

        String a = session(w, "a", 60_000);
        // b: opened and closed at the other gateway; this one read its record once (an acquire) and kept the hint
        String b = session(other.warden(), "b", 60_000);
        AcquireResult bHeld = join(w.acquire(exclusive(b, "gc/b", 0)));
        assertThat(w.release(b, LockName.parse("gc/b"), bHeld.token()).join()).isTrue();
        other.warden().closeSession(b).join();
        // c: its request "c-1" ended (a tombstone)
        String c = session(w, "c", 60_000);
        AcquireResult cHeld = join(w.acquire(request(c, "gc/c", "c-1", 0)));
        assertThat(w.release(c, LockName.parse("gc/c"), cHeld.token()).join()).isTrue();
        // d: its lock is near the end of its sequence numbers
        String d = session(w, "d", 60_000);
        String holder = session(w, "seq-holder", 60_000);
        join(w.acquire(exclusive(holder, "gc/seq", 0)));
        setChildVersion("gc/seq", Integer.MAX_VALUE - 500_000);
        // e: its request "e-1" holds gc/e
        String e = session(w, "e", 60_000);
        AcquireResult eHeld = join(w.acquire(request(e, "gc/e", "e-1", 0)));
        // f: holds gc/f
        String f = session(w, "f", 60_000);
        AcquireResult fHeld = join(w.acquire(exclusive(f, "gc/f", 0)));
        String g = session(w, "g", 60_000);
        String h = session(w, "h", 60_000);
        // The lock nodes exist (a first acquire of a name makes its node and goes again: another order, as valid, of a
        // and h, which this test does not look at).
        container("gc/a");
        container("gc/g");
        double fallbacksBefore = fallbacks(gw);

        List<Supplier<CompletableFuture<Object>>> calls = List.of(
                () -> widen(w.acquire(exclusive(a, "gc/a", 0))),
                () -> widen(w.acquire(exclusive(b, "gc/b", 0))),
                () -> widen(w.acquire(request(c, "gc/c", "c-1", 0))),
                () -> widen(w.acquire(exclusive(d, "gc/seq", 0))),
                () -> widen(w.acquire(request(e, "gc/e", "e-1", 0))),
                () -> widen(w.release(f, LockName.parse("gc/f"), fHeld.token())),
                () -> widen(w.acquire(exclusive(g, "gc/g", 0))),
                () -> widen(w.acquire(exclusive(h, "gc/a", 0))));
        List<CompletableFuture<Object>> answers = OneBatch.afterWrite(gw.curator(), gw.zk(), calls);
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).handle((v, x) -> null)
                .orTimeout(20, TimeUnit.SECONDS).join(); // h's try-lock removes its node before it is answered

        AcquireResult aGot = (AcquireResult) answer(answers.get(0));
        assertThat(aGot.status()).isEqualTo(Status.GRANTED);
        assertThat(aGot.token()).as("a's token is its queue node's czxid").isEqualTo(czxidOfOnlyNode("gc/a"));
        assertThat(code(answers.get(1))).as("b's session is gone").isEqualTo(ErrorCode.SESSION_NOT_FOUND);
        assertThat(code(answers.get(2))).as("c repeats a request that has ended").isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(code(answers.get(3))).as("d's lock is at its sequence limit").isEqualTo(ErrorCode.RESOURCE_EXHAUSTED);
        AcquireResult eGot = (AcquireResult) answer(answers.get(4));
        assertThat(eGot.status()).as("e repeats a live request").isEqualTo(Status.GRANTED);
        assertThat(eGot.token()).isEqualTo(eHeld.token());
        assertThat(answer(answers.get(5))).as("f's release").isEqualTo(true);
        AcquireResult gGot = (AcquireResult) answer(answers.get(6));
        assertThat(gGot.status()).isEqualTo(Status.GRANTED);
        assertThat(gGot.token()).isEqualTo(czxidOfOnlyNode("gc/g"));
        assertThat(((AcquireResult) answer(answers.get(7))).status()).as("h's try-lock, after a's acquire")
                .isEqualTo(Status.TIMED_OUT);

        assertThat(fx.queue("gc/b")).isEmpty();
        assertThat(fx.curator.checkExists().forPath(CellPaths.session(b))).isNull();
        assertThat(fx.queue("gc/c")).isEmpty();
        assertThat(fx.queue("gc/seq")).as("only the holder").hasSize(1);
        assertThat(fx.curator.getChildren().forPath(CellPaths.session(d))).as("the refused request left no record").isEmpty();
        assertThat(fx.queue("gc/e")).hasSize(1);
        assertThat(fx.queue("gc/f")).isEmpty();
        assertThat(fx.queue("gc/a")).as("h's try-lock left nothing").hasSize(1);

        assertThat(largestWriteBatch(gw)).as("the calls went to ZooKeeper in one multi").isGreaterThanOrEqualTo(7);
        assertThat(fallbacks(gw) - fallbacksBefore).as("the batch failed and each call was sent alone").isPositive();
    }

    /**
     * One failing call in a batch of thirteen (an acquire of a session that is gone, in the middle) costs the batch
     * three more write requests, not one per call: the failing call goes alone, the six before it go again together,
     * and so do the six after it. Every other acquire is granted with its own node's czxid, as alone. (Each call was
     * sent alone before: fourteen requests after the batch.)
     */
    @Test
    void aBatchWithOneFailingCall_sendsTheCallsBeforeAndAfterItTogether_andItAlone() throws Exception {
        Gateway gw = fx.gateway();
        Gateway other = fx.gateway();
        Warden w = gw.warden();
        String gone = session(other.warden(), "gone", 60_000);
        AcquireResult held = join(w.acquire(exclusive(gone, "split/gone", 0))); // this gateway knows the session
        assertThat(w.release(gone, LockName.parse("split/gone"), held.token()).join()).isTrue();
        other.warden().closeSession(gone).join();
        List<String> sessions = new ArrayList<>();
        List<Supplier<CompletableFuture<Object>>> calls = new ArrayList<>();
        for (int i = 0; i < 13; i++) {
            String name = "split/n" + i;
            if (i == 6) {
                calls.add(() -> widen(w.acquire(exclusive(gone, "split/gone", 0))));
                sessions.add(gone);
                continue;
            }
            container(name);
            String s = session(w, "s" + i, 60_000);
            sessions.add(s);
            calls.add(() -> widen(w.acquire(exclusive(s, name, 0))));
        }
        double fallbacksBefore = fallbacks(gw);
        double writesBefore = writeRequests(gw);

        List<CompletableFuture<Object>> answers = OneBatch.afterWrite(gw.curator(), gw.zk(), calls);
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).handle((v, x) -> null)
                .orTimeout(20, TimeUnit.SECONDS).join();

        for (int i = 0; i < 13; i++) {
            if (i == 6) {
                assertThat(code(answers.get(i))).as("the gone session's acquire").isEqualTo(ErrorCode.SESSION_NOT_FOUND);
                continue;
            }
            AcquireResult got = (AcquireResult) answer(answers.get(i));
            assertThat(got.status()).as("acquire %d", i).isEqualTo(Status.GRANTED);
            assertThat(got.token()).as("acquire %d's token is its node's czxid", i).isEqualTo(czxidOfOnlyNode("split/n" + i));
        }
        assertThat(fallbacks(gw) - fallbacksBefore).as("the batch failed once").isEqualTo(1);
        assertThat(largestWriteBatch(gw)).as("the thirteen calls were one multi").isGreaterThanOrEqualTo(13);
        assertThat(writeRequests(gw) - writesBefore).as("write requests: the plug, the batch, then three")
                .isLessThanOrEqualTo(5);
    }

    /** Write requests sent so far ({@code warden_zk_batch_calls{kind="write"}}'s count). */
    private static double writeRequests(Gateway gw) {
        DistributionSummary s = gw.metrics().registry().find("warden.zk.batch.calls").tag("kind", "write").summary();
        return s == null ? 0 : s.count();
    }

    /**
     * A batch's reply is lost with the connection (a proxy cuts it after the {@code multi} reached the server): Curator
     * sends the batch again after reconnecting, which fails because the first attempt was applied; then each call is
     * sent alone, and each resolves its lost reply as it does alone: the acquires find their own nodes, the release
     * finds its request's tombstone.
     */
    @Test
    void aBatchWhoseReplyIsLost_answersEveryCallAsItsOwnLostReplyWould() throws Exception {
        try (ZkCutProxy proxy = new ZkCutProxy(fx.server.getPort())) {
            Gateway gw = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
            Warden w = gw.warden();
            String a = session(w, "a", 60_000);
            String b = session(w, "b", 60_000);
            String c = session(w, "c", 60_000);
            AcquireResult bHeld = join(w.acquire(exclusive(b, "lost/b", 0)));
            container("lost/a"); // so that the batch is applied on its first attempt
            container("lost/c");
            double fallbacksBefore = fallbacks(gw);

            proxy.cutAfterNext(ZkCutProxy.MULTI, 1, a); // the batch carries a's request record; the plug does not
            List<CompletableFuture<Object>> answers = OneBatch.afterWrite(gw.curator(), gw.zk(), List.of(
                    () -> widen(w.acquire(exclusive(a, "lost/a", 0))),
                    () -> widen(w.release(b, LockName.parse("lost/b"), bHeld.token())),
                    () -> widen(w.acquire(exclusive(c, "lost/c", 0)))));

            AcquireResult aGot = (AcquireResult) answer(answers.get(0));
            Object bGot = answer(answers.get(1));
            AcquireResult cGot = (AcquireResult) answer(answers.get(2));
            assertThat(proxy.hasCut()).as("the batch's reply was lost").isTrue();
            assertThat(aGot.status()).isEqualTo(Status.GRANTED);
            assertThat(aGot.token()).isEqualTo(czxidOfOnlyNode("lost/a"));
            assertThat(bGot).as("the release was applied, its reply lost").isEqualTo(true);
            assertThat(cGot.status()).isEqualTo(Status.GRANTED);
            assertThat(cGot.token()).isEqualTo(czxidOfOnlyNode("lost/c"));
            assertThat(fx.queue("lost/b")).isEmpty();
            assertThat(largestWriteBatch(gw)).as("the three calls were one multi").isGreaterThanOrEqualTo(3);
            assertThat(fallbacks(gw) - fallbacksBefore).isPositive();
        }
    }

    /**
     * Nodes made in one transaction share its zxid, and a token is its queue node's czxid: two queue nodes of one name
     * in one batch would tie. Eight acquires on one name made together go in eight transactions.
     */
    @Test
    void acquiresOnOneNameMadeTogether_neverShareATransaction() throws Exception {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        List<String> sessions = new ArrayList<>();
        List<Supplier<CompletableFuture<AcquireResult>>> calls = new ArrayList<>();
        container("tie/one");
        for (int i = 0; i < 8; i++) {
            String s = session(w, "s" + i, 60_000);
            String own = "tie/other-" + i;
            container(own);
            sessions.add(s);
            calls.add(() -> w.acquire(exclusive(s, "tie/one", 30_000)));
            calls.add(() -> w.acquire(exclusive(s, own, 0))); // on names of their own: these share batches freely
        }

        List<CompletableFuture<AcquireResult>> answers = OneBatch.afterWrite(gw.curator(), gw.zk(), calls);

        WardenFixture.await("all eight queued", () -> fx.queueSize("tie/one") == 8);
        Set<Long> czxids = new HashSet<>();
        for (String node : fx.queue("tie/one")) {
            czxids.add(fx.curator.checkExists().forPath(WardenFixture.lockPath("tie/one") + "/" + node).getCzxid());
        }
        assertThat(czxids).as("czxids of the eight queue nodes of tie/one").hasSize(8);
        assertThat(largestWriteBatch(gw)).as("the acquires of the other names were batched").isGreaterThanOrEqualTo(8);
        // Each is granted in turn, with a larger token than the one before.
        Set<Integer> served = new HashSet<>();
        long last = 0;
        for (int turn = 0; turn < 8; turn++) {
            WardenFixture.await("the next grant of tie/one", () -> granted(answers, served) >= 0);
            int i = granted(answers, served);
            served.add(i);
            long token = answers.get(2 * i).join().token();
            assertThat(token).isGreaterThan(last);
            last = token;
            assertThat(w.release(sessions.get(i), LockName.parse("tie/one"), token).join()).isTrue();
        }
    }

    /**
     * All the threads of an SDK process share one session, and each release makes an end marker under that session:
     * releases of one session made together share a transaction (end markers are ordered by their sequence numbers,
     * which differ within one), and each is answered as alone, with a marker of its own.
     */
    @Test
    void releasesOfOneSessionMadeTogether_shareATransaction_eachWithItsOwnMarker() throws Exception {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        String s = session(w, "sdk", 60_000);
        List<Supplier<CompletableFuture<Boolean>>> releases = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String name = "markers/lock-" + i;
            AcquireResult r = join(w.acquire(exclusive(s, name, 0)));
            assertThat(r.status()).isEqualTo(Status.GRANTED);
            releases.add(() -> w.release(s, LockName.parse(name), r.token()));
        }
        String sessionPath = CellPaths.session(s);
        long markersBefore = markers(sessionPath).size();

        List<CompletableFuture<Boolean>> answers = OneBatch.afterWrite(gw.curator(), gw.zk(), releases);

        for (CompletableFuture<Boolean> a : answers) {
            assertThat(a.get(30, TimeUnit.SECONDS)).as("released").isTrue();
        }
        List<String> markers = markers(sessionPath);
        assertThat(markers).as("one end marker per release").hasSize((int) markersBefore + 8);
        assertThat(largestWriteBatch(gw)).as("the releases went together").isGreaterThanOrEqualTo(8);
        for (int i = 0; i < 8; i++) {
            assertThat(fx.queue("markers/lock-" + i)).as("markers/lock-" + i + " is free").isEmpty();
        }
    }

    private List<String> markers(String sessionPath) throws Exception {
        return fx.curator.getChildren().forPath(sessionPath).stream().filter(n -> n.startsWith("~")).toList();
    }

    /** The index of a client whose acquire of tie/one has been granted and not yet released, or -1. */
    private static int granted(List<CompletableFuture<AcquireResult>> answers, Set<Integer> served) {
        for (int i = 0; i < answers.size() / 2; i++) {
            CompletableFuture<AcquireResult> f = answers.get(2 * i);
            if (!served.contains(i) && f.isDone() && f.join().status() == Status.GRANTED) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The same under load: 24 clients take turns on one name for a while, each acquiring (waiting) and releasing as
     * soon as it is answered; every grant's token is new and larger than the one before it.
     */
    @Test
    void clientsTakingTurnsOnOneName_getStrictlyIncreasingTokens() throws Exception {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        int clients = 24;
        int turnsEach = 8;
        ConcurrentLinkedQueue<Long> grants = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> chains = new ArrayList<>();
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            sessions.add(session(w, "t" + i, 120_000));
        }
        for (String s : sessions) {
            chains.add(turns(w, s, grants, turnsEach));
        }
        CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new)).orTimeout(120, TimeUnit.SECONDS).join();

        List<Long> inOrder = new ArrayList<>(grants);
        assertThat(inOrder).hasSize(clients * turnsEach);
        assertThat(inOrder).as("tokens in grant order").isSorted().doesNotHaveDuplicates();
        assertThat(largestWriteBatch(gw)).as("writes were batched").isGreaterThan(1);
    }

    private static CompletableFuture<Void> turns(Warden w, String s, ConcurrentLinkedQueue<Long> grants, int left) {
        if (left == 0) {
            return CompletableFuture.completedFuture(null);
        }
        return w.acquire(exclusive(s, "turns/one", 60_000)).thenCompose(r -> {
            assertThat(r.status()).isEqualTo(Status.GRANTED);
            grants.add(r.token()); // while it holds: no other grant of the name can come in between
            return w.release(s, LockName.parse("turns/one"), r.token());
        }).thenCompose(released -> turns(w, s, grants, left - 1));
    }

    // ------------------------------------------------------------------ helpers

    private static AcquireRequest request(String session, String name, String requestId, long waitMs) {
        return new AcquireRequest(session, LockName.parse(name), Mode.EXCLUSIVE, waitMs, requestId, OnTimeout.CANCEL);
    }

    @SuppressWarnings("unchecked")
    private static CompletableFuture<Object> widen(CompletableFuture<?> f) {
        return (CompletableFuture<Object>) f;
    }

    private static Object answer(CompletableFuture<Object> f) {
        return f.orTimeout(20, TimeUnit.SECONDS).join();
    }

    private static ErrorCode code(CompletableFuture<Object> f) {
        try {
            f.orTimeout(20, TimeUnit.SECONDS).join();
        } catch (RuntimeException e) {
            return WardenFixture.code(e);
        }
        throw new AssertionError("expected a failure, got " + f.join());
    }

    /** Makes the lock's node (a CONTAINER, as the engine makes it) before any acquire of it. */
    private void container(String name) throws Exception {
        fx.curator.create().creatingParentContainersIfNeeded().withMode(org.apache.zookeeper.CreateMode.CONTAINER)
                .forPath(WardenFixture.lockPath(name));
    }

    private long czxidOfOnlyNode(String name) throws Exception {
        List<String> queue = fx.queue(name);
        assertThat(queue).hasSize(1);
        Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(name) + "/" + queue.get(0));
        return stat.getCzxid();
    }

    /** The most calls one write request carried lately ({@code warden_zk_batch_calls{kind="write"}}). */
    static double largestWriteBatch(Gateway gw) {
        DistributionSummary s = gw.metrics().registry().find("warden.zk.batch.calls").tag("kind", "write").summary();
        return s == null ? 0 : s.max();
    }

    static double fallbacks(Gateway gw) {
        var c = gw.metrics().registry().find("warden.zk.batch.fallbacks").tag("kind", "write").counter();
        return c == null ? 0 : c.count();
    }

    /** Writes the lock node's cversion (the next sequence suffix) into the server's data tree (as LockEngineTrustTest). */
    private void setChildVersion(String name, int cversion) throws Exception {
        Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(name));
        Method server = TestingServer.class.getDeclaredMethod("getTestingZooKeeperServer");
        server.setAccessible(true);
        Object testing = server.invoke(fx.server);
        Method main = testing.getClass().getDeclaredMethod("getMain");
        main.setAccessible(true);
        ZooKeeperServer zks = ((ZooKeeperServerEmbeddedAdapter) main.invoke(testing)).getServerCnxnFactory().getZooKeeperServer();
        zks.getZKDatabase().getDataTree().setCversionPzxid("/warden" + WardenFixture.lockPath(name), cversion, stat.getPzxid());
    }
}
