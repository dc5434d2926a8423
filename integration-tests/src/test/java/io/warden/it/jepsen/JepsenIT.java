package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.it.jepsen.ForcedInterleavings.Scenario;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The proof suite's short form, run by {@code mvn verify}: a fixed seed and a random one (printed, and in
 * the report: {@code -Djepsen.seed=N} runs it again), every nemesis, against the gateways as built; then each checker
 * shown failing against gateways with a deliberate bug ({@link BrokenGateway}). Reports in
 * {@code integration-tests/target/it-logs/jepsen-*}/report.md.
 *
 * <p>Each deliberate bug is shown by construction, not by luck: before its random part the workload drives the
 * interleaving that bug needs ({@link ForcedInterleavings}), and the test asserts the violation on that interleaving's
 * own lock or client. The runs against correct gateways drive every one of those interleavings too, and must stay clean.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class JepsenIT {
    private static final long TTL_MS = 3000;

    private static ProofRun.Plan plan(String run, long seed, int seconds, List<Nemesis.Kind> nemeses, String fault,
                                      List<Scenario> forced) {
        return new ProofRun.Plan(run, seed, Duration.ofSeconds(seconds), nemeses, fault, TTL_MS, 6, 3, forced);
    }

    private static void assertClean(ProofRun.Outcome o) {
        assertThat(o.forced()).as("forced interleavings; report %s", o.report())
                .hasSize(Scenario.values().length).allMatch(ForcedInterleavings.Result::driven);
        assertThat(o.violations()).as("mutex violations; report %s", o.report()).isEmpty();
        assertThat(o.mutex()).as("locks checked").isNotEmpty();
        assertThat(o.semaphoreViolations()).as("semaphore violations; report %s", o.report()).isEmpty();
        assertThat(o.history().stream().filter(op -> ProofRun.SEMAPHORES.contains(op.key())
                && op.outcome() == Op.Outcome.GRANTED).count()).as("semaphore grants in the run").isGreaterThan(10);
        assertThat(o.earlyExpiries()).as("early expiries; report %s", o.report()).isEmpty();
        assertThat(o.lostUpdates()).as("fenced counters off; report %s", o.report()).isEmpty();
        assertThat(o.counters()).as("fenced counters").isNotEmpty();
        assertThat(o.slowToAcquire()).as("liveness; report %s", o.report()).isEmpty();
        assertThat(ProofRun.livenessClients(o.history()))
                .as("clients in the liveness round and its two multi-locks, the forced waiter, and the two forced multi-locks"
                        + " (one acquire per name)")
                .isEqualTo(6 + 2 * 2 + 1 + 2 * 2);
        assertThat(o.watch().problems()).as("watch; report %s", o.report()).isEmpty();
        assertThat(o.fifo().problems()).as("FIFO; report %s", o.report()).isEmpty();
        assertThat(o.fifo().grants()).as("grants of the readers-and-writers lock").isGreaterThan(10);
        assertThat(o.watch().grantsChecked()).as("grants the watch was checked against").isGreaterThan(20);
        assertThat(o.history().stream().filter(op -> op.outcome() == Op.Outcome.GRANTED).count())
                .as("grants in the run").isGreaterThan(20);
        assertThat(o.history().stream().filter(op -> op.outcome() == Op.Outcome.REFUSED).count())
                .as("try-locks refused in the run, each checked against a holder").isGreaterThan(5);
        assertThat(o.pileProblems()).as("large lock; report %s", o.report()).isEmpty();
        assertThat(o.piles()).as("piles on one lock (the first fault of the run)").isGreaterThanOrEqualTo(1);
        assertThat(o.election().problems()).as("election; report %s", o.report()).isEmpty();
        assertThat(o.election().spans()).as("terms of the election sampled valid").isGreaterThan(5);
        assertThat(o.multi().problems()).as("multi-lock liveness; report %s", o.report()).isEmpty();
        assertThat(o.multi().requests()).as("multi-lock requests in the run").isGreaterThan(10);
        assertThat(o.multi().granted()).as("multi-lock requests granted (the liveness round's two at least)")
                .isGreaterThanOrEqualTo(2);
        assertThat(o.deadlocks().problems()).as("deadlocks; report %s", o.report()).isEmpty();
        assertThat(o.deadlocks().victims()).as("deadlock victims (the forced one's included)").isGreaterThanOrEqualTo(1);
        assertThat(o.deadlocks().waitOnlyCycles()).as("cycles of WAIT requests left alone").isGreaterThanOrEqualTo(1);
    }

    /** The forced interleaving ran every step (its result says what happened), so the violation asserted is its own. */
    private static void assertDriven(ProofRun.Outcome o, Scenario scenario) {
        assertThat(o.forced(scenario).driven()).as("%s driven: %s; report %s", scenario, o.forced(scenario).detail(),
                o.report()).isTrue();
    }

    @Test
    void fixedSeed_everyNemesis_noViolation() throws Exception {
        assertClean(ProofRun.run(plan("jepsen-fixed", 42, 50, ProofRun.every(), null, Scenario.every())));
    }

    @Test
    void randomSeed_everyNemesis_noViolation() throws Exception {
        long seed = Long.getLong("jepsen.seed", System.nanoTime() & 0xffffffffL);
        System.out.println("JepsenIT random seed: " + seed + " (again: -Djepsen.seed=" + seed + ")");
        assertClean(ProofRun.run(plan("jepsen-random", seed, 50, ProofRun.every(), null, Scenario.every())));
    }

    /**
     * The mutex and FIFO checkers, shown failing: gateways that grant without the exclusivity check. A client holds
     * {@link ForcedInterleavings#MUTEX_LOCK} until a second client's acquire of it is answered (granted at once, so
     * both hold it), and the same on the readers-and-writers lock with a reader queued behind a writer. And the election
     * checker: a candidate leads {@link ForcedInterleavings#ELECTION_LOCK}, a second campaigns and is elected at once;
     * the first is sampled valid after that, then the second: two leaders at once.
     */
    @Test
    void grantWithoutCheck_isCaughtByTheMutexFifoAndElectionCheckers() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-grant", 7, 10, List.of(), "GRANT_WITHOUT_CHECK",
                List.of(Scenario.HELD_WHILE_ANOTHER_ASKS, Scenario.CANDIDATE_ASKS_WHILE_ANOTHER_LEADS)));
        assertDriven(o, Scenario.HELD_WHILE_ANOTHER_ASKS);
        assertDriven(o, Scenario.CANDIDATE_ASKS_WHILE_ANOTHER_LEADS);
        assertThat(o.election().problems()).as("report %s", o.report())
                .anyMatch(p -> p.startsWith("two leaders at once") && p.contains(ForcedInterleavings.ELECTION_FIRST)
                        && p.contains(ForcedInterleavings.ELECTION_SECOND));
        assertThat(o.violations()).as("report %s", o.report())
                .anyMatch(r -> r.key().equals(ForcedInterleavings.MUTEX_LOCK));
        assertThat(o.fifo().problems()).as("report %s", o.report())
                .anyMatch(p -> p.contains("(" + ForcedInterleavings.FIFO_SECOND + ")"));
    }

    /**
     * The fenced counter's checker, shown failing: gateways whose tokens are the lock node's (one token for holder
     * after holder). A holder of {@link ForcedInterleavings#FENCE_LOCK} stalls until its session expired and its
     * successor (queued all along) was granted and wrote; then it writes with the token its successor also holds, and
     * the register cannot refuse it: one increment is lost. And the election checker: a second candidate queued behind
     * the leader of {@link ForcedInterleavings#ELECTION_LOCK} is elected after the leader resigned, with the same token.
     */
    /**
     * The semaphore checker, shown failing: gateways that let a semaphore entry hold one place past its permits. Two
     * clients hold {@link ForcedInterleavings#SEM_LOCK} (two permits) until a third client's acquire of it is answered
     * (granted at once, so three hold it).
     */
    @Test
    void semaphoreOneMore_isCaughtByTheSemaphoreChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-semaphore", 7, 10, List.of(), "SEMAPHORE_ONE_MORE",
                List.of(Scenario.SEMAPHORE_FULL_WHILE_ANOTHER_ASKS)));
        assertDriven(o, Scenario.SEMAPHORE_FULL_WHILE_ANOTHER_ASKS);
        assertThat(o.semaphoreViolations()).as("report %s", o.report())
                .anyMatch(r -> r.key().equals(ForcedInterleavings.SEM_LOCK));
    }

    @Test
    void tokenOfLock_isCaughtByTheFencedCounterAndElectionCheckers() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-token", 7, 10, List.of(), "TOKEN_OF_LOCK",
                List.of(Scenario.STALE_HOLDER_WRITES_LAST, Scenario.CANDIDATE_ASKS_WHILE_ANOTHER_LEADS)));
        assertDriven(o, Scenario.STALE_HOLDER_WRITES_LAST);
        assertDriven(o, Scenario.CANDIDATE_ASKS_WHILE_ANOTHER_LEADS);
        assertThat(o.election().problems()).as("report %s", o.report())
                .anyMatch(p -> p.startsWith("token did not grow") && p.contains(ForcedInterleavings.ELECTION_FIRST)
                        && p.contains(ForcedInterleavings.ELECTION_SECOND));
        assertThat(o.lostUpdates()).as("report %s", o.report()).containsKey(ForcedInterleavings.FENCE_LOCK);
        FencedRegister.Summary fence = o.lostUpdates().get(ForcedInterleavings.FENCE_LOCK);
        assertThat(fence.acknowledged()).as("two increments acknowledged, one counted").isEqualTo(fence.value() + 1);
    }

    /**
     * The election checker, shown failing on a broken election instead of broken gateways: the SDK's election built
     * so that a term lasts until its hold is released or known lost, whatever the session's local deadline says. The
     * leader of {@link ForcedInterleavings#CUT_OFF_LOCK} is cut off from every gateway, so it never hears of its loss;
     * its session expires, the second candidate is elected, and the cut-off leader still leads when sampled after that.
     */
    @Test
    void leadershipOutlivingItsHold_isCaughtByTheElectionChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(new ProofRun.Plan("jepsen-fault-election", 7, Duration.ofSeconds(5), List.of(),
                null, TTL_MS, 6, 3, List.of(Scenario.LEADER_CUT_OFF_PAST_ITS_TTL), "OUTLIVES_ITS_HOLD"));
        assertDriven(o, Scenario.LEADER_CUT_OFF_PAST_ITS_TTL);
        assertThat(o.election().problems()).as("report %s", o.report())
                .anyMatch(p -> p.startsWith("two leaders at once") && p.contains(ForcedInterleavings.CUT_OFF_LEADER)
                        && p.contains(ForcedInterleavings.CUT_OFF_SUCCESSOR));
    }

    /**
     * The liveness checker, shown failing: gateways that do not wake a queued call when the node it waits for goes. A
     * waiter seen queued behind a holder that then releases is granted only when its wait (past the bound) runs out.
     */
    @Test
    void waitersNeverWoken_isCaughtByTheLivenessChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-liveness", 7, 5, List.of(), "WAITERS_NEVER_WOKEN",
                List.of(Scenario.WAITER_BEHIND_A_RELEASE)));
        assertDriven(o, Scenario.WAITER_BEHIND_A_RELEASE);
        assertThat(o.slowToAcquire()).as("report %s", o.report())
                .anyMatch(line -> line.startsWith(ForcedInterleavings.LIVENESS_WAITER + " on " + ForcedInterleavings.LIVENESS_LOCK));
    }

    /**
     * The liveness checker, shown failing on multi-lock requests: gateways that make a multi-lock request's entries one
     * transaction per name, in the order given, instead of one transaction. Two requests for
     * {@link ForcedInterleavings#MULTI_X} and {@link ForcedInterleavings#MULTI_Y} in crossed orders, both queued behind a
     * holder of both, are in crossed orders on the two names: once the holder releases, each holds one and waits for the
     * other until its wait (past the bound) runs out. (On correct gateways, which drive the same interleaving in the runs
     * above, both are granted in turn.)
     */
    @Test
    void multiOneNameAtATime_isCaughtByTheLivenessChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-multi", 7, 5, List.of(), "MULTI_ONE_NAME_AT_A_TIME",
                List.of(Scenario.CROSSED_MULTI_LOCKS_BEHIND_A_HOLDER)));
        assertDriven(o, Scenario.CROSSED_MULTI_LOCKS_BEHIND_A_HOLDER);
        assertThat(o.forced(Scenario.CROSSED_MULTI_LOCKS_BEHIND_A_HOLDER).detail()).as("report %s", o.report())
                .contains("x [first, second], y [second, first]");
        assertThat(o.slowToAcquire()).as("report %s", o.report())
                .anyMatch(line -> line.startsWith(ForcedInterleavings.MULTI_FIRST + " on "))
                .anyMatch(line -> line.startsWith(ForcedInterleavings.MULTI_SECOND + " on "));
    }

    /**
     * The mutex checker, shown failing on multi-lock requests: gateways that grant a multi-lock request once its first
     * name holds. A client holds {@link ForcedInterleavings#MULTI_HELD}; another asks for
     * {@link ForcedInterleavings#MULTI_FREE} and it at once, and is granted both while the first still holds it: two
     * holders. (The random part's multi-lock requests meet held names too, but the test asserts only the forced one.)
     */
    @Test
    void multiFirstNameOnly_isCaughtByTheMutexChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-multi-first", 7, 5, List.of(), "MULTI_FIRST_NAME_ONLY",
                List.of(Scenario.MULTI_GRANTED_WHILE_A_NAME_IS_HELD)));
        assertDriven(o, Scenario.MULTI_GRANTED_WHILE_A_NAME_IS_HELD);
        assertThat(o.forced(Scenario.MULTI_GRANTED_WHILE_A_NAME_IS_HELD).detail()).as("report %s", o.report())
                .endsWith(": GRANTED");
        assertThat(o.violations()).as("report %s", o.report())
                .anyMatch(r -> r.key().equals(ForcedInterleavings.MULTI_HELD));
    }

    /**
     * The deadlock checker, shown failing: gateways that find deadlocks but never break one. Two clients on different
     * gateways hold a lock each and ask for the other's, one with {@code on_deadlock: FAIL}: nobody is answered
     * DEADLOCK, and both wait until their waits run out, past the checker's bound.
     */
    @Test
    void deadlocksNeverBroken_isCaughtByTheDeadlockChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-deadlock", 7, 5, List.of(), "DEADLOCKS_NEVER_BROKEN",
                List.of(Scenario.CROSSED_HOLDERS_ONE_FAILS)));
        assertDriven(o, Scenario.CROSSED_HOLDERS_ONE_FAILS);
        assertThat(o.deadlocks().problems()).as("report %s", o.report())
                .anyMatch(p -> p.startsWith("group " + ForcedInterleavings.DEADLOCK_FAIL_GROUP + ": a cycle with a FAIL "
                        + "member was not broken within"))
                .noneMatch(p -> p.startsWith("group " + ForcedInterleavings.DEADLOCK_WAIT_GROUP));
    }

    /**
     * The watch checker, shown failing: gateways that answer a resumed watch from now on instead of from its revision.
     * The watcher's stream is cut while a lock is granted and released (every gateway has sent both), then resumed:
     * that grant never comes. Lost replies on the client links follow in the random part, as before.
     */
    @Test
    void resumeFromNow_isCaughtByTheWatchChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-watch", 7, 15, List.of(Nemesis.Kind.LOST_REPLIES),
                "RESUME_FROM_NOW", List.of(Scenario.WATCH_CUT_WHILE_GRANTED)));
        assertDriven(o, Scenario.WATCH_CUT_WHILE_GRANTED);
        assertThat(o.watch().problems()).as("report %s", o.report())
                .anyMatch(p -> p.startsWith("no GRANTED event") && p.contains("(" + ForcedInterleavings.WATCH_DURING_CUT + ")"));
    }

    /**
     * The mutex checker's rule for try-locks, shown failing: gateways that refuse every try-lock they read first, free
     * locks too. A try on {@link ForcedInterleavings#TRY_LOCK} refused while it was held (its gateway has seen it busy),
     * then, after the holder's release was acknowledged, refused again: nobody held it.
     */
    @Test
    void refuseFreeTries_isCaughtByTheMutexChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-try", 7, 5, List.of(), "REFUSE_FREE_TRIES",
                List.of(Scenario.TRY_AFTER_A_RELEASE)));
        assertDriven(o, Scenario.TRY_AFTER_A_RELEASE);
        assertThat(o.violations()).as("report %s", o.report())
                .anyMatch(r -> r.key().equals(ForcedInterleavings.TRY_LOCK));
    }

    /**
     * The expiry checker, shown failing: gateways that expire a session at half its TTL. A client holding a lock sends
     * no keepalive for three quarters of its TTL (a correct gateway keeps its session) and is seen gone early; the
     * workload's JVM is paused for three quarters of the TTL now and then in the random part, as before.
     */
    @Test
    void expireAtHalfTtl_isCaughtByTheExpiryChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-expiry", 7, 10, List.of(Nemesis.Kind.SHORT_CLIENT_PAUSE),
                "EXPIRE_AT_HALF_TTL", List.of(Scenario.KEEPALIVES_PAUSED_THREE_QUARTERS_TTL)));
        assertDriven(o, Scenario.KEEPALIVES_PAUSED_THREE_QUARTERS_TTL);
        String paused = o.history().stream().filter(op -> op.process().equals(ForcedInterleavings.PAUSED_CLIENT))
                .map(Op::session).findFirst().orElseThrow();
        assertThat(o.earlyExpiries()).as("report %s", o.report()).anyMatch(line -> line.contains(paused));
    }
}
