package io.warden.it.jepsen;

import io.warden.it.support.Await;
import io.warden.it.support.ChildProcess;
import io.warden.it.support.JavaLauncher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One run of the proof suite: a {@link JepsenCell}, the {@link MutexWorkload} in its own JVM, the {@link Nemesis}
 * from a seed, then the checkers over the history, and a report ({@code report.md} beside the history and the logs in
 * {@code target/it-logs/<run>/}). The workload first drives the plan's {@link ForcedInterleavings}, without faults;
 * the nemesis starts when they are done, with the workload's random part.
 *
 * <p>Checkers: <b>mutex</b>, each lock's history linearizable against the {@link FencedMutex} (two holders at once, a
 * token that does not grow, a wrong {@code released}, a hold that ended before its session could have expired, a
 * try-lock refused while nobody held the lock, all show here); <b>no early expiry</b>, no session seen gone (a 404, or an EXPIRED event of the watch stream) before its
 * last acknowledged keepalive's send time plus its TTL (contract §2.3); <b>fenced counter</b>, each lock's {@link FencedRegister} (reads and writes fenced by the
 * holder's token) ends at the number of increments acknowledged to its holders (a lost update means two holders
 * read one value under tokens that could not order them); <b>liveness</b>, once the faults are over every client's
 * acquire of the liveness round (each lock wanted by several at once, {@link MutexWorkload#liveness}) is granted
 * within {@link #LIVENESS_BOUND_MS}; <b>watch</b>, an SDK watcher that reconnects across the faults saw every grant
 * once, in revision order ({@link WatchChecker}); <b>FIFO and shared runs</b> on a lock of readers and writers
 * ({@link FifoChecker}; that lock is left out of the mutex checker, whose model has no readers); <b>large lock</b>,
 * when the plan's nemeses include {@link Nemesis.Kind#LARGE_LOCK_PILE}: the admission bound held, every gateway read the
 * pile as too large (a 429 naming it, not a 503), and none lost its ZooKeeper connection over it ({@link LockPile});
 * <b>election</b>, SDK candidates campaigning in one election ({@link ElectionWorkload}) never both led with a valid
 * hold at one moment, and later terms had larger tokens ({@link ElectionChecker}); <b>multi-lock liveness</b>, every
 * multi-lock request of the mutex threads ({@link MultiLockWorkload}; their grants and releases are one operation per
 * name, so the mutex checker and the fenced counters hold per name) answered within its wait plus a bound
 * ({@link MultiLockChecker}); <b>deadlocks</b>, sessions waiting for each other in cycles ({@link DeadlockWorkload})
 * are failed only as the contract allows and only when a cycle with a FAIL member was there to break
 * ({@link DeadlockChecker}).
 *
 * <p>Concurrency: driven by the test thread; the nemesis runs on its own thread.
 */
final class ProofRun {
    /**
     * What a run is given. {@code fault}: a deliberate bug of the gateways ({@link BrokenGateway}), or null;
     * {@code electionBug}: one of the SDK's elections ({@link io.warden.client.BrokenElection}), or null; {@code forced}:
     * the {@link ForcedInterleavings} the workload drives before its random part of {@code duration}.
     */
    record Plan(String run, long seed, Duration duration, List<Nemesis.Kind> nemeses, String fault, long ttlMs,
                int threads, int locks, List<ForcedInterleavings.Scenario> forced, String electionBug) {
        /** A plan whose candidates run the SDK's elections as built. */
        Plan(String run, long seed, Duration duration, List<Nemesis.Kind> nemeses, String fault, long ttlMs,
             int threads, int locks, List<ForcedInterleavings.Scenario> forced) {
            this(run, seed, duration, nemeses, fault, ttlMs, threads, locks, forced, null);
        }
    }

    /** What a run found. */
    record Outcome(Plan plan, List<Op> history, List<Linearizability.Result> mutex,
                   List<Linearizability.Result> semaphore, List<String> earlyExpiries,
                   Map<String, FencedRegister.Summary> counters, WatchChecker.Result watch, FifoChecker.Result fifo,
                   List<Nemesis.Fault> faults, List<ForcedInterleavings.Result> forced, Path report,
                   List<String> pileProblems, int piles, ElectionChecker.Result election,
                   MultiLockChecker.Result multi, DeadlockChecker.Result deadlocks) {
        /** What the forced interleaving {@code scenario} did; throws if the plan did not name it. */
        ForcedInterleavings.Result forced(ForcedInterleavings.Scenario scenario) {
            return forced.stream().filter(r -> r.scenario() == scenario).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException(scenario + " was not forced in " + plan.run()));
        }

        List<Linearizability.Result> violations() {
            return mutex.stream().filter(r -> !r.ok()).toList();
        }

        /** The semaphores whose history no sequence of a semaphore of {@link MutexWorkload#SEM_PERMITS} explains. */
        List<Linearizability.Result> semaphoreViolations() {
            return semaphore.stream().filter(r -> !r.ok()).toList();
        }

        /** The locks whose fenced counter does not equal the increments acknowledged. */
        Map<String, FencedRegister.Summary> lostUpdates() {
            Map<String, FencedRegister.Summary> bad = new java.util.TreeMap<>();
            counters.forEach((lock, summary) -> {
                if (!summary.ok()) {
                    bad.put(lock, summary);
                }
            });
            return bad;
        }

        List<String> slowToAcquire() {
            return ProofRun.slowToAcquire(history);
        }

        boolean clean() {
            return mutex.stream().allMatch(Linearizability.Result::ok) && semaphore.stream().allMatch(Linearizability.Result::ok)
                    && earlyExpiries.isEmpty() && lostUpdates().isEmpty()
                    && slowToAcquire().isEmpty() && watch.ok() && fifo.ok() && pileProblems.isEmpty() && election.ok()
                    && multi.ok() && deadlocks.ok();
        }
    }

    /**
     * The liveness bound: a hold of 200 ms per client ahead in the queue and a hand-off, with room for a slow machine;
     * well under the round's wait, so a waiter that is only looked at when its wait runs out is caught.
     */
    static final long LIVENESS_BOUND_MS = 10_000;
    /** Client threads on the Java SDK, besides the plan's plain-HTTP threads (and the SDK watcher). */
    static final int SDK_THREADS = 2;
    /** At most how long the forced interleavings may take (each step of one waits at most 20 s). */
    static final Duration FORCED_BUDGET = Duration.ofMinutes(3);
    /** The semaphores of the history (the random workload's and the forced one's): checked by {@link FencedSemaphore}. */
    static final java.util.Set<String> SEMAPHORES = java.util.Set.of(MutexWorkload.SEM_LOCK, ForcedInterleavings.SEM_LOCK);

    private ProofRun() {
    }

    /**
     * What the mutex checker reads: every lock's operations but the readers-and-writers lock's and the semaphores',
     * with the ends of sessions ({@link Linearizability#EVERY_KEY}: an expiry ends every hold of its session).
     */
    static List<Op> mutexHistory(List<Op> history) {
        return history.stream().filter(op -> !MutexWorkload.RW_LOCK.equals(op.key()) && !SEMAPHORES.contains(op.key()))
                .toList();
    }

    /**
     * What the semaphore checker reads: the semaphores' operations, with the ends of sessions — without them, a holder
     * whose session expired would seem to hold for ever, and a release answered "not released" afterwards, or a grant
     * of its permit to another, would look like a violation.
     */
    static List<Op> semaphoreHistory(List<Op> history) {
        return history.stream().filter(op -> SEMAPHORES.contains(op.key()) || Linearizability.EVERY_KEY.equals(op.key()))
                .toList();
    }

    /** The liveness round's acquires that were not granted within {@link #LIVENESS_BOUND_MS}, one line each. */
    static List<String> slowToAcquire(List<Op> history) {
        List<String> slow = new ArrayList<>();
        for (Op op : history) {
            if (op.kind() == Op.Kind.ACQUIRE && op.process().startsWith(MutexWorkload.LIVENESS)) {
                boolean granted = op.outcome() == Op.Outcome.GRANTED;
                long ms = op.ret() == Op.NEVER ? -1 : TimeUnit.NANOSECONDS.toMillis(op.ret() - op.call());
                if (!granted || ms > LIVENESS_BOUND_MS) {
                    slow.add(op.process() + " on " + op.key() + ": " + op.outcome()
                            + (ms < 0 ? ", no answer" : " after " + ms + " ms") + " (bound " + LIVENESS_BOUND_MS + " ms)");
                }
            }
        }
        return slow;
    }

    /**
     * The other half of the expiry checker: an EXPIRED event of the watch stream that arrived before its session could
     * legally have expired (the session's END operation starts at the send time of its last acknowledged keepalive
     * plus its TTL). An event comes after the expiry it reports, so one that arrives earlier is an early expiry for sure.
     */
    static List<String> expiredEventsTooEarly(WatchRecorder.Recording watch, List<Op> history) {
        Map<String, Long> earliest = new java.util.HashMap<>();
        for (Op op : history) {
            if (op.kind() == Op.Kind.END) {
                earliest.merge(op.session(), op.call(), Math::min);
            }
        }
        List<String> early = new ArrayList<>();
        java.util.Set<String> reported = new java.util.HashSet<>();
        for (WatchRecorder.Seen e : watch.events()) {
            Long bound = e.session() == null ? null : earliest.get(e.session());
            if ("EXPIRED".equals(e.type()) && bound != null && e.received() < bound && reported.add(e.session())) {
                early.add("session " + e.session() + ": its EXPIRED event (" + e.name() + ", revision " + e.revision()
                        + ") arrived " + TimeUnit.NANOSECONDS.toMillis(bound - e.received())
                        + " ms before the session could legally have expired");
            }
        }
        return early;
    }

    /** How many clients took part in the liveness round. */
    static long livenessClients(List<Op> history) {
        return history.stream().filter(op -> op.kind() == Op.Kind.ACQUIRE && op.process().startsWith(MutexWorkload.LIVENESS))
                .count();
    }

    static Outcome run(Plan plan) throws Exception {
        try (JepsenCell cell = JepsenCell.start(plan.run(), 2, plan.fault(),
                plan.nemeses().contains(Nemesis.Kind.LARGE_LOCK_PILE))) {
            JavaLauncher launcher = cell.launcher;
            Path dir = launcher.logDir();
            List<String> args = List.of("--gateways", cell.endpoints().stream().map(Object::toString).collect(Collectors.joining(",")),
                    "--threads", Integer.toString(plan.threads()), "--sdk-threads", Integer.toString(SDK_THREADS), "--locks", Integer.toString(plan.locks()),
                    "--seconds", Long.toString(plan.duration().toSeconds()), "--ttl-ms", Long.toString(plan.ttlMs()),
                    "--seed", Long.toString(plan.seed()), "--out", dir.toString(), "--name", "w1",
                    "--forced", plan.forced().isEmpty() ? "none"
                            : plan.forced().stream().map(Enum::name).collect(Collectors.joining(",")),
                    "--election-bug", plan.electionBug() == null ? "none" : plan.electionBug());
            long start = System.nanoTime();
            ChildProcess workload = launcher.startMain("workload-w1", List.of("-Xmx256m",
                    "-Dlogback.configurationFile=" + launcher.logbackConfig("WARN")), MutexWorkload.class.getName(), args);
            // No fault while the forced interleavings run: each waits for what it drives, and a fault would change that.
            // The workload writes their results when they are done, and its random part begins.
            Path forcedFile = dir.resolve("forced-w1.json");
            Await.until("the workload's forced interleavings (" + forcedFile + ")", FORCED_BUDGET, Duration.ofMillis(100),
                    () -> Files.exists(forcedFile) || !workload.isAlive());
            if (!Files.exists(forcedFile)) {
                throw new AssertionError("the workload ended before its forced interleavings were done; log "
                        + workload.log() + ":\n" + workload.logTail(40));
            }
            long randomStart = System.nanoTime();
            // faults stop 5 s before the workload does: the cell heals and the last operations come through
            Nemesis nemesis = new Nemesis(cell, plan.seed(), plan.nemeses(), plan.ttlMs(), () -> List.of(workload),
                    randomStart + plan.duration().toNanos() - TimeUnit.SECONDS.toNanos(5));
            Thread nemesisThread = new Thread(nemesis, "nemesis");
            nemesisThread.setDaemon(true);
            nemesisThread.start();
            nemesisThread.join(plan.duration().toMillis() + 120_000);
            if (nemesis.failure().isPresent()) {
                throw new AssertionError("the nemesis failed (the cell did not recover?)", nemesis.failure().get());
            }
            if (!workload.awaitExit(plan.duration().plusSeconds(120)) || workload.exitValue() != 0) {
                throw new AssertionError("the workload did not finish; log " + workload.log() + ":\n" + workload.logTail(40));
            }
            List<Op> history = History.read(dir.resolve("history-w1.jsonl"));
            WatchRecorder.Recording recording = WatchRecorder.read(dir.resolve("watch-w1.json"));
            List<String> early = new ArrayList<>(Files.readAllLines(dir.resolve("early-expiries-w1.txt")));
            early.addAll(expiredEventsTooEarly(recording, history));
            List<Linearizability.Result> mutex = Linearizability.checkPerKey(new FencedMutex(), mutexHistory(history),
                    20_000_000);
            List<Linearizability.Result> semaphore = Linearizability.checkPerKey(
                    new FencedSemaphore(MutexWorkload.SEM_PERMITS), semaphoreHistory(history), 20_000_000);
            FifoChecker.Result fifo = FifoChecker.check(history, MutexWorkload.RW_LOCK);
            Map<String, FencedRegister.Summary> counters = new com.fasterxml.jackson.databind.ObjectMapper().readValue(
                    dir.resolve("counters-w1.json").toFile(),
                    new com.fasterxml.jackson.core.type.TypeReference<java.util.TreeMap<String, FencedRegister.Summary>>() { });
            Path report = dir.resolve("report.md");
            WatchChecker.Result watch = WatchChecker.check(recording, history);
            ElectionChecker.Result election = ElectionChecker.check(ElectionWorkload.read(dir.resolve("election-w1.jsonl")));
            List<Nemesis.Fault> faults = List.copyOf(nemesis.faults);
            MultiLockChecker.Result multi = MultiLockChecker.check(MultiLockWorkload.read(dir.resolve("multi-w1.json")),
                    faults);
            DeadlockChecker.Result deadlocks = DeadlockChecker.check(
                    DeadlockWorkload.read(dir.resolve("deadlocks-w1.json")), history, faults);
            Outcome outcome = new Outcome(plan, history, mutex, semaphore, early, counters, watch, fifo,
                    faults, ForcedInterleavings.read(forcedFile), report,
                    List.copyOf(nemesis.pile.problems), nemesis.pile.runs, election, multi, deadlocks);
            Timeline.render(outcome, start, dir.resolve("timeline.png"));
            Files.writeString(report, report(outcome, start));
            return outcome;
        }
    }

    private static String report(Outcome o, long start) {
        Plan p = o.plan();
        StringBuilder b = new StringBuilder();
        b.append("# Proof run `").append(p.run()).append("`\n\n");
        b.append("Seed **").append(p.seed()).append("** (the same seed injects the same faults with the same pauses), ")
                .append(p.duration().toSeconds()).append(" s, ").append(p.threads()).append(" plain-HTTP client threads, ")
                .append(SDK_THREADS).append(" on the Java SDK and an SDK watcher, on ")
                .append(p.locks()).append(" locks, session TTL ").append(p.ttlMs()).append(" ms, gateways' ZooKeeper session ")
                .append(JepsenCell.ZK_SESSION_TIMEOUT_MS).append(" ms");
        if (p.fault() != null) {
            b.append(", **gateways built with the deliberate bug ").append(p.fault()).append("**");
        }
        if (p.electionBug() != null) {
            b.append(", **elections built with the deliberate bug ").append(p.electionBug()).append("**");
        }
        b.append(". Gateways: `").append(io.warden.it.support.GatewayProcess.serviceJar()).append("` (built ")
                .append(io.warden.it.support.GatewayProcess.serviceJarTime()).append(")");
        b.append(".\n\n![timeline](timeline.png)\n\n## Verdicts\n\n| checker | verdict | detail |\n|---|---|---|\n");
        long bad = o.mutex().stream().filter(r -> r.verdict() == Linearizability.Verdict.VIOLATION).count();
        long unknown = o.mutex().stream().filter(r -> r.verdict() == Linearizability.Verdict.UNKNOWN).count();
        b.append("| mutex (linearizable per lock, fenced-mutex model) | ").append(bad == 0 && unknown == 0 ? "ok" : bad > 0 ? "**VIOLATION**" : "unknown")
                .append(" | ").append(o.mutex().size()).append(" locks, ").append(bad).append(" violating, ")
                .append(unknown).append(" past the search budget; ")
                .append(o.history().stream().filter(op -> op.outcome() == Op.Outcome.REFUSED).count())
                .append(" try-locks refused, each checked against a holder |\n");
        long semBad = o.semaphore().stream().filter(r -> r.verdict() == Linearizability.Verdict.VIOLATION).count();
        long semUnknown = o.semaphore().stream().filter(r -> r.verdict() == Linearizability.Verdict.UNKNOWN).count();
        b.append("| semaphore (linearizable per name, ").append(MutexWorkload.SEM_PERMITS)
                .append(" permits: never more holders, a growing token per grant) | ")
                .append(semBad == 0 && semUnknown == 0 ? "ok" : semBad > 0 ? "**VIOLATION**" : "unknown").append(" | ")
                .append(o.semaphore().size()).append(" semaphores, ").append(semBad).append(" violating, ").append(semUnknown)
                .append(" past the search budget; ")
                .append(o.history().stream().filter(op -> SEMAPHORES.contains(op.key()) && op.kind() == Op.Kind.ACQUIRE
                        && op.outcome() == Op.Outcome.GRANTED).count()).append(" grants |\n");
        b.append("| no early expiry | ").append(o.earlyExpiries().isEmpty() ? "ok" : "**VIOLATION**").append(" | ")
                .append(o.earlyExpiries().size()).append(" sessions seen gone before their TTL ran out |\n");
        long acknowledged = o.counters().values().stream().mapToLong(FencedRegister.Summary::acknowledged).sum();
        long refused = o.counters().values().stream().mapToLong(c -> c.refusedReads() + c.refusedWrites()).sum();
        b.append("| fenced counter (value = acknowledged increments) | ").append(o.lostUpdates().isEmpty() ? "ok" : "**VIOLATION**")
                .append(" | ").append(o.counters().size()).append(" counters, ").append(acknowledged)
                .append(" increments acknowledged, ").append(o.lostUpdates().size()).append(" counters off; ")
                .append(refused).append(" stale reads or writes refused by the fence |\n");
        List<String> slow = o.slowToAcquire();
        b.append("| liveness (after the faults, every client acquires within ").append(LIVENESS_BOUND_MS / 1000)
                .append(" s) | ").append(slow.isEmpty() && livenessClients(o.history()) > 0 ? "ok" : "**VIOLATION**")
                .append(" | ").append(livenessClients(o.history()) - slow.size()).append(" of ")
                .append(livenessClients(o.history())).append(" clients acquired in time |\n");
        b.append("| FIFO and shared runs (").append(MutexWorkload.RW_LOCK).append(": queue order, no reader past a queued writer) | ")
                .append(o.fifo().ok() ? "ok" : "**VIOLATION**").append(" | ").append(o.fifo().grants())
                .append(" grants, ").append(o.fifo().problems().size()).append(" out of order; ")
                .append(o.fifo().overlappingReaders()).append(" reader pairs held together |\n");
        WatchChecker.Result w = o.watch();
        b.append("| watch (every grant seen once, in revision order, across reconnections) | ")
                .append(w.ok() ? "ok" : "**VIOLATION**").append(" | ").append(w.events()).append(" events, ")
                .append(w.grantsChecked()).append(" grants checked, ").append(w.problems().size()).append(" problems; ")
                .append(w.resyncs()).append(" RESYNCs excusing ").append(w.excused()).append(" grants |\n");
        ElectionChecker.Result el = o.election();
        b.append("| election (").append(ElectionWorkload.ELECTION).append(", ").append(ElectionWorkload.CANDIDATES)
                .append(" SDK candidates: never two leaders with a valid hold at once, tokens grow, a term never comes back) | ")
                .append(el.ok() ? "ok" : "**VIOLATION**").append(" | ").append(el.terms()).append(" terms, ")
                .append(el.spans()).append(" of them sampled valid (").append(el.samples()).append(" samples), ")
                .append(el.problems().size()).append(" problems |\n");
        MultiLockChecker.Result ml = o.multi();
        b.append("| multi-lock liveness (every multi-lock request answered within its wait plus ")
                .append(MultiLockChecker.BOUND_MS / 1000).append(" s; its grants are in the mutex checker, per name) | ")
                .append(ml.ok() ? "ok" : "**VIOLATION**").append(" | ").append(ml.requests()).append(" requests, ")
                .append(ml.granted()).append(" granted, ").append(ml.problems().size()).append(" problems; ")
                .append(ml.excused()).append(" late or unanswered near a fault |\n");
        DeadlockChecker.Result dl = o.deadlocks();
        b.append("| deadlocks (only a waiting FAIL request is failed, for a cycle that existed; a cycle with a FAIL member "
                + "broken once within ").append(DeadlockChecker.BOUND_MS / 1000).append(" s; a WAIT cycle left alone) | ")
                .append(dl.ok() ? "ok" : "**VIOLATION**").append(" | ").append(dl.groups()).append(" groups, ")
                .append(dl.formed()).append(" cycles formed (").append(dl.waitOnlyCycles()).append(" of WAIT requests), ")
                .append(dl.victims()).append(" victims, ").append(dl.problems().size()).append(" problems; ")
                .append(dl.excused()).append(" with an answer lost |\n");
        if (p.nemeses().contains(Nemesis.Kind.LARGE_LOCK_PILE)) {
            b.append("| large lock (").append(LockPile.LOCK).append(": ").append(LockPile.MAX_ENTRIES)
                    .append(" SHARED admitted then refused, ").append(LockPile.FOREIGN).append(" foreign entries; read as too "
                    + "large by every gateway; no gateway lost ZooKeeper) | ")
                    .append(o.pileProblems().isEmpty() && o.piles() > 0 ? "ok" : "**VIOLATION**").append(" | ")
                    .append(o.piles()).append(" piles, ").append(o.pileProblems().size()).append(" problems |\n");
        }
        Map<Op.Kind, Map<Op.Outcome, Long>> counts = new EnumMap<>(Op.Kind.class);
        for (Op op : o.history()) {
            counts.computeIfAbsent(op.kind(), k -> new EnumMap<>(Op.Outcome.class)).merge(op.outcome(), 1L, Long::sum);
        }
        if (!o.forced().isEmpty()) {
            b.append("\n## Forced interleavings\n\nDriven before the random part, without faults (ForcedInterleavings).\n\n");
            o.forced().forEach(r -> b.append("- ").append(r.scenario()).append(r.driven() ? ": " : ": **not driven**: ")
                    .append(r.detail()).append("\n"));
        }
        b.append("\n## Operations\n\n").append(o.history().size()).append(" in all: ").append(counts).append("\n");
        b.append("\n## Faults\n\nRecovery: from the fault's end (healed, restarted or resumed) to the first grant answered "
                + "after it.\n\n| from s | to s | fault | on | recovery s |\n|---:|---:|---|---|---:|\n");
        Map<Nemesis.Kind, List<Double>> recoveries = new EnumMap<>(Nemesis.Kind.class);
        for (Nemesis.Fault f : o.faults()) {
            double recovery = recovery(o.history(), f.end());
            recoveries.computeIfAbsent(f.kind(), k -> new ArrayList<>()).add(recovery);
            b.append(String.format("| %.1f | %.1f | %s | %s | %s |%n", (f.start() - start) / 1e9, (f.end() - start) / 1e9,
                    f.kind(), f.target(), Double.isNaN(recovery) ? "none" : String.format("%.2f", recovery)));
        }
        if (!recoveries.isEmpty()) {
            b.append("\n| fault | times | recovery s, median | recovery s, most |\n|---|---:|---:|---:|\n");
            recoveries.forEach((kind, list) -> {
                List<Double> sorted = list.stream().filter(d -> !Double.isNaN(d)).sorted().toList();
                b.append(String.format("| %s | %d | %s | %s |%n", kind, list.size(),
                        sorted.isEmpty() ? "none" : String.format("%.2f", sorted.get(sorted.size() / 2)),
                        sorted.isEmpty() ? "none" : String.format("%.2f", sorted.get(sorted.size() - 1))));
            });
        }
        if (!o.clean()) {
            b.append("\n## Violations\n\n```\n");
            o.violations().forEach(r -> b.append(rebase(r.toString(), start)).append("\n"));
            o.semaphoreViolations().forEach(r -> b.append(rebase(r.toString(), start)).append("\n"));
            o.earlyExpiries().forEach(line -> b.append(line).append("\n"));
            o.slowToAcquire().forEach(line -> b.append("liveness: ").append(line).append("\n"));
            o.fifo().problems().stream().limit(20).forEach(line -> b.append("fifo: ").append(line).append("\n"));
            o.watch().problems().stream().limit(50).forEach(line -> b.append("watch: ").append(line).append("\n"));
            o.pileProblems().forEach(line -> b.append(line).append("\n"));
            o.election().problems().stream().limit(50).forEach(line -> b.append("election: ").append(line).append("\n"));
            o.multi().problems().stream().limit(50).forEach(line -> b.append("multi-lock: ").append(line).append("\n"));
            o.deadlocks().problems().stream().limit(50).forEach(line -> b.append("deadlock: ").append(line).append("\n"));
            o.lostUpdates().forEach((lock, c) -> b.append("fenced counter of ").append(lock).append(": value ")
                    .append(c.value()).append(" after ").append(c.acknowledged()).append(" acknowledged increments\n"));
            b.append("```\n");
        }
        return b.toString();
    }

    /** Seconds from {@code end} to the first grant answered after it; NaN when none came. */
    static double recovery(List<Op> history, long end) {
        long first = Long.MAX_VALUE;
        for (Op op : history) {
            if (op.outcome() == Op.Outcome.GRANTED && op.ret() > end) {
                first = Math.min(first, op.ret());
            }
        }
        return first == Long.MAX_VALUE ? Double.NaN : (first - end) / 1e9;
    }

    /** Times in a violation's text are nanoTime values; the report keeps them (the history has the same). */
    private static String rebase(String text, long start) {
        return text + "\n  (times are System.nanoTime(); the run started at " + start + ")";
    }

    static List<Nemesis.Kind> every() {
        return Nemesis.every();
    }
}
