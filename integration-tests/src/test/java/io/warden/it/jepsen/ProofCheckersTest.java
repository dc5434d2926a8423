package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The proof suite's checkers other than linearizability, on histories made by hand: each passes and each fails. */
class ProofCheckersTest {
    private static final long S = TimeUnit.SECONDS.toNanos(1);

    private static Op grant(int id, String key, long token, long call, long ret) {
        return new Op(id, "c" + id, key, Op.Kind.ACQUIRE, "s" + id, token, Op.Outcome.GRANTED, call, ret);
    }

    private static WatchRecorder.Seen event(long revision, String type, String name, Long token, long received) {
        return new WatchRecorder.Seen(revision, type, name, "s", token, received);
    }

    @Test
    void watch_everyGrantOnceInOrder_passes() {
        var rec = new WatchRecorder.Recording(0, 100 * S, List.of(
                event(10, "QUEUED", "a", 10L, 2 * S), event(10, "GRANTED", "a", 10L, 2 * S),
                event(12, "RELEASED", "a", 10L, 3 * S), event(15, "GRANTED", "b", 15L, 4 * S)));
        var r = WatchChecker.check(rec, List.of(grant(0, "a", 10, S, 2 * S), grant(1, "b", 15, 3 * S, 4 * S)));
        assertThat(r.problems()).isEmpty();
        assertThat(r.grantsChecked()).isEqualTo(2);
    }

    @Test
    void watch_aMissingGrant_aRepeat_andAStepBack_areEachFound() {
        var rec = new WatchRecorder.Recording(0, 100 * S, List.of(
                event(10, "GRANTED", "a", 10L, 2 * S), event(12, "RELEASED", "a", 10L, 3 * S),
                event(12, "RELEASED", "a", 10L, 3 * S), event(11, "QUEUED", "b", 11L, 4 * S)));
        var r = WatchChecker.check(rec, List.of(grant(0, "a", 10, S, 2 * S), grant(1, "b", 30, 50 * S, 51 * S)));
        assertThat(r.problems()).hasSize(3);
        assertThat(r.problems()).anyMatch(p -> p.startsWith("delivered twice"));
        assertThat(r.problems()).anyMatch(p -> p.startsWith("out of order"));
        assertThat(r.problems()).anyMatch(p -> p.startsWith("no GRANTED event") && p.contains(" b: "));
    }

    @Test
    void watch_aGrantInTheGapARESYNCCloses_isExcused_butNotOneAfterIt() {
        var rec = new WatchRecorder.Recording(0, 100 * S, List.of(
                event(10, "GRANTED", "a", 10L, 20 * S), event(40, "RESYNC", null, null, 40 * S)));
        var r = WatchChecker.check(rec, List.of(grant(0, "a", 10, 19 * S, 20 * S), grant(1, "a", 30, 30 * S, 31 * S),
                grant(2, "a", 50, 60 * S, 61 * S)));
        assertThat(r.excused()).isEqualTo(1);
        assertThat(r.problems()).singleElement().asString().contains("#2");
    }

    @Test
    void expiredEvent_beforeTheSessionCouldHaveExpired_isAnEarlyExpiry() {
        List<Op> history = List.of(new Op(0, "end", "*", Op.Kind.END, "s", 0, Op.Outcome.ENDED, 10 * S, 12 * S),
                new Op(1, "end", "*", Op.Kind.END, "t", 0, Op.Outcome.ENDED, 10 * S, 12 * S));
        var rec = new WatchRecorder.Recording(0, 100 * S, List.of(
                new WatchRecorder.Seen(5, "EXPIRED", "a", "s", 3L, 9 * S),
                new WatchRecorder.Seen(6, "EXPIRED", "a", "t", 4L, 11 * S)));
        assertThat(ProofRun.expiredEventsTooEarly(rec, history)).singleElement().asString().startsWith("session s:");
    }

    @Test
    void liveness_aClientSlowerThanTheBound_orNotGranted_isFound() {
        long bound = TimeUnit.MILLISECONDS.toNanos(ProofRun.LIVENESS_BOUND_MS);
        List<Op> history = List.of(
                new Op(0, MutexWorkload.LIVENESS + 0, "a", Op.Kind.ACQUIRE, "s0", 5, Op.Outcome.GRANTED, 0, S),
                new Op(1, MutexWorkload.LIVENESS + 1, "a", Op.Kind.ACQUIRE, "s1", 6, Op.Outcome.GRANTED, 0, bound + S),
                new Op(2, MutexWorkload.LIVENESS + 2, "b", Op.Kind.ACQUIRE, "s2", 0, Op.Outcome.NOT_GRANTED, 0, S),
                new Op(3, "w-1", "b", Op.Kind.ACQUIRE, "s3", 0, Op.Outcome.NOT_GRANTED, 0, S));
        assertThat(ProofRun.slowToAcquire(history)).hasSize(2)
                .anyMatch(l -> l.startsWith("liveness-1")).anyMatch(l -> l.startsWith("liveness-2"));
        assertThat(ProofRun.livenessClients(history)).isEqualTo(3);
    }

    private static Op rw(int id, String mode, long token, long call, long ret) {
        return new Op(id, "c" + id, "rw", Op.Kind.ACQUIRE, "s" + id, token, Op.Outcome.GRANTED, call, ret, mode);
    }

    private static Op released(int id, long token, long call, long ret) {
        return new Op(100 + id, "c" + id, "rw", Op.Kind.RELEASE, "s" + id, token, Op.Outcome.RELEASED, call, ret);
    }

    @Test
    void fifo_readersTogether_thenAWriter_thenAReader_passes() {
        List<Op> h = List.of(rw(0, "SHARED", 10, 0, S), rw(1, "SHARED", 11, 0, S), released(0, 10, 2 * S, 2 * S),
                released(1, 11, 2 * S, 2 * S), rw(2, "EXCLUSIVE", 12, S, 3 * S), released(2, 12, 4 * S, 4 * S),
                rw(3, "SHARED", 13, 2 * S, 5 * S), released(3, 13, 6 * S, 6 * S));
        FifoChecker.Result r = FifoChecker.check(h, "rw");
        assertThat(r.problems()).isEmpty();
        assertThat(r.overlappingReaders()).isEqualTo(1);
    }

    @Test
    void fifo_aReaderPastAQueuedWriter_isFound() {
        // the writer (token 12) is queued behind a reader; a later reader (13) is granted while the writer waits
        List<Op> h = List.of(rw(0, "SHARED", 10, 0, S), rw(2, "EXCLUSIVE", 12, S, 6 * S), rw(3, "SHARED", 13, 2 * S, 3 * S),
                released(0, 10, 4 * S, 4 * S), released(3, 13, 5 * S, 5 * S), released(2, 12, 7 * S, 7 * S));
        FifoChecker.Result r = FifoChecker.check(h, "rw");
        assertThat(r.problems()).singleElement().asString().contains("token 13 (SHARED)").contains("token 12 (EXCLUSIVE)");
    }

    @Test
    void fifo_aReaderGrantedWhileTheWriterQueuedAheadOfItStillHolds_isFound() {
        // ForcedInterleavings.HELD_WHILE_ANOTHER_ASKS on jepsen/rw: the writer (10) holds until the reader's call (11)
        // is answered; a grant of the reader before the writer's release was called is out of order
        List<Op> h = List.of(rw(0, "EXCLUSIVE", 10, 0, S), rw(1, "SHARED", 11, 2 * S, 2 * S + 1),
                released(1, 11, 3 * S, 3 * S), released(0, 10, 4 * S, 4 * S));
        FifoChecker.Result r = FifoChecker.check(h, "rw");
        assertThat(r.problems()).singleElement().asString().contains("token 11 (SHARED)").contains("token 10 (EXCLUSIVE)");
    }

    @Test
    void fencedRegister_aStalledHolderWritingAfterItsSuccessorsIncrement_isRefused_unlessTheyShareAToken() {
        // ForcedInterleavings.STALE_HOLDER_WRITES_LAST: the holder reads, its successor reads and increments, then
        // the holder writes its increment with its old token
        FencedRegister distinct = new FencedRegister();
        long stale = distinct.read(5);
        long successor = distinct.read(6);
        assertThat(distinct.writeAndAcknowledge(6, successor + 1)).isTrue();
        assertThat(distinct.writeAndAcknowledge(5, stale + 1)).as("the stalled holder's write").isFalse();
        assertThat(distinct.summary()).isEqualTo(new FencedRegister.Summary(1, 1, 0, 1));

        FencedRegister shared = new FencedRegister();
        stale = shared.read(7);
        successor = shared.read(7);
        assertThat(shared.writeAndAcknowledge(7, successor + 1)).isTrue();
        assertThat(shared.writeAndAcknowledge(7, stale + 1)).as("the stalled holder's write, by the same token").isTrue();
        assertThat(shared.summary()).as("two increments acknowledged, the value one: a lost update")
                .isEqualTo(new FencedRegister.Summary(1, 2, 0, 0));
        assertThat(shared.summary().ok()).isFalse();
    }

    @Test
    void fencedRegister_refusesStaleTokens_andShowsALostUpdateWhenTwoHoldersShareOne() {
        FencedRegister honest = new FencedRegister();
        long v = honest.read(5);
        assertThat(honest.read(6)).isEqualTo(v); // the successor reads: the fence is 6 now
        assertThat(honest.writeAndAcknowledge(5, v + 1)).as("the superseded holder's write").isFalse();
        assertThat(honest.writeAndAcknowledge(6, v + 1)).isTrue();
        assertThat(honest.summary().ok()).isTrue();
        assertThat(honest.summary().refusedWrites()).isEqualTo(1);

        FencedRegister shared = new FencedRegister();
        long a = shared.read(7);
        long b = shared.read(7);
        assertThat(shared.writeAndAcknowledge(7, a + 1)).isTrue();
        assertThat(shared.writeAndAcknowledge(7, b + 1)).isTrue();
        assertThat(shared.summary().ok()).as("two increments, one counted").isFalse();
    }
    private static ElectionWorkload.Seen seen(String election, String kind, long token, long t0, long t1) {
        return new ElectionWorkload.Seen(election, "s-" + election, kind, token, t0, t1);
    }

    /** A term of {@code election}: campaigned at {@code asked}, elected at {@code from}, sampled until {@code to}, defeated after. */
    private static List<ElectionWorkload.Seen> term(String election, long token, long asked, long from, long to) {
        return List.of(seen(election, "CAMPAIGN", 0, asked, asked), seen(election, "ELECTED", token, from, from),
                seen(election, "LEADING", token, from + 1, from + 2), seen(election, "LEADING", token, to - 2, to - 1),
                seen(election, "DEFEATED", token, to + S / 10, to + S / 10));
    }

    private static List<ElectionWorkload.Seen> concat(List<List<ElectionWorkload.Seen>> parts) {
        return parts.stream().flatMap(List::stream).toList();
    }

    @Test
    void election_leadersOneAfterAnother_withGrowingTokens_passes() {
        var r = ElectionChecker.check(concat(List.of(term("a", 10, 0, S, 3 * S), term("b", 12, S, 4 * S, 6 * S),
                term("a", 15, 4 * S, 7 * S, 9 * S))));
        assertThat(r.problems()).isEmpty();
        assertThat(r.terms()).isEqualTo(3);
        assertThat(r.spans()).isEqualTo(3);
    }

    @Test
    void election_twoTermsSurelyValidAtOnce_areTwoLeaders() {
        var r = ElectionChecker.check(concat(List.of(term("a", 10, 0, S, 5 * S), term("b", 12, S, 4 * S, 6 * S))));
        assertThat(r.problems()).singleElement().asString().startsWith("two leaders at once").contains("token 10 of a")
                .contains("token 12 of b");
    }

    @Test
    void election_samplesThatMerelyMayOverlap_areNoViolation() {
        // b's only sample ends after a's last one starts: they may have been valid one after the other
        var r = ElectionChecker.check(List.of(seen("a", "LEADING", 10, S, 3 * S), seen("b", "LEADING", 12, 2 * S, 4 * S)));
        assertThat(r.problems()).isEmpty();
    }

    @Test
    void election_aLaterTermWithoutALargerToken_isFound_byItsSpan_orByWhenItWasAskedFor() {
        var bySpan = ElectionChecker.check(concat(List.of(term("a", 10, 0, S, 3 * S), term("b", 10, S, 4 * S, 6 * S))));
        assertThat(bySpan.problems()).singleElement().asString().startsWith("token did not grow").contains("token 10 of b");
        // b never sampled, but asked for only after a's defeat was told
        var byAsk = ElectionChecker.check(concat(List.of(term("a", 10, 0, S, 3 * S), List.of(
                seen("b", "CAMPAIGN", 0, 4 * S, 4 * S), seen("b", "ELECTED", 9, 5 * S, 5 * S)))));
        assertThat(byAsk.problems()).singleElement().asString().startsWith("token did not grow").contains("token 9 of b");
    }

    @Test
    void election_aTermSampledValidAfterItsDefeat_orToldTwice_isFound() {
        var r = ElectionChecker.check(List.of(seen("a", "ELECTED", 10, S, S), seen("a", "DEFEATED", 10, 2 * S, 2 * S),
                seen("a", "LEADING", 10, 3 * S, 3 * S), seen("b", "ELECTED", 20, 5 * S, 5 * S),
                seen("b", "ELECTED", 20, 6 * S, 6 * S)));
        assertThat(r.problems()).anyMatch(p -> p.startsWith("led again after its defeat") && p.contains("token 10 of a"));
        assertThat(r.problems()).anyMatch(p -> p.startsWith("told 2 times elected") && p.contains("token 20 of b"));
    }

    // ------------------------------------------------------------------ multi-lock liveness

    private static MultiLockWorkload.Request multi(String id, long waitMs, long call, long ret, boolean answered,
                                                   String outcome) {
        return new MultiLockWorkload.Request("c", "s", id, List.of("a", "b"), waitMs, call, ret, answered, outcome);
    }

    @Test
    void multiLock_answeredWithinItsWaitPlusTheBound_passes_lateOrUnansweredIsFound_unlessNearAFault() {
        long bound = TimeUnit.MILLISECONDS.toNanos(MultiLockChecker.BOUND_MS);
        var fault = new Nemesis.Fault(Nemesis.Kind.KILL_GATEWAY, "gw1", 100 * S, 102 * S);
        var r = MultiLockChecker.check(List.of(
                multi("granted", 1000, 0, S / 2, true, "GRANTED"),
                multi("timed-out", 1000, 0, S + bound - S / 10, true, "TIMED_OUT"),
                multi("late", 1000, 10 * S, 11 * S + bound + S / 10, true, "TIMED_OUT"),
                multi("never", 0, 20 * S, 28 * S, false, "NO_ANSWER"),
                multi("near-a-fault", 0, 104 * S, 112 * S, false, "NO_ANSWER")), List.of(fault));
        assertThat(r.problems()).hasSize(2).anyMatch(p -> p.contains("request late ") && p.contains("only after"))
                .anyMatch(p -> p.contains("request never ") && p.contains("not answered"));
        assertThat(r.granted()).isEqualTo(1);
        assertThat(r.excused()).isEqualTo(1);
    }

    @Test
    void multiLock_aRequestNotGranted_mayHaveHeldANameWithinItsCall_soATryRefusedThenIsNoViolation() {
        // m's request for [x, y] timed out at 2 s; meanwhile its entry held x (it waited for y), so t's try of x was
        // refused, rightly; t is granted x after.
        List<Op> recorded = List.of(
                op(0, "m", "x", Op.Kind.ACQUIRE, 0, Op.Outcome.UNKNOWN, 0, 2 * S),
                op(1, "m", "x", Op.Kind.RELEASE, 0, Op.Outcome.UNKNOWN, 0, 2 * S),
                op(2, "t", "x", Op.Kind.ACQUIRE, 0, Op.Outcome.REFUSED, S / 2, S),
                op(3, "t", "x", Op.Kind.ACQUIRE, 7, Op.Outcome.GRANTED, 3 * S, 3 * S + 1));
        assertThat(Linearizability.checkPerKey(new FencedMutex(), recorded, 10_000)).allMatch(Linearizability.Result::ok);
        // Recorded as a plain NOT_GRANTED instead, nobody held x when the try was refused.
        List<Op> plain = List.of(op(0, "m", "x", Op.Kind.ACQUIRE, 0, Op.Outcome.NOT_GRANTED, 0, 2 * S),
                recorded.get(2), recorded.get(3));
        assertThat(Linearizability.checkPerKey(new FencedMutex(), plain, 10_000)).noneMatch(Linearizability.Result::ok);
    }

    // ------------------------------------------------------------------ deadlocks

    private static Op op(int id, String session, String key, Op.Kind kind, long token, Op.Outcome outcome, long call,
                         long ret) {
        return new Op(id, "p-" + session, key, kind, session, token, outcome, call, ret);
    }

    /**
     * Two sessions in crossed orders: {@code a} holds x and asks for y (WAIT), {@code b} holds y and asks for x with
     * {@code bOnDeadlock}; {@code b}'s second request is answered {@code bAnswer} at {@code bRet}, after which it lets go
     * of y ({@code bRelease}), and {@code a} is granted y then (or times out with it, at 9 s, when b was not failed).
     */
    private static List<Op> crossed(Op.Outcome bAnswer, long bRet, Op.Outcome bRelease) {
        boolean broken = bAnswer == Op.Outcome.DEADLOCK;
        return List.of(
                op(0, "a", "x", Op.Kind.ACQUIRE, 10, Op.Outcome.GRANTED, 0, S / 10),
                op(1, "b", "y", Op.Kind.ACQUIRE, 11, Op.Outcome.GRANTED, 0, S / 10),
                op(2, "a", "y", Op.Kind.ACQUIRE, broken ? 13 : 0, broken ? Op.Outcome.GRANTED : Op.Outcome.NOT_GRANTED,
                        S, broken ? bRet + S / 2 : 9 * S),
                op(3, "b", "x", Op.Kind.ACQUIRE, 0, bAnswer, S, bRet),
                op(4, "b", "y", Op.Kind.RELEASE, 11, bRelease, bRet + S / 10, bRet + S / 5),
                op(5, "a", "x", Op.Kind.RELEASE, 10, Op.Outcome.RELEASED, 10 * S, 10 * S + 1));
    }

    private static final List<DeadlockWorkload.CycleMember> CROSSED_CYCLE = List.of(
            new DeadlockWorkload.CycleMember("a", "y", List.of("b")), new DeadlockWorkload.CycleMember("b", "x", List.of("a")));

    private static DeadlockWorkload.Group crossedGroup(String bOnDeadlock, List<DeadlockWorkload.CycleMember> bCycle) {
        return new DeadlockWorkload.Group("g", List.of(
                new DeadlockWorkload.Member("p-a", "a", "x", "y", "WAIT", 0, 2, null),
                new DeadlockWorkload.Member("p-b", "b", "y", "x", bOnDeadlock, 1, 3, bCycle)));
    }

    @Test
    void deadlock_aFailMemberFailedOnce_inACycleThatExisted_passes() {
        var r = DeadlockChecker.check(List.of(crossedGroup("FAIL", CROSSED_CYCLE)),
                crossed(Op.Outcome.DEADLOCK, S + S / 2, Op.Outcome.RELEASED), List.of());
        assertThat(r.problems()).isEmpty();
        assertThat(r.formed()).isEqualTo(1);
        assertThat(r.victims()).isEqualTo(1);
    }

    @Test
    void deadlock_aCycleWithAFailMemberNotBroken_isFound_unlessAFaultWasNear() {
        List<Op> history = crossed(Op.Outcome.NOT_GRANTED, 9 * S, Op.Outcome.RELEASED);
        var r = DeadlockChecker.check(List.of(crossedGroup("FAIL", null)), history, List.of());
        assertThat(r.problems()).anyMatch(p -> p.startsWith("group g: a cycle with a FAIL member was not broken within"))
                .anyMatch(p -> p.startsWith("group g: a cycle with a FAIL member had 0 victims"));
        // A partition of a gateway from 0.5 s to 6 s: the bound counts from its end plus its recovery (broken by 16 s).
        var fault = new Nemesis.Fault(Nemesis.Kind.PARTITION_GATEWAY_FROM_ZK, "gw1", S / 2, 6 * S);
        assertThat(DeadlockChecker.check(List.of(crossedGroup("FAIL", null)), history, List.of(fault)).problems()).isEmpty();
    }

    @Test
    void deadlock_aWaitRequestFailed_isFound_andACycleOfWaitsBroken() {
        var r = DeadlockChecker.check(List.of(crossedGroup("WAIT", CROSSED_CYCLE)),
                crossed(Op.Outcome.DEADLOCK, S + S / 2, Op.Outcome.RELEASED), List.of());
        assertThat(r.problems()).hasSize(2).anyMatch(p -> p.contains("said on_deadlock WAIT and was answered DEADLOCK"))
                .anyMatch(p -> p.startsWith("group g: a cycle of WAIT requests was broken"));
    }

    @Test
    void deadlock_aVictimWhoseHoldWentWithIt_isFound() {
        var r = DeadlockChecker.check(List.of(crossedGroup("FAIL", CROSSED_CYCLE)),
                crossed(Op.Outcome.DEADLOCK, S + S / 2, Op.Outcome.NOT_RELEASED), List.of());
        assertThat(r.problems()).singleElement().asString().contains("'s hold of y (token 11) was gone");
    }

    @Test
    void deadlock_aVictimOfACycleThatDidNotExistDuringItsCall_isFound() {
        // b's reported cycle says a waited for y while b held it; but a asked for y only after b's answer.
        List<Op> history = List.of(
                op(0, "a", "x", Op.Kind.ACQUIRE, 10, Op.Outcome.GRANTED, 0, S / 10),
                op(1, "b", "y", Op.Kind.ACQUIRE, 11, Op.Outcome.GRANTED, 0, S / 10),
                op(3, "b", "x", Op.Kind.ACQUIRE, 0, Op.Outcome.DEADLOCK, S, 2 * S),
                op(2, "a", "y", Op.Kind.ACQUIRE, 0, Op.Outcome.NOT_GRANTED, 3 * S, 4 * S),
                op(4, "b", "y", Op.Kind.RELEASE, 11, Op.Outcome.RELEASED, 5 * S, 5 * S + 1));
        var r = DeadlockChecker.check(List.of(crossedGroup("FAIL", CROSSED_CYCLE)), history, List.of());
        assertThat(r.problems()).anyMatch(p -> p.contains("for a cycle that did not exist during its call"));
    }
}
