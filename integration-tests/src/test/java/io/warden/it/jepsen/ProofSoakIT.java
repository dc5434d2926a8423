package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The proof suite's long form and its custom runs, not in CI: enabled by {@code -Djepsen.soak=true}, shaped by
 * {@code -Djepsen.seconds} (default 1800), {@code -Djepsen.seed} (default random, printed),
 * {@code -Djepsen.nemeses} (comma-separated {@link Nemesis.Kind} names; default every one), {@code -Djepsen.fault}
 * (a gateway's deliberate bug), {@code -Djepsen.threads} and {@code -Djepsen.locks}; against another build's
 * gateways with {@code -Dwarden.service.jar=...}. RELIABILITY.md has the commands and what they found.
 */
@EnabledIfSystemProperty(named = "jepsen.soak", matches = "true")
class ProofSoakIT {
    @Test
    void soak() throws Exception {
        long seconds = Long.getLong("jepsen.seconds", 1800);
        long seed = Long.getLong("jepsen.seed", System.nanoTime() & 0xffffffffL);
        String names = System.getProperty("jepsen.nemeses", "");
        List<Nemesis.Kind> nemeses = names.isBlank() ? Nemesis.every()
                : Arrays.stream(names.split(",")).map(String::trim).map(Nemesis.Kind::valueOf).toList();
        String fault = System.getProperty("jepsen.fault");
        System.out.println("ProofSoakIT: seed " + seed + ", " + seconds + " s, nemeses " + nemeses
                + (fault == null ? "" : ", fault " + fault) + ", gateway jar " + System.getProperty("warden.service.jar"));
        ProofRun.Outcome o = ProofRun.run(new ProofRun.Plan("jepsen-soak", seed, Duration.ofSeconds(seconds), nemeses,
                fault, 3000, Integer.getInteger("jepsen.threads", 6), Integer.getInteger("jepsen.locks", 3),
                ForcedInterleavings.Scenario.every()));
        System.out.println("ProofSoakIT: report " + o.report());
        assertThat(o.violations()).as("mutex violations; report %s", o.report()).isEmpty();
        assertThat(o.semaphoreViolations()).as("semaphore violations; report %s", o.report()).isEmpty();
        assertThat(o.earlyExpiries()).as("early expiries; report %s", o.report()).isEmpty();
        assertThat(o.lostUpdates()).as("fenced counters off; report %s", o.report()).isEmpty();
        assertThat(o.fifo().problems()).as("FIFO; report %s", o.report()).isEmpty();
        assertThat(o.watch().problems()).as("watch; report %s", o.report()).isEmpty();
        assertThat(o.pileProblems()).as("large lock; report %s", o.report()).isEmpty();
        assertThat(o.election().problems()).as("election; report %s", o.report()).isEmpty();
        assertThat(o.slowToAcquire()).as("liveness; report %s", o.report()).isEmpty();
        assertThat(o.multi().problems()).as("multi-lock liveness; report %s", o.report()).isEmpty();
        assertThat(o.deadlocks().problems()).as("deadlocks; report %s", o.report()).isEmpty();
        assertThat(o.clean()).as("every checker; report %s", o.report()).isTrue();
    }
}
