package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.it.jepsen.Op.Kind;
import io.warden.it.jepsen.Op.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The checker itself: it accepts what a fenced mutex may do, and it finds each way of breaking one — two
 * holders, a token that does not grow, a release that says false while it names the grant, an expiry before the TTL
 * ran out — also among thousands of concurrent operations, and histories with answers that never came.
 */
class LinearizabilityTest {
    private static final FencedMutex MUTEX = new FencedMutex();
    private final List<Op> ops = new ArrayList<>();

    private Op add(String key, Kind kind, String session, long token, Outcome outcome, long call, long ret) {
        Op op = new Op(ops.size(), session, key, kind, session, token, outcome, call, ret);
        ops.add(op);
        return op;
    }

    private Op grant(String session, long token, long call, long ret) {
        return add("ns/a", Kind.ACQUIRE, session, token, Outcome.GRANTED, call, ret);
    }

    private Op release(String session, long token, boolean released, long call, long ret) {
        return add("ns/a", Kind.RELEASE, session, token, released ? Outcome.RELEASED : Outcome.NOT_RELEASED, call, ret);
    }

    private Op end(String session, long earliest, long observed) {
        return add("ns/a", Kind.END, session, 0, Outcome.ENDED, earliest, observed);
    }

    private Linearizability.Result check() {
        List<Linearizability.Result> results = Linearizability.checkPerKey(MUTEX, ops, 1_000_000);
        assertThat(results).hasSize(1);
        return results.get(0);
    }

    @Test
    void sequentialGrantsAndReleases_withGrowingTokens_areLinearizable() {
        grant("A", 10, 0, 1);
        release("A", 10, true, 2, 3);
        grant("B", 20, 4, 5);
        release("A", 10, false, 6, 7); // stale: a no-op
        release("B", 20, true, 8, 9);
        assertThat(check().verdict()).isEqualTo(Linearizability.Verdict.LINEARIZABLE);
    }

    @Test
    void aGrantWhoseCallOverlapsTheRelease_isLinearizable() {
        grant("A", 10, 0, 10);
        grant("B", 20, 1, 20); // B was waiting; granted once A released
        release("A", 10, true, 11, 12);
        assertThat(check().ok()).isTrue();
    }

    @Test
    void twoHolders_areAViolation_namingTheOperations() {
        Op a = grant("A", 10, 0, 1);
        Op b = grant("B", 20, 2, 3);
        release("A", 10, true, 4, 5);
        Linearizability.Result r = check();
        assertThat(r.verdict()).isEqualTo(Linearizability.Verdict.VIOLATION);
        assertThat(r.deepest()).contains(a);
        assertThat(r.stuck()).contains(b);
        assertThat(r.toString()).contains("acquire by B -> GRANTED 20");
    }

    private Op refused(String session, long call, long ret) {
        return add("ns/a", Kind.ACQUIRE, session, 0, Outcome.REFUSED, call, ret);
    }

    @Test
    void aTryRefused_whileAnotherHolds_orAcrossTheRelease_isLinearizable() {
        grant("A", 10, 0, 1);
        refused("B", 2, 3);
        refused("B", 4, 7); // overlaps the release: it may have read the lock just before
        release("A", 10, true, 5, 6);
        grant("B", 20, 8, 9);
        assertThat(check().ok()).isTrue();
    }

    @Test
    void aTryRefused_afterTheReleaseWasAcknowledged_withNobodyElseAbout_isAViolation() {
        grant("A", 10, 0, 1);
        release("A", 10, true, 2, 3);
        Op late = refused("B", 4, 5);
        Linearizability.Result r = check();
        assertThat(r.verdict()).isEqualTo(Linearizability.Verdict.VIOLATION);
        assertThat(r.stuck()).contains(late);
        assertThat(r.toString()).contains("acquire by B -> REFUSED");
    }

    @Test
    void aTryRefused_whileAnUnansweredAcquireMayHold_isLinearizable() {
        add("ns/a", Kind.ACQUIRE, "C", 0, Outcome.UNKNOWN, 0, Op.NEVER);
        refused("B", 4, 5);
        assertThat(check().ok()).isTrue();
    }

    @Test
    void aTokenThatDoesNotGrow_isAViolation() {
        grant("A", 20, 0, 1);
        release("A", 20, true, 2, 3);
        grant("B", 10, 4, 5);
        assertThat(check().verdict()).isEqualTo(Linearizability.Verdict.VIOLATION);
    }

    @Test
    void releasedFalse_whileItNamesTheGrant_isAViolation() {
        grant("A", 10, 0, 1);
        release("A", 10, false, 2, 3);
        assertThat(check().verdict()).isEqualTo(Linearizability.Verdict.VIOLATION);
    }

    @Test
    void anotherGrant_beforeTheHoldersSessionCouldExpire_isAViolation_afterItIsNot() {
        grant("A", 10, 0, 1);
        end("A", 100, 200); // A's last acknowledged keepalive + TTL = 100; the expiry was seen at 200
        grant("B", 20, 50, 60);
        assertThat(check().verdict()).as("B granted before A's TTL ran out").isEqualTo(Linearizability.Verdict.VIOLATION);

        ops.clear();
        grant("A", 10, 0, 1);
        end("A", 100, 200);
        grant("B", 20, 50, 160); // returned after 100: the expiry may come first
        assertThat(check().ok()).isTrue();
    }

    @Test
    void anAcquireWhoseAnswerNeverCame_mayHaveTakenEffectOrNot() {
        add("ns/a", Kind.ACQUIRE, "A", 0, Outcome.UNKNOWN, 0, Op.NEVER);
        grant("B", 20, 5, 6); // so A's was not granted before 6 ...
        release("B", 20, true, 7, 8);
        grant("C", 30, 9, 10);
        assertThat(check().ok()).isTrue();

        // ... but a release by A that says true means A held: then B's grant cannot overlap it
        ops.clear();
        add("ns/a", Kind.ACQUIRE, "A", 0, Outcome.UNKNOWN, 0, Op.NEVER);
        grant("B", 20, 5, 6);
        release("A", 15, true, 7, 8);
        release("B", 20, true, 9, 10);
        assertThat(check().verdict()).isEqualTo(Linearizability.Verdict.VIOLATION);
    }

    @Test
    void keysAreCheckedApart() {
        add("ns/a", Kind.ACQUIRE, "A", 10, Outcome.GRANTED, 0, 1);
        add("ns/b", Kind.ACQUIRE, "B", 11, Outcome.GRANTED, 0, 1);
        add("ns/b", Kind.RELEASE, "B", 11, Outcome.RELEASED, 2, 3);
        add("ns/a", Kind.ACQUIRE, "C", 12, Outcome.GRANTED, 2, 3); // A still holds ns/a
        List<Linearizability.Result> results = Linearizability.checkPerKey(MUTEX, ops, 1_000_000);
        assertThat(results).extracting(Linearizability.Result::key, Linearizability.Result::verdict).containsExactly(
                org.assertj.core.groups.Tuple.tuple("ns/a", Linearizability.Verdict.VIOLATION),
                org.assertj.core.groups.Tuple.tuple("ns/b", Linearizability.Verdict.LINEARIZABLE));
    }

    /**
     * Histories of a simulated correct service (8 clients on one name, each operation's effect at a random moment
     * inside its interval, intervals overlapping, some answers lost) pass; the same service with one fault — a grant
     * that skips the exclusivity check now and then — is caught, in every seed.
     */
    @Test
    void simulatedHistories_correctOnesPass_andABrokenServiceIsCaught() {
        for (long seed = 1; seed <= 20; seed++) {
            assertThat(Linearizability.checkPerKey(MUTEX, simulate(seed, 0.0), 5_000_000))
                    .as("seed %d, correct service", seed).allSatisfy(r -> assertThat(r.ok()).as(r.toString()).isTrue());
            assertThat(Linearizability.checkPerKey(MUTEX, simulate(seed, 0.05), 5_000_000))
                    .as("seed %d, broken service", seed)
                    .anySatisfy(r -> assertThat(r.verdict()).isEqualTo(Linearizability.Verdict.VIOLATION));
        }
    }

    @Test
    void aSearchPastItsBudget_isUnknown_neverAPass() {
        for (int i = 0; i < 12; i++) {
            add("ns/a", Kind.ACQUIRE, "S" + i, 0, Outcome.UNKNOWN, i, Op.NEVER);
        }
        grant("X", 100, 20, 21);
        release("X", 100, false, 22, 23); // X holds: false cannot be; every order of the unknowns is tried
        Linearizability.Result past = Linearizability.checkPerKey(MUTEX, ops, 1_000).get(0);
        assertThat(past.verdict()).isEqualTo(Linearizability.Verdict.UNKNOWN);
        assertThat(past.toString()).as("where the search was stuck, named").contains("none of these was found to come next")
                .contains("release 100 by X");
        assertThat(Linearizability.checkPerKey(MUTEX, ops, 10_000_000).get(0).verdict()).isEqualTo(Linearizability.Verdict.VIOLATION);
    }

    @Test
    void aHistoryWrittenToDisk_readsBackTheSame(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        grant("A", 10, 0, 1);
        add("ns/a", Kind.ACQUIRE, "B", 0, Outcome.UNKNOWN, 2, Op.NEVER);
        end("A", 100, 200);
        java.nio.file.Path file = dir.resolve("history.jsonl");
        History.write(file, ops);
        assertThat(History.read(file)).isEqualTo(ops);
    }

    /**
     * A lock service simulated in discrete time: each step one client starts an operation whose effect happens at a
     * random later moment (its linearization point), answered a little after it. With {@code brokenRate} > 0 a grant
     * sometimes happens while the lock is held.
     */
    private static List<Op> simulate(long seed, double brokenRate) {
        Random rnd = new Random(seed);
        int clients = 8;
        long[] busyUntil = new long[clients];
        long[] held = new long[clients]; // token held by client i, or 0
        String holder = null;
        long token = 0;
        long time = 0;
        List<Op> out = new ArrayList<>();
        boolean broke = false;
        for (int n = 0; n < 400 || (brokenRate > 0 && !broke && n < 4000); n++) {
            time += 1 + rnd.nextInt(3);
            int c = rnd.nextInt(clients);
            if (busyUntil[c] > time) {
                continue;
            }
            String session = "s" + c;
            long call = time;
            long point = call + rnd.nextInt(5);
            long ret = point + rnd.nextInt(5);
            boolean lost = rnd.nextInt(50) == 0;
            // the effect is applied at `point`; with a discrete loop we apply it now and keep others from acting
            // between call and ret by only letting this client's interval overlap others' (their points differ)
            if (held[c] != 0) {
                boolean released = holder != null && holder.equals(session);
                if (released) {
                    holder = null;
                }
                out.add(new Op(out.size(), session, "ns/a", Kind.RELEASE, session, held[c],
                        lost ? Outcome.UNKNOWN : released ? Outcome.RELEASED : Outcome.NOT_RELEASED, call, lost ? Op.NEVER : ret));
                held[c] = 0;
            } else {
                boolean free = holder == null;
                boolean skip = !free && rnd.nextDouble() < brokenRate;
                if (free || skip) {
                    broke |= skip;
                    token += 1 + rnd.nextInt(3);
                    holder = session;
                    held[c] = token;
                    out.add(new Op(out.size(), session, "ns/a", Kind.ACQUIRE, session, lost ? 0 : token,
                            lost ? Outcome.UNKNOWN : Outcome.GRANTED, call, lost ? Op.NEVER : ret));
                    if (lost) {
                        held[c] = token; // the client does not know, but it holds; it releases by its token later
                    }
                } else {
                    out.add(new Op(out.size(), session, "ns/a", Kind.ACQUIRE, session, 0, Outcome.NOT_GRANTED, call, ret));
                }
            }
            // the next operation's effect must come after this one's: time moves past this point
            time = Math.max(time, point);
            busyUntil[c] = ret + 1;
        }
        return out;
    }
}
