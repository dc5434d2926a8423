package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.it.support.Await;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.WardenClient;
import io.warden.it.support.ZkEnsemble;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One cell loses its quorum, the other's clients see nothing: a whole-system proof with real processes. Two ZooKeeper
 * ensembles of three servers (A, the default cell, and B, cell {@value TwoCells#CELL_B}) and two gateways serving both,
 * namespace {@value TwoCells#PAY} routed to B ({@link TwoCells}); the {@link CellWorkload}'s clients over plain HTTP
 * against both gateways: three use only namespace {@value TwoCells#WEB} (cell A), three only {@value TwoCells#PAY} (cell
 * B), two both in one session, each taking locks, incrementing the lock's fenced counter under them and keeping its
 * session alive (TTL {@value CellWorkload#TTL_MS} ms). After {@link #BEFORE} the nemesis cuts every quorum and election
 * link of one ensemble (its servers keep running: first its writes hang, then it stops serving), heals them after
 * {@link #OUTAGE}, and the workload goes on for at least {@link #AFTER_MIN} more, until every client was granted again
 * (at most {@link #AFTER_MAX} after the heal, or {@link #AFTER_MIN} after every gateway serves the cell again when that
 * comes later). Then the {@link CellCheckers} read the history (the checkers and their bounds are described there).
 *
 * <p>{@link #cellBLosesQuorum_theOtherCellsClientsSeeNothing}: B loses its quorum; all four checkers must hold.
 * {@link #cellALosesQuorum_isCaughtByTheUntouchedChecker}: the same run with A's quorum taken instead, so that the web
 * clients are the ones in the faulty cell: checker 2 must report them (a checker never seen to fail proves nothing),
 * and fencing must still hold.
 *
 * <p>Reports, with the history ({@code history.jsonl}, one {@link CellOp} a line) and every process's log, in
 * {@code integration-tests/target/it-logs/cells-*}/report.md.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CellQuorumLossIT {
    static final Duration BEFORE = Duration.ofSeconds(10);
    static final Duration OUTAGE = Duration.ofSeconds(15);
    static final Duration AFTER_MIN = Duration.ofSeconds(10);
    static final Duration AFTER_MAX = Duration.ofSeconds(30);

    /** What one run found. */
    record Outcome(String run, String faultyCell, List<CellOp> history, Map<String, FencedRegister.Summary> counters,
                   CellCheckers.Outage outage, long start, List<CellCheckers.Verdict> verdicts, List<String> failures,
                   Path report) {
        CellCheckers.Verdict verdict(String prefix) {
            return verdicts.stream().filter(v -> v.name().startsWith(prefix)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no checker " + prefix + " in " + run));
        }

        long count(CellOp.Role role, CellOp.Kind kind, CellOp.Outcome outcome) {
            return history.stream().filter(op -> op.role() == role && op.kind() == kind && op.outcome() == outcome).count();
        }
    }

    /** Cell B loses its quorum: the web-only clients see nothing, the others see exactly what the API promises. */
    @Test
    void cellBLosesQuorum_theOtherCellsClientsSeeNothing() throws Exception {
        Outcome o = run("cells-b-quorum-loss", TwoCells.CELL_B, Long.getLong("cells.seed", 11));
        assertThat(o.failures()).as("the workload's own failures; report %s", o.report()).isEmpty();
        assertThat(o.verdict("1.").problems()).as("fencing; report %s", o.report()).isEmpty();
        assertThat(o.verdict("2.").problems()).as("web-only clients must see nothing of cell b's outage; report %s",
                o.report()).isEmpty();
        assertThat(o.verdict("3.").problems()).as("the fault must be real for the pay-only clients; report %s", o.report())
                .isEmpty();
        assertThat(o.verdict("4.").problems()).as("keepalives of sessions using cell b; report %s", o.report()).isEmpty();
        // not vacuous: the checkers had grants of both cells and of every role to look at
        for (CellOp.Role role : CellOp.Role.values()) {
            assertThat(o.count(role, CellOp.Kind.ACQUIRE, CellOp.Outcome.OK)).as("%s grants", role).isGreaterThan(20);
        }
        assertThat(o.counters().values()).as("every lock's counter was incremented")
                .allMatch(c -> c.acknowledged() > 10);
    }

    /**
     * Checker 2 shown failing by construction: the same run, but cell A (the web namespace's cell, and every session's
     * home) loses its quorum, so the web-only clients are refused during the outage and checker 2 must say so, for each
     * of them, and never before the outage. Fencing must hold here too.
     */
    @Test
    void cellALosesQuorum_isCaughtByTheUntouchedChecker() throws Exception {
        Outcome o = run("cells-a-quorum-loss", "default", Long.getLong("cells.seed", 12));
        assertThat(o.failures()).as("the workload's own failures; report %s", o.report()).isEmpty();
        assertThat(o.verdict("1.").problems()).as("fencing holds whichever cell fails; report %s", o.report()).isEmpty();
        List<String> problems = o.verdict("2.").problems();
        assertThat(problems).as("checker 2 must report the web-only clients when their own cell loses its quorum; "
                + "report %s", o.report()).isNotEmpty();
        for (String client : List.of("web-1", "web-2", "web-3")) {
            assertThat(problems).as("problems of %s during the outage; report %s", client, o.report())
                    .anyMatch(p -> p.startsWith("during the outage") && p.contains(" " + client + " "));
        }
        assertThat(problems).as("none before the outage; report %s", o.report())
                .noneMatch(p -> p.startsWith("before the outage"));
        assertThat(o.history().stream().filter(op -> op.role() == CellOp.Role.WEB && o.outage().during(op)
                && op.outcome() == CellOp.Outcome.UNAVAILABLE).count())
                .as("web-only calls answered 503 during cell A's outage; report %s", o.report()).isPositive();
    }

    private static Outcome run(String run, String faultyCell, long seed) throws Exception {
        try (TwoCells cells = TwoCells.start(run, 2)) {
            Path dir = cells.launcher.logDir();
            ZkEnsemble zk = cells.ensemble(faultyCell);
            CellWorkload workload = new CellWorkload(cells.endpoints(), seed);
            long start = System.nanoTime();
            workload.start();
            CellCheckers.Outage outage;
            try {
                sleepUntil(start + BEFORE.toNanos());
                long cut = System.nanoTime();
                TwoCells.splitEveryServer(zk);
                TwoCells.awaitNoServer(zk, Duration.ofSeconds(30));
                long lostSeen = System.nanoTime();
                sleepUntil(cut + OUTAGE.toNanos());
                long heal = System.nanoTime();
                TwoCells.healQuorumLinks(zk);
                zk.awaitQuorum(Duration.ofSeconds(90));
                long quorumBack = System.nanoTime();
                cells.awaitServing(faultyCell, Duration.ofSeconds(60));
                long servingBack = System.nanoTime();
                outage = new CellCheckers.Outage(faultyCell, cut, lostSeen, heal, quorumBack, servingBack);
                // on until every client was granted again (the recovery the checkers look for), within bounds; a slow
                // election after the heal (ZooKeeper's election backs off while it finds no peers) moves the latest
                // end on
                long least = heal + AFTER_MIN.toNanos();
                long most = Math.max(heal + AFTER_MAX.toNanos(), servingBack + AFTER_MIN.toNanos());
                Await.until("the workload's end", AFTER_MAX.plusSeconds(90), Duration.ofMillis(200), () -> {
                    long now = System.nanoTime();
                    return now - most >= 0 || (now - least >= 0 && workload.everyClientGrantedSince(heal));
                });
            } finally {
                workload.stop(Duration.ofSeconds(30));
            }
            long end = System.nanoTime();
            List<CellOp> history = workload.history();
            Map<String, FencedRegister.Summary> counters = workload.counters();
            List<CellCheckers.Verdict> verdicts = new ArrayList<>();
            verdicts.add(CellCheckers.fencing(history, counters, start));
            verdicts.add(CellCheckers.untouched(history, CellOp.Role.WEB, outage, start));
            if (faultyCell.equals(TwoCells.CELL_B)) {
                verdicts.add(CellCheckers.faultWasReal(history, outage, start));
                verdicts.add(CellCheckers.spanningRefused(history, outage,
                        TimeUnit.MILLISECONDS.toNanos(TwoCells.ZK_SESSION_TIMEOUT_MS / 2), start));
            }
            writeHistory(dir.resolve("history.jsonl"), history);
            Path report = dir.resolve("report.md");
            Outcome outcome = new Outcome(run, faultyCell, history, counters, outage, start, verdicts,
                    workload.failures(), report);
            Files.writeString(report, report(outcome, cells, end));
            System.out.println(run + ": report " + report);
            return outcome;
        }
    }

    private static void sleepUntil(long nanoTime) {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Await.sleepQuietly(Duration.ofNanos(left));
        }
    }

    private static void writeHistory(Path file, List<CellOp> history) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (CellOp op : history) {
                out.write(WardenClient.JSON.writeValueAsString(op));
                out.newLine();
            }
        }
    }

    private static String report(Outcome o, TwoCells cells, long end) {
        long start = o.start();
        CellCheckers.Outage out = o.outage();
        boolean expectFailure = !o.faultyCell().equals(TwoCells.CELL_B);
        StringBuilder b = new StringBuilder();
        b.append("# Cell quorum loss `").append(o.run()).append("`\n\n");
        b.append("Two ZooKeeper ensembles of three servers: A (cell `default`, `--zk`) and B (cell `")
                .append(TwoCells.CELL_B).append("`, `--cells`), namespace `").append(TwoCells.PAY).append("` routed to B; ")
                .append(cells.gateways().size()).append(" gateways serving both (ZooKeeper session ")
                .append(TwoCells.ZK_SESSION_TIMEOUT_MS).append(" ms, vouching bound ")
                .append(TwoCells.ZK_SESSION_TIMEOUT_MS / 2).append(" ms). Clients over plain HTTP, one attempt per call: ")
                .append("`web-*` use namespace `web` (cell A), `pay-*` namespace `pay` (cell B), `span-*` both in one ")
                .append("session; session TTL ").append(CellWorkload.TTL_MS).append(" ms, keepalives every ")
                .append(CellWorkload.KEEPALIVE_EVERY_MS).append(" ms (given up after ").append(CellWorkload.KEEPALIVE_TIMEOUT_MS)
                .append(" ms), `wait_ms` ").append(CellWorkload.WAIT_MS).append(", ")
                .append(CellWorkload.LOCKS).append(" locks per namespace, each with a fenced counter. Nemesis: every quorum "
                        + "and election link of **cell `").append(o.faultyCell()).append("`** black-holed for ")
                .append(OUTAGE.toSeconds()).append(" s.");
        if (expectFailure) {
            b.append(" **The fault is in the web clients' own cell: checker 2 is expected to report them** (the checker "
                    + "shown failing).");
        }
        b.append(" Gateways: `").append(GatewayProcess.serviceJar()).append("` (built ")
                .append(GatewayProcess.serviceJarTime()).append(").\n\n");

        b.append("## Timeline\n\nSeconds from the workload's start.\n\n| event | s |\n|---|---:|\n");
        row(b, "links of cell `" + o.faultyCell() + "` cut", out.cut(), start);
        row(b, "no server of it serving (srvr)", out.lostSeen(), start);
        row(b, "links healed", out.heal(), start);
        row(b, "quorum again", out.quorumBack(), start);
        row(b, "every gateway serving it again (GET /v1/cells)", out.servingBack(), start);
        row(b, "workload stopped", end, start);

        b.append("\n## Verdicts\n\n| checker | verdict | detail |\n|---|---|---|\n");
        for (CellCheckers.Verdict v : o.verdicts()) {
            b.append("| ").append(v.name()).append(" | ").append(v.ok() ? "ok" : "**PROBLEMS (" + v.problems().size() + ")**")
                    .append(" | ").append(v.summary().replace("|", "/")).append(" |\n");
        }
        if (!o.failures().isEmpty()) {
            b.append("\n**The workload itself failed** (the history is incomplete): ").append(o.failures()).append("\n");
        }

        b.append("\n## Calls by role, kind and phase\n\nBefore: answered before the cut; during: under way at some moment "
                + "from the cut to the heal; after: sent after the heal. Counts by outcome.\n\n"
                + "| role | kind | phase | calls | outcomes | slowest ms |\n|---|---|---|---:|---|---:|\n");
        Map<String, List<CellOp>> groups = new TreeMap<>();
        for (CellOp op : o.history()) {
            String phase = CellCheckers.phase(op, out).replace(" the outage", "");
            groups.computeIfAbsent(op.role() + "|" + op.kind() + "|" + phase, k -> new ArrayList<>()).add(op);
        }
        for (CellOp.Role role : CellOp.Role.values()) {
            for (CellOp.Kind kind : CellOp.Kind.values()) {
                for (String phase : List.of("before", "during", "after")) {
                    List<CellOp> ops = groups.get(role + "|" + kind + "|" + phase);
                    if (ops == null) {
                        continue;
                    }
                    Map<CellOp.Outcome, Integer> outcomes = new EnumMap<>(CellOp.Outcome.class);
                    ops.forEach(op -> outcomes.merge(op.outcome(), 1, Integer::sum));
                    long slowest = ops.stream().mapToLong(CellOp::millis).max().orElse(0);
                    b.append("| ").append(role).append(" | ").append(kind).append(" | ").append(phase).append(" | ")
                            .append(ops.size()).append(" | ").append(outcomes).append(" | ").append(slowest).append(" |\n");
                }
            }
        }

        b.append("\n## Slowest calls of the web-only clients\n\n```\n");
        o.history().stream().filter(op -> op.role() == CellOp.Role.WEB && op.kind() != CellOp.Kind.INCREMENT)
                .sorted(Comparator.comparingLong((CellOp op) -> op.millis() - op.waitMs()).reversed()).limit(8)
                .forEach(op -> b.append(op.describe(start)).append('\n'));
        b.append("```\n");

        b.append("\n## Gateway logs\n\nNot checked, shown: a gateway that logs in a loop (as Curator's retry of a "
                + "protected create can, recursing into a StackOverflowError) spends the machine's CPU on it.\n\n"
                + "| gateway | log | bytes | lines with StackOverflowError |\n|---|---|---:|---:|\n");
        for (GatewayProcess gw : cells.gateways()) {
            Path log = gw.process().log();
            long bytes = -1;
            long overflows = -1;
            try (var lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
                bytes = Files.size(log);
                overflows = lines.filter(line -> line.contains("StackOverflowError")).count();
            } catch (IOException | java.io.UncheckedIOException e) {
                // shown as -1
            }
            b.append("| ").append(gw.gatewayId()).append(" | ").append(log.getFileName()).append(" | ").append(bytes)
                    .append(" | ").append(overflows).append(" |\n");
        }

        CellCheckers.appendProblems(b, o.verdicts());
        return b.toString();
    }

    private static void row(StringBuilder b, String event, long t, long start) {
        b.append("| ").append(event).append(" | ").append(String.format("%.2f", (t - start) / 1e9)).append(" |\n");
    }
}
