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
import io.warden.service.api.WardenException.ErrorCode;
import io.warden.service.queue.QueueEntry;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import io.warden.service.zk.CellPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Multi-lock requests (contract §2.7 and §2.11, docs/decisions/0012) under real faults: the same request sent to two
 * gateways at once, replies lost with the connection after ZooKeeper applied the write, and a gateway cut off from
 * ZooKeeper while the request waits. Whatever happens, a request is one record and one entry per name, all made and
 * all removed in one transaction: never two entries of one name, never one name's entry without the others', and
 * every call for the request that says GRANTED says the same tokens.
 *
 * <p>Faults are injected with {@link ZkCutProxy} between one gateway and the (real) ZooKeeper server; time is the
 * fixture's manual clock, so a call's {@code wait_ms} runs out exactly when the test advances it.
 */
class MultiLockFaultTest {
    private WardenFixture fx;
    private ZkCutProxy proxy;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        proxy = new ZkCutProxy(fx.server.getPort());
    }

    @AfterEach
    void tearDown() throws Exception {
        proxy.heal(); // so a gateway behind the proxy can close its ZooKeeper session instead of timing out
        fx.close();
        proxy.close();
    }

    /**
     * A gateway behind the proxy, with a ZooKeeper session long enough that a request held in the proxy, or a
     * partition of a few seconds, does not expire it (that would be another test: every watch and tracking lost).
     */
    private Gateway proxied() {
        return fx.gateway(fx.config().withZkConnect(proxy.connectString()).withZkSessionTimeout(Duration.ofSeconds(30)));
    }

    /** A second gateway straight on ZooKeeper, with its own data directory (its own high-water mark of the cell). */
    private Gateway direct(String dir) {
        return fx.gateway(fx.config().toBuilder().dataDir(fx.gatewayData.resolve(dir)).build());
    }

    private static MultiAcquireRequest multi(String session, String requestId, long waitMs, String... names) {
        List<LockName> ns = new ArrayList<>();
        for (String n : names) {
            ns.add(LockName.parse(n));
        }
        return new MultiAcquireRequest(session, ns, Mode.EXCLUSIVE, waitMs, requestId, OnTimeout.CANCEL);
    }

    private static MultiAcquireResult joinAll(CompletableFuture<MultiAcquireResult> f) {
        return f.orTimeout(30, TimeUnit.SECONDS).join();
    }

    /** The queue nodes of request {@code requestId} of the session on the lock {@code name}, as ZooKeeper has them. */
    private List<String> entriesOf(String session, String requestId, String name) throws Exception {
        String uuid = CellPaths.requestUuid(session, requestId);
        return fx.queue(name).stream()
                .filter(node -> QueueEntry.parse(node).map(e -> e.id().equals(uuid)).orElse(false)).toList();
    }

    /** How many of the names have an entry of the request (each at most one, checked). */
    private int namesWithEntries(String session, String requestId, String... names) throws Exception {
        int with = 0;
        for (String name : names) {
            List<String> entries = entriesOf(session, requestId, name);
            assertThat(entries).as("entries of request %s on %s", requestId, name).hasSizeLessThanOrEqualTo(1);
            with += entries.size();
        }
        return with;
    }

    /** The request's record as ZooKeeper has it: version 1 while live, {@link Tombstones#TOMBSTONE_VERSION} once ended. */
    private Stat recordStat(String session, String requestId) throws Exception {
        return fx.curator.checkExists().forPath(CellPaths.sessionRequest(session, CellPaths.requestUuid(session, requestId)));
    }

    /**
     * The tokens a GRANTED answer must carry: each name's one entry of the request has the transaction's zxid as its
     * czxid (the floor is 0 here), and every name holds that entry alone.
     */
    private void assertGrantedAsInZooKeeper(MultiAcquireResult r, String session, String requestId, String... names)
            throws Exception {
        assertThat(r.status()).isEqualTo(Status.GRANTED);
        assertThat(r.tokens()).containsOnlyKeys(names);
        for (String name : names) {
            List<String> entries = entriesOf(session, requestId, name);
            assertThat(entries).as("the request's entries on %s", name).hasSize(1);
            long czxid = fx.curator.checkExists().forPath(WardenFixture.lockPath(name) + "/" + entries.get(0)).getCzxid();
            assertThat(r.tokens().get(name)).as("the token of %s", name).isEqualTo(czxid);
        }
    }

    /** Nothing of the request is left: no entry on any name, its record a tombstone, no call held for it. */
    private void assertNothingLeft(String session, String requestId, List<Gateway> gateways, String... names)
            throws Exception {
        assertThat(namesWithEntries(session, requestId, names)).as("names with an entry of the ended request").isZero();
        assertThat(recordStat(session, requestId).getVersion()).as("the request's record, ended")
                .isEqualTo(Tombstones.TOMBSTONE_VERSION);
        for (Gateway g : gateways) {
            assertThat(g.pendingAcquires()).as("calls held at a gateway").isZero();
        }
    }

    // ------------------------------------------------------------------ one request at two gateways

    /**
     * A client that resends its request to another gateway while the first still works on it (its reply was slow) sends
     * the same session and request id to two gateways at once. Both make the request's {@code multi}; ZooKeeper applies
     * one, the other fails on the existing record and joins the request it made. Both calls answer the one grant; the
     * two releases of the whole request (also sent to both) end it once: one answers {@code released:true}, the other
     * is a repeat ({@code false}). Twelve rounds, the gateways' order alternating, so the multis meet in ZooKeeper in
     * both orders.
     */
    @Test
    void theSameRequestSentToTwoGatewaysAtOnce_isOneRequest_andBothCallsAnswerItsTokens() throws Exception {
        Gateway g1 = fx.gateway();
        Gateway g2 = direct("second");
        String s = session(g1.warden(), "client", 60_000);
        for (int round = 0; round < 12; round++) {
            String[] names = {"race/a-" + round, "race/b-" + round, "race/c-" + round};
            String id = "race-" + round;
            Warden first = round % 2 == 0 ? g1.warden() : g2.warden();
            Warden second = round % 2 == 0 ? g2.warden() : g1.warden();

            CompletableFuture<MultiAcquireResult> one = first.acquireAll(multi(s, id, 0, names));
            CompletableFuture<MultiAcquireResult> other = second.acquireAll(multi(s, id, 0, names[2], names[0], names[1]));

            MultiAcquireResult a = joinAll(one);
            MultiAcquireResult b = joinAll(other);
            assertGrantedAsInZooKeeper(a, s, id, names);
            assertThat(b.status()).as("round %d: the call at the other gateway", round).isEqualTo(Status.GRANTED);
            assertThat(b.tokens()).as("round %d: one request, one set of tokens", round).isEqualTo(a.tokens());
            for (String name : names) {
                assertThat(fx.queue(name)).as("round %d: the queue of %s", round, name).hasSize(1);
            }

            CompletableFuture<Boolean> r1 = second.releaseRequest(s, id);
            CompletableFuture<Boolean> r2 = first.releaseRequest(s, id);
            List<Boolean> released = List.of(r1.orTimeout(30, TimeUnit.SECONDS).join(),
                    r2.orTimeout(30, TimeUnit.SECONDS).join());
            assertThat(released).as("round %d: the two releases of the whole request", round)
                    .containsExactlyInAnyOrder(true, false);
            assertNothingLeft(s, id, List.of(g1, g2), names);
        }
    }

    /**
     * The same request waiting at two gateways (a resend elsewhere after the first call seemed to hang): both calls
     * wait on the one request, and when its blocker goes both answer the same grant, with the request still one entry
     * per name.
     */
    @Test
    void theSameRequestWaitingAtTwoGateways_isGrantedOnce_andBothCallsAnswerTheSameTokens() throws Exception {
        Gateway g1 = fx.gateway();
        Gateway g2 = direct("second");
        String holder = session(g2.warden(), "holder", 60_000);
        String s = session(g1.warden(), "client", 60_000);
        AcquireResult held = join(g2.warden().acquire(exclusive(holder, "wait2/y", 0)));

        CompletableFuture<MultiAcquireResult> one = g1.warden().acquireAll(multi(s, "w", 60_000, "wait2/x", "wait2/y"));
        CompletableFuture<MultiAcquireResult> other = g2.warden().acquireAll(multi(s, "w", 60_000, "wait2/y", "wait2/x"));
        await("both calls held, on one request", () -> g1.pendingAcquires() == 1 && g2.pendingAcquires() == 1
                && fx.queueSize("wait2/x") == 1 && fx.queueSize("wait2/y") == 2);
        assertThat(one).isNotDone();
        assertThat(other).isNotDone();

        assertThat(g2.warden().release(holder, LockName.parse("wait2/y"), held.token()).join()).isTrue();

        MultiAcquireResult a = joinAll(one);
        MultiAcquireResult b = joinAll(other);
        assertGrantedAsInZooKeeper(a, s, "w", "wait2/x", "wait2/y");
        assertThat(b.status()).isEqualTo(Status.GRANTED);
        assertThat(b.tokens()).isEqualTo(a.tokens());
        assertThat(g1.warden().releaseRequest(s, "w").join()).isTrue();
        assertNothingLeft(s, "w", List.of(g1, g2), "wait2/x", "wait2/y");
    }

    /**
     * The multi-lock form of LateCancelTest. A call whose wait ran out at one gateway sends its cancel (every entry
     * removed in one {@code multi}), and that cancel is held up on its way to ZooKeeper; meanwhile the blocker goes and
     * the client's resend at the other gateway is told GRANTED. When the late cancel arrives it must remove nothing (its
     * {@code multi} checks that the blocker is still there), and the first call, looking again, answers the same grant.
     * Without the check, the client would hold nothing while it was told it held both names.
     */
    @Test
    void aCancelHeldUpAtOneGateway_whileTheResendElsewhereIsGranted_removesNothing() throws Exception {
        Gateway g1 = proxied();
        Gateway g2 = direct("second");
        Warden w1 = g1.warden();
        Warden w2 = g2.warden();
        String holder = session(w2, "holder", 60_000);
        String s = session(w1, "client", 60_000);
        AcquireResult held = join(w2.acquire(exclusive(holder, "late/y", 0)));

        CompletableFuture<MultiAcquireResult> onG1 = w1.acquireAll(multi(s, "r-1", 1_000, "late/x", "late/y"));
        await("the request queued behind the holder, its call held by g1 with its timer set",
                () -> fx.queueSize("late/y") == 2 && fx.queueSize("late/x") == 1 && g1.pendingAcquires() == 1);

        // Its wait runs out: g1 reads the queues (still blocked on late/y) and sends the cancel, which the proxy holds.
        proxy.holdNext(ZkCutProxy.MULTI, CellPaths.requestUuid(s, "r-1"));
        fx.clock.advance(Duration.ofMillis(1_000));
        await("g1's cancel held on its way to ZooKeeper", proxy::holding);

        assertThat(w2.release(holder, LockName.parse("late/y"), held.token()).join()).isTrue();
        MultiAcquireResult resent = joinAll(w2.acquireAll(multi(s, "r-1", 5_000, "late/y", "late/x")));
        assertGrantedAsInZooKeeper(resent, s, "r-1", "late/x", "late/y");

        proxy.releaseHeld();
        MultiAcquireResult late = joinAll(onG1);
        assertThat(namesWithEntries(s, "r-1", "late/x", "late/y")).as("names the granted request still holds").isEqualTo(2);
        assertThat(late.status()).as("the first call, answered after its blocker went").isEqualTo(Status.GRANTED);
        assertThat(late.tokens()).isEqualTo(resent.tokens());
        assertThat(w2.releaseRequest(s, "r-1").join()).isTrue();
        assertNothingLeft(s, "r-1", List.of(g1, g2), "late/x", "late/y");
    }

    // ------------------------------------------------------------------ lost replies

    /**
     * A request on the names, granted and released, so that their lock nodes exist: the first {@code multi} on a name
     * with no lock node fails (NONODE, nothing applied) and is sent again after the node is made, and a test of a lost
     * reply must lose the reply of a {@code multi} that was applied.
     */
    private static void makeLockNodes(Warden w, String session, String... names) {
        String id = "make-" + String.join("+", names);
        assertThat(joinAll(w.acquireAll(multi(session, id, 0, names))).status()).isEqualTo(Status.GRANTED);
        assertThat(w.releaseRequest(session, id).join()).isTrue();
    }

    /**
     * The acquire's {@code multi} reaches ZooKeeper and is applied, and the connection drops before its reply comes
     * back; Curator sends it again on the new connection, where it fails on the record the first attempt made. The
     * call joins the request it made instead of failing or making a second one: one entry per name, tokens the entries'.
     * The client's own resend of the request (same request id, names in another order) answers the same tokens.
     */
    @Test
    void anAcquireWhoseReplyIsLost_isMadeOnce_andItsResendAnswersTheSameTokens() throws Exception {
        Gateway g = proxied();
        Warden w = g.warden();
        String s = session(w, "client", 60_000);
        String[] names = {"lost/a", "lost/b", "lost/c"};
        makeLockNodes(w, s, names);

        proxy.cutAfterNext(ZkCutProxy.MULTI, 1, CellPaths.requestUuid(s, "lost-1"));
        MultiAcquireResult r = joinAll(w.acquireAll(multi(s, "lost-1", 0, names)));

        assertThat(proxy.hasCut()).as("the reply of the acquire's multi was lost").isTrue();
        assertGrantedAsInZooKeeper(r, s, "lost-1", names);
        MultiAcquireResult again = joinAll(w.acquireAll(multi(s, "lost-1", 0, "lost/c", "lost/b", "lost/a")));
        assertThat(again.status()).isEqualTo(Status.GRANTED);
        assertThat(again.tokens()).isEqualTo(r.tokens());
        for (String name : names) {
            assertThat(fx.queue(name)).as("the queue of %s", name).hasSize(1);
        }
        assertThat(w.releaseRequest(s, "lost-1").join()).isTrue();
        assertNothingLeft(s, "lost-1", List.of(g), names);
    }

    /**
     * Every attempt's reply lost (the first applied, Curator's resends too): the call fails (503, so the client knows
     * to resend), though its request was made. The client's resend, once the connection holds, finds that request and
     * is granted it with the tokens of its entries; there is still one entry per name.
     */
    @Test
    void anAcquireWhoseEveryReplyIsLost_failsUnavailable_andTheClientsResendIsGrantedTheRequestMade() throws Exception {
        Gateway g = proxied();
        Warden w = g.warden();
        String s = session(w, "client", 60_000);
        String[] names = {"lost2/a", "lost2/b"};
        makeLockNodes(w, s, names);

        proxy.cutAfterNext(ZkCutProxy.MULTI, 10, CellPaths.requestUuid(s, "lost-2"));
        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(s, "lost-2", 0, names))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNAVAILABLE));
        proxy.cutAfterNext(ZkCutProxy.MULTI, 0); // no more cuts
        await("the gateway connected to ZooKeeper again", () -> !g.zkRefusing());
        assertThat(namesWithEntries(s, "lost-2", names)).as("names with an entry of the request").isEqualTo(2);

        MultiAcquireResult resent = joinAll(w.acquireAll(multi(s, "lost-2", 0, names)));

        assertGrantedAsInZooKeeper(resent, s, "lost-2", names);
        for (String name : names) {
            assertThat(fx.queue(name)).as("the queue of %s", name).hasSize(1);
        }
        assertThat(w.releaseRequest(s, "lost-2").join()).isTrue();
        assertNothingLeft(s, "lost-2", List.of(g), names);
    }

    /**
     * A request made though every reply of its {@code multi} was lost still counts against the session's
     * {@code max-requests-per-session} (a multi-lock request counts once): with a limit of 2, that request, its resend
     * and one more request fill the session, and a third request is refused (429) with nothing written. The gateway
     * cannot know from the failed call whether the request was made, so it must not go on trusting a count that
     * says it was not.
     */
    @Test
    void aRequestMadeThoughEveryReplyWasLost_countsAgainstTheSessionsLimit() throws Exception {
        Gateway g = fx.gateway(fx.config().withZkConnect(proxy.connectString())
                .withZkSessionTimeout(Duration.ofSeconds(30)).toBuilder().maxRequestsPerSession(2).build());
        Warden w = g.warden();
        String s = session(w, "client", 60_000);
        String[] names = {"limit/a", "limit/b"};
        makeLockNodes(w, s, names);

        proxy.cutAfterNext(ZkCutProxy.MULTI, 10, CellPaths.requestUuid(s, "lost"));
        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(s, "lost", 0, names))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNAVAILABLE));
        proxy.cutAfterNext(ZkCutProxy.MULTI, 0); // no more cuts
        await("the gateway connected to ZooKeeper again", () -> !g.zkRefusing());
        assertThat(namesWithEntries(s, "lost", names)).as("the request was made").isEqualTo(2);
        assertThat(joinAll(w.acquireAll(multi(s, "lost", 0, names))).status()).as("its resend").isEqualTo(Status.GRANTED);
        assertThat(joinAll(w.acquireAll(multi(s, "second", 0, "limit/c", "limit/d"))).status()).isEqualTo(Status.GRANTED);

        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(s, "third", 0, "limit/e", "limit/f"))))
                .as("a third request of a session allowed two")
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.RESOURCE_EXHAUSTED));
        assertThat(fx.queue("limit/e")).as("nothing made for the refused request").isEmpty();
    }

    /**
     * The release of the whole request ({@code {session_id, request_id}}) is applied and its reply lost; Curator's resend
     * fails on the entries the first attempt deleted. The call answers {@code released:true} (the record, tombstoned by
     * that first attempt, says so), never an error; the client's own resend is a repeat ({@code released:false}), and a
     * resend of the acquire is refused as a request that has ended.
     */
    @Test
    void aWholeRequestReleaseWhoseReplyIsLost_answersReleased_andItsResendIsARepeat() throws Exception {
        Gateway g = proxied();
        Warden w = g.warden();
        String s = session(w, "client", 60_000);
        String[] names = {"lostrel/a", "lostrel/b", "lostrel/c"};
        joinAll(w.acquireAll(multi(s, "rel-1", 0, names)));

        proxy.cutAfterNext(ZkCutProxy.MULTI, 1, CellPaths.requestUuid(s, "rel-1"));
        boolean released = w.releaseRequest(s, "rel-1").orTimeout(30, TimeUnit.SECONDS).join();

        assertThat(proxy.hasCut()).as("the reply of the release's multi was lost").isTrue();
        assertThat(released).as("released, though the reply of the multi that did it was lost").isTrue();
        assertNothingLeft(s, "rel-1", List.of(g), names);
        assertThat(w.releaseRequest(s, "rel-1").orTimeout(30, TimeUnit.SECONDS).join()).as("the client's resend").isFalse();
        assertThatThrownBy(() -> joinAll(w.acquireAll(multi(s, "rel-1", 0, names))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("already ended");
        assertNothingLeft(s, "rel-1", List.of(g), names);
    }

    // ------------------------------------------------------------------ a gateway cut off from ZooKeeper

    /** The set-up of the cut-off tests: a holder of {@code cut/y} at g2, a client's request on three names waiting at g1. */
    private record Waiting(Gateway g1, Gateway g2, String holder, AcquireResult held, String client,
                           CompletableFuture<MultiAcquireResult> call) {
    }

    private static final String[] CUT = {"cut/x", "cut/y", "cut/z"};

    private Waiting waitingAtTheProxiedGateway(String requestId) throws Exception {
        Gateway g1 = proxied();
        Gateway g2 = direct("second");
        String holder = session(g2.warden(), "holder", 60_000);
        String client = session(g2.warden(), "client", 60_000);
        AcquireResult held = join(g2.warden().acquire(exclusive(holder, "cut/y", 0)));
        CompletableFuture<MultiAcquireResult> call = g1.warden().acquireAll(multi(client, requestId, 5_000, CUT));
        await("the request queued on every name, its call held by g1 with its timer set",
                () -> fx.queueSize("cut/x") == 1 && fx.queueSize("cut/y") == 2 && fx.queueSize("cut/z") == 1
                        && g1.pendingAcquires() == 1);
        return new Waiting(g1, g2, holder, held, client, call);
    }

    /**
     * A multi-lock call on {@code x} and {@code y} held at {@code g1} (60 s wait), queued behind a hold of {@code y} by
     * another session at a second gateway straight on ZooKeeper, and watching that hold.
     */
    private Waiting waitingBehindAHolder(Gateway g1, String requestId, String x, String y) throws Exception {
        Gateway g2 = direct("second");
        String holder = session(g2.warden(), "holder", 60_000);
        String client = session(g2.warden(), "client", 60_000);
        AcquireResult held = join(g2.warden().acquire(exclusive(holder, y, 0)));
        CompletableFuture<MultiAcquireResult> call = g1.warden().acquireAll(multi(client, requestId, 60_000, x, y));
        await("the request queued, its call held by g1 and watching the holder", () -> fx.queueSize(y) == 2
                && g1.pendingAcquires() == 1 && fx.queueNodeWatches(y) == 1);
        return new Waiting(g1, g2, holder, held, client, call);
    }

    /** The code of the call's failure (it must fail). */
    private static ErrorCode failureOf(CompletableFuture<MultiAcquireResult> call) {
        try {
            MultiAcquireResult r = call.orTimeout(30, TimeUnit.SECONDS).join();
            throw new AssertionError("expected the call to fail, it answered " + r);
        } catch (CompletionException e) {
            return code(e);
        }
    }

    /** Entries all there with a live record, or none with a tombstone: never a part of the request. */
    private int assertWholeOrNone(String client, String requestId) throws Exception {
        int with = namesWithEntries(client, requestId, CUT);
        assertThat(with).as("names with an entry of the request (all or none)").isIn(0, CUT.length);
        assertThat(recordStat(client, requestId).getVersion()).as("the request's record, live with its entries or ended without")
                .isEqualTo(with == 0 ? Tombstones.TOMBSTONE_VERSION : 1);
        return with;
    }

    private void reconnect(Gateway g) {
        proxy.heal();
        await("the gateway connected to ZooKeeper again", Duration.ofSeconds(30), () -> !g.zkRefusing() && g.warden().ready());
    }

    /**
     * The gateway holding a waiting multi-lock call loses ZooKeeper (its connections closed, new ones refused). New
     * calls there are refused at once (503, nothing sent). When the waiting call's {@code wait_ms} runs out it cannot
     * read the queues nor remove anything: it answers 503 without waiting for ZooKeeper to come back, and every entry is
     * still there. Once the gateway is connected again, the client's resend with the request id rejoins the request and
     * is granted when the blocker goes.
     */
    @Test
    void aGatewayCutOffWhileTheRequestWaits_answersUnavailable_keepsEveryEntry_andTheResendCompletesIt() throws Exception {
        Waiting at = waitingAtTheProxiedGateway("cut-1");
        Warden w1 = at.g1().warden();

        proxy.partition();
        await("g1 sees ZooKeeper gone", at.g1()::zkRefusing);
        long start = System.nanoTime();
        assertThatThrownBy(() -> joinAll(w1.acquireAll(multi(at.client(), "cut-other", 5_000, "cut/w", "cut/v"))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNAVAILABLE));
        assertThatThrownBy(() -> w1.releaseRequest(at.client(), "cut-1").orTimeout(30, TimeUnit.SECONDS).join())
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNAVAILABLE));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("new calls refused at once").isLessThan(Duration.ofSeconds(1));
        assertThat(at.call()).as("the waiting call, before its wait runs out").isNotDone();

        start = System.nanoTime();
        fx.clock.advance(Duration.ofMillis(5_000));
        assertThat(failureOf(at.call())).as("the waiting call whose wait ran out").isEqualTo(ErrorCode.UNAVAILABLE);
        Duration answeredIn = Duration.ofNanos(System.nanoTime() - start);
        System.out.printf("a multi-lock call whose wait ran out on a gateway cut off from ZooKeeper answered in %d ms%n",
                answeredIn.toMillis());
        // Its read of the queues, queued while ZooKeeper is unreachable, fails at Curator's connection timeout (1.5 s),
        // and no retry is allowed once ZooKeeper has stopped answering (Zk.Retries): about 2 s in our runs. A hang is
        // a call left unanswered until the reconnection, or for good.
        assertThat(answeredIn).as("answered while still cut off, without waiting for ZooKeeper").isLessThan(Duration.ofSeconds(10));
        assertThat(assertWholeOrNone(at.client(), "cut-1")).as("every entry left (its cancel could not be sent)")
                .isEqualTo(CUT.length);

        reconnect(at.g1());
        CompletableFuture<MultiAcquireResult> resent = w1.acquireAll(multi(at.client(), "cut-1", 60_000, CUT));
        await("the resend held at g1", () -> at.g1().pendingAcquires() == 1);
        assertThat(at.g2().warden().release(at.holder(), LockName.parse("cut/y"), at.held().token()).join()).isTrue();
        MultiAcquireResult granted = joinAll(resent);
        assertGrantedAsInZooKeeper(granted, at.client(), "cut-1", CUT);
        assertThat(w1.releaseRequest(at.client(), "cut-1").join()).isTrue();
        assertNothingLeft(at.client(), "cut-1", List.of(at.g1(), at.g2()), CUT);
    }

    /**
     * The gateway loses ZooKeeper just as the call's cancel (every entry removed in one {@code multi}) is on its way,
     * before it reaches the server: the call answers 503, and the request is still whole (no entry removed without the
     * others). Reconnected, the client's release of the whole request removes it at once, and the holder keeps its hold.
     */
    @Test
    void aGatewayCutOffBeforeItsCancelArrives_answersUnavailable_theRequestStaysWhole_andItsReleaseEndsIt() throws Exception {
        Waiting at = waitingAtTheProxiedGateway("cut-2");

        proxy.holdNext(ZkCutProxy.MULTI, CellPaths.requestUuid(at.client(), "cut-2"));
        fx.clock.advance(Duration.ofMillis(5_000));
        await("g1's cancel held on its way to ZooKeeper", proxy::holding);
        proxy.partition(); // closes the connection under the held cancel: it never reaches the server
        proxy.releaseHeld();

        assertThat(failureOf(at.call())).as("the call whose cancel was lost with the connection").isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(assertWholeOrNone(at.client(), "cut-2")).as("every entry left (the cancel never arrived)")
                .isEqualTo(CUT.length);

        reconnect(at.g1());
        assertThat(at.g1().warden().releaseRequest(at.client(), "cut-2").join()).isTrue();
        assertNothingLeft(at.client(), "cut-2", List.of(at.g1(), at.g2()), CUT);
        assertThat(fx.queue("cut/y")).as("the holder's hold").hasSize(1);
        assertThat(at.g2().warden().release(at.holder(), LockName.parse("cut/y"), at.held().token()).join()).isTrue();
    }

    /**
     * The gateway's cancel reaches ZooKeeper and is applied, and the gateway is cut off before its reply comes back
     * (its resends refused while the partition lasts): the call answers 503 or, when a resend got through, TIMED_OUT;
     * either way the request ended whole (every entry gone, its record a tombstone). Reconnected, a resend of the
     * acquire is refused as a request that has ended, and a release of it is a repeat.
     */
    @Test
    void aGatewayCutOffAfterItsCancelWasApplied_leavesNothing_andAResendIsRefusedAsEnded() throws Exception {
        Waiting at = waitingAtTheProxiedGateway("cut-3");

        proxy.cutAfterNext(ZkCutProxy.MULTI, 1, CellPaths.requestUuid(at.client(), "cut-3"));
        fx.clock.advance(Duration.ofMillis(5_000));
        await("g1's cancel applied, its reply lost", proxy::hasCut);
        proxy.partition();

        try {
            MultiAcquireResult r = at.call().orTimeout(30, TimeUnit.SECONDS).join();
            assertThat(r.status()).as("the call, when a resend of its cancel got through").isEqualTo(Status.TIMED_OUT);
        } catch (CompletionException e) {
            assertThat(code(e)).as("the call whose cancel's reply was lost").isEqualTo(ErrorCode.UNAVAILABLE);
        }
        assertThat(assertWholeOrNone(at.client(), "cut-3")).as("every entry gone (the cancel was applied)").isZero();

        reconnect(at.g1());
        Warden w1 = at.g1().warden();
        assertThatThrownBy(() -> joinAll(w1.acquireAll(multi(at.client(), "cut-3", 60_000, CUT))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("already ended");
        assertThat(w1.releaseRequest(at.client(), "cut-3").join()).as("a release of the ended request").isFalse();
        assertNothingLeft(at.client(), "cut-3", List.of(at.g1(), at.g2()), CUT);
        assertThat(fx.queue("cut/y")).as("the holder's hold").hasSize(1);
    }

    /**
     * The look a waiting multi-lock call takes when its blocker goes is cut off with its connection again and again,
     * more often than ZooKeeper's client retries one read. A failed look is not an answer (the request is still queued,
     * its blocker gone): the call keeps waiting, looks again once the connection holds, and is granted then, not answered
     * 503.
     */
    @Test
    void aWaitingCallWhoseLooksAreCutOffAgainAndAgain_isGrantedOnceTheConnectionHolds() throws Exception {
        Gateway g1 = proxied();
        Waiting at = waitingBehindAHolder(g1, "look-1", "look/x", "look/y");
        Gateway g2 = at.g2();
        String holder = at.holder();
        String client = at.client();
        AcquireResult held = at.held();
        CompletableFuture<MultiAcquireResult> call = at.call();

        proxy.cutAfterNext(ZkCutProxy.LOCK_READS, 12, WardenFixture.lockPath("look/y"));
        assertThat(g2.warden().release(holder, LockName.parse("look/y"), held.token()).join()).isTrue();

        MultiAcquireResult granted = call.orTimeout(60, TimeUnit.SECONDS).join();
        assertThat(proxy.cutsLeft()).as("armed cuts left when the call was granted").isZero();
        assertGrantedAsInZooKeeper(granted, client, "look-1", "look/x", "look/y");
        assertThat(g2.warden().releaseRequest(client, "look-1").join()).isTrue();
        assertNothingLeft(client, "look-1", List.of(g1, g2), "look/x", "look/y");
    }

    /**
     * The gateway is cut off long enough for ZooKeeper to expire its own ZooKeeper session while the multi-lock call
     * waits there: the watch it kept on the blocker died with that session. Reconnected (a new ZooKeeper session), it
     * must look at the waiting call again and watch the blocker anew, so that when the holder lets go the call is
     * granted at once, not left to its {@code wait_ms} (which the manual clock never lets run out here).
     */
    @Test
    void aWaitingCallWhoseGatewaysZooKeeperSessionExpired_isGrantedWhenTheBlockerGoesAfterTheReconnection() throws Exception {
        Gateway g1 = fx.gateway(fx.config().withZkConnect(proxy.connectString())); // the fixture's short ZooKeeper session
        Waiting at = waitingBehindAHolder(g1, "exp-1", "exp/x", "exp/y");
        Gateway g2 = at.g2();
        String holder = at.holder();
        String client = at.client();
        AcquireResult held = at.held();
        CompletableFuture<MultiAcquireResult> call = at.call();

        proxy.partition();
        String registration = CellPaths.gateway(g1.gatewayId());
        await("ZooKeeper to expire g1's session (its registration, an ephemeral node, gone)", Duration.ofSeconds(60),
                () -> exists(registration) == null);
        assertThat(fx.queueNodeWatches("exp/y")).as("the blocker's watch, gone with g1's session").isZero();
        proxy.heal();
        // One condition at a time, so that a failure names the step that did not come.
        await("g1 registered again, on a new ZooKeeper session", Duration.ofSeconds(30), () -> exists(registration) != null);
        await("g1 ready: connected, its cell checked", Duration.ofSeconds(30), () -> g1.warden().ready());
        await("g1 watching the blocker again", Duration.ofSeconds(30), () -> fx.queueNodeWatches("exp/y") == 1
                || call.isDone());
        assertThat(call).as("the call, still waiting (not answered by the outage)").isNotDone();
        assertThat(fx.queueNodeWatches("exp/y")).as("g1's watches on the queue of exp/y").isEqualTo(1);

        assertThat(g2.warden().release(holder, LockName.parse("exp/y"), held.token()).join()).isTrue();

        MultiAcquireResult granted = joinAll(call);
        assertGrantedAsInZooKeeper(granted, client, "exp-1", "exp/x", "exp/y");
        assertThat(g2.warden().releaseRequest(client, "exp-1").join()).isTrue();
        assertNothingLeft(client, "exp-1", List.of(g1, g2), "exp/x", "exp/y");
    }

    private Stat exists(String path) {
        try {
            return fx.curator.checkExists().forPath(path);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
