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
}
