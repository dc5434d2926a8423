package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The proof suite's short form (issue 11), run by {@code mvn verify}: a fixed seed and a random one (printed, and in
 * the report: {@code -Djepsen.seed=N} runs it again), every nemesis, against the gateways as built; then each checker
 * shown failing against gateways with a deliberate bug ({@code -Dwarden.test.fault}). Reports in
 * {@code integration-tests/target/it-logs/jepsen-*}/report.md.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class JepsenIT {
    private static final long TTL_MS = 3000;

    private static ProofRun.Plan plan(String run, long seed, int seconds, List<Nemesis.Kind> nemeses, String fault) {
        return new ProofRun.Plan(run, seed, Duration.ofSeconds(seconds), nemeses, fault, TTL_MS, 6, 3);
    }

    private static void assertClean(ProofRun.Outcome o) {
        assertThat(o.violations()).as("mutex violations; report %s", o.report()).isEmpty();
        assertThat(o.mutex()).as("locks checked").isNotEmpty();
        assertThat(o.earlyExpiries()).as("early expiries; report %s", o.report()).isEmpty();
        assertThat(o.lostUpdates()).as("fenced counters off; report %s", o.report()).isEmpty();
        assertThat(o.counters()).as("fenced counters").isNotEmpty();
        assertThat(o.slowToAcquire()).as("liveness; report %s", o.report()).isEmpty();
        assertThat(ProofRun.livenessClients(o.history())).as("clients in the liveness round").isEqualTo(6);
        assertThat(o.watch().problems()).as("watch; report %s", o.report()).isEmpty();
        assertThat(o.fifo().problems()).as("FIFO; report %s", o.report()).isEmpty();
        assertThat(o.fifo().grants()).as("grants of the readers-and-writers lock").isGreaterThan(10);
        assertThat(o.watch().grantsChecked()).as("grants the watch was checked against").isGreaterThan(20);
        assertThat(o.history().stream().filter(op -> op.outcome() == Op.Outcome.GRANTED).count())
                .as("grants in the run").isGreaterThan(20);
    }

    @Test
    void fixedSeed_everyNemesis_noViolation() throws Exception {
        assertClean(ProofRun.run(plan("jepsen-fixed", 42, 50, ProofRun.every(), null)));
    }

    @Test
    void randomSeed_everyNemesis_noViolation() throws Exception {
        long seed = Long.getLong("jepsen.seed", System.nanoTime() & 0xffffffffL);
        System.out.println("JepsenIT random seed: " + seed + " (again: -Djepsen.seed=" + seed + ")");
        assertClean(ProofRun.run(plan("jepsen-random", seed, 50, ProofRun.every(), null)));
    }

    /** The mutex and FIFO checkers, shown failing: gateways that grant without the exclusivity check. */
    @Test
    void grantWithoutCheck_isCaughtByTheMutexAndFifoCheckers() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-grant", 7, 15, List.of(), "GRANT_WITHOUT_CHECK"));
        assertThat(o.violations()).as("report %s", o.report()).isNotEmpty();
        assertThat(o.fifo().problems()).as("report %s", o.report()).isNotEmpty();
    }

    /**
     * The fenced counter's checker, shown failing: gateways whose tokens are the lock node's (one token for holder
     * after holder), so that a holder that stalls past its TTL (the workload does so now and then) comes back and
     * writes with the token its successor also holds.
     */
    @Test
    void tokenOfLock_isCaughtByTheFencedCounterChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-token", 7, 25, List.of(), "TOKEN_OF_LOCK"));
        assertThat(o.lostUpdates()).as("report %s", o.report()).isNotEmpty();
    }

    /** The liveness checker, shown failing: gateways that do not wake a queued call when the node it waits for goes. */
    @Test
    void waitersNeverWoken_isCaughtByTheLivenessChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-liveness", 7, 5, List.of(), "WAITERS_NEVER_WOKEN"));
        assertThat(o.slowToAcquire()).as("report %s", o.report()).isNotEmpty();
    }

    /**
     * The watch checker, shown failing: gateways that answer a resumed watch from now on instead of from its revision,
     * while the client links drop replies now and then (the watcher's stream stalls, is closed, and resumes).
     */
    @Test
    void resumeFromNow_isCaughtByTheWatchChecker() throws Exception {
        // Lost replies on a gateway's client link stall the watcher's stream there for 1-4 s, and the heal closes it:
        // the resume must bring what the stall held back (a restart or a kill breaks the stream for a moment only).
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-watch", 7, 40, List.of(Nemesis.Kind.LOST_REPLIES),
                "RESUME_FROM_NOW"));
        assertThat(o.watch().problems()).as("report %s", o.report()).isNotEmpty();
    }

    /**
     * The expiry checker, shown failing: gateways that expire a session at half its TTL, while the workload's JVM is
     * paused for three quarters of it (a correct gateway keeps those sessions).
     */
    @Test
    void expireAtHalfTtl_isCaughtByTheExpiryChecker() throws Exception {
        ProofRun.Outcome o = ProofRun.run(plan("jepsen-fault-expiry", 7, 20, List.of(Nemesis.Kind.SHORT_CLIENT_PAUSE),
                "EXPIRE_AT_HALF_TTL"));
        assertThat(o.earlyExpiries()).as("report %s", o.report()).isNotEmpty();
    }
}
