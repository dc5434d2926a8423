package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.it.support.Await;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.WardenClient;
import io.warden.it.support.ZkEnsemble;
import java.io.BufferedWriter;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A namespace moved between cells under load, and back, with nothing lost and every token growing: a whole-system proof
 * with real processes. Two ZooKeeper ensembles of three servers (A, the default cell, and B, cell
 * {@value TwoCells#CELL_B}) and two gateways serving both, namespace {@value TwoCells#PAY} routed to B at first
 * ({@link TwoCells}); the {@link CellWorkload}'s clients over plain HTTP ({@link #MIX}): four use only namespace
 * {@value TwoCells#PAY} ({@value #PAY_LOCKS} locks), through gateway 1, gateway 2, or both in turn; three only
 * {@value TwoCells#WEB} (cell A throughout). Each takes locks, increments the lock's fenced counter under them
 * ({@link FencedRegister}) and keeps its session alive.
 *
 * <p>Before the gateways start, cell B's epoch is put above cell A's ({@link #putEpochAhead}), so that every zxid of
 * B, and so every token B gives in this run, is above every token of A: a move from B to A that did not raise A's token
 * floor would hand out tokens below the ones the namespace had. Then, {@link #BEFORE} into the
 * workload, {@code PUT /v1/namespaces/pay/cell {"cell":"default","deadline_ms":2000}} on gateway 1 moves it to A;
 * {@link #BETWEEN} after that move was answered, the same call with {@code "cell":"b"} on gateway 2 moves it back; the
 * workload goes on {@link #AFTER} more (until every pay client was granted again, at most {@link #AFTER_MAX}). After
 * each move the test looks into both ensembles ({@code /warden/locks/pay/...}, {@code /warden/routing}): the queue
 * entries of pay are in the new cell only.
 *
 * <p>{@link #aMoveUnderLoad_noViolation_tokensGrowAcrossIt}: the service's gateways, started with the default cell only
 * and given cell B while they run ({@code PUT /v1/cells/b} on gateway 1, which gateway 2 learns from the cell directory;
 * then pay moved to B before the workload); every checker must hold.
 * {@link #aMoveThatDoesNotRaiseTheFloor_isCaughtByTheFencingChecker}: the same run with gateways that move without
 * raising the new cell's token floor ({@link BrokenGateway.Bug#MOVE_WITHOUT_FLOOR_RAISE}): the fencing checker must
 * report the tokens of every pay lock going down across the first move, and the counters must have refused every
 * increment made under them (a checker never seen to fail proves nothing).
 *
 * <p>Reports, with the history ({@code history.jsonl}, one {@link CellOp} a line) and every process's log, in
 * {@code integration-tests/target/it-logs/cell-move*}/report.md.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CellMoveIT {
    static final Duration BEFORE = Duration.ofSeconds(8);
    static final Duration BETWEEN = Duration.ofSeconds(8);
    static final Duration AFTER = Duration.ofSeconds(8);
    static final Duration AFTER_MAX = Duration.ofSeconds(25);
    /** The moves' {@code deadline_ms}: holds of pay still in the old cell this long after the freeze are ended. */
    static final long DEADLINE_MS = 2000;
    static final int PAY_LOCKS = 3;
    /**
     * How soon after a move's reply each pay client must be granted again. At the flip a client is either in a call
     * (an acquire held by the router while the namespace was frozen goes on in the new cell with what is left of its
     * {@code wait_ms}, {@value CellWorkload#WAIT_MS} ms; an acquire whose wait ran out meanwhile is answered 503 and
     * sent again after 250 ms) or about to send one; that next acquire queues behind the other three pay clients' holds
     * (tens of milliseconds each: a read, a pause of up to 30 ms, a write) and is granted well within its own wait. Two
     * waits and a second of slack for a loaded 2-core machine: 5 s. Seen: under 0.3 s.
     */
    static final long REGRANT_BOUND_MS = 2 * CellWorkload.WAIT_MS + 1000;
    /** The node of each ensemble the test writes to learn its newest zxid: outside Warden's chroot. */
    static final String PROBE = "/cell-move-it-probe";
    /** How long, after each move, the test samples where pay's queue entries are (and at least until one is seen). */
    static final Duration PLACEMENT_SAMPLING = Duration.ofSeconds(2);
    static final Duration PLACEMENT_MAX = Duration.ofSeconds(10);

    /** Four pay clients (gateway 1, gateway 2, both in turn, gateway 2), three web clients as in the quorum loss run. */
    static final List<CellWorkload.ClientSpec> MIX = List.of(
            new CellWorkload.ClientSpec("web-1", CellOp.Role.WEB, 0),
            new CellWorkload.ClientSpec("web-2", CellOp.Role.WEB, 1),
            new CellWorkload.ClientSpec("web-3", CellOp.Role.WEB, -1),
            new CellWorkload.ClientSpec("pay-1", CellOp.Role.PAY, 0),
            new CellWorkload.ClientSpec("pay-2", CellOp.Role.PAY, 1),
            new CellWorkload.ClientSpec("pay-3", CellOp.Role.PAY, -1),
            new CellWorkload.ClientSpec("pay-4", CellOp.Role.PAY, 1));

    private static final HttpClient HTTP = WardenClient.newHttpClient();

    /** A cell's newest zxid (that of a write of {@link #PROBE}) and its token floor now: the token a node made now gets. */
    record TokenNow(long zxid, long floor, long at) {
        long token() {
            return zxid + floor;
        }

        long epoch() {
            return zxid >>> 32;
        }

        String describe() {
            return String.format("zxid 0x%x (epoch %d, counter %d), floor %d, token %d", zxid, epoch(),
                    zxid & 0xffffffffL, floor, token());
        }
    }

    /** How B's epoch was put above A's: the cells' tokens before and after, and the restarts of B's leader it took. */
    record EpochBump(TokenNow aBefore, TokenNow bBefore, TokenNow aAfter, TokenNow bAfter, int leaderRestarts,
                     long millis) {
    }

    /** One move as the test asked for it and was answered: its status (0 without an answer), reply body, error. */
    record MoveCall(CellCheckers.Move move, int gateway, int status, JsonNode reply, String error, TokenNow aBefore,
                    TokenNow bBefore) {
        int forced() {
            return reply.path("forced").asInt(-1);
        }

        /** The new cell's raised floor, or null when the reply has none (its tokens were above already, or not raised). */
        Long floor() {
            return reply.path("floor").isNumber() ? reply.path("floor").asLong() : null;
        }

        long tookMs() {
            return reply.path("took_ms").asLong(-1);
        }

        long millis() {
            return TimeUnit.NANOSECONDS.toMillis(move.ret() - move.call());
        }
    }

    /**
     * Where pay's queue entries were seen after a move (or before the first): samples of both ensembles from the move's
     * reply for {@link #PLACEMENT_SAMPLING} (and until one was seen in the serving cell, at most {@link #PLACEMENT_MAX}),
     * the most entries one sample found in each cell, when the serving cell's first was seen, and each cell's routes.
     */
    record Placement(String label, String serving, String other, int samples, int maxServing, int maxOther,
                     long firstSeenNanos, Map<String, String> routes, List<String> problems) {
    }

    /** What one run found. */
    record Outcome(String run, String bug, List<CellOp> history, Map<String, FencedRegister.Summary> counters,
                   List<MoveCall> moves, List<Placement> placements, EpochBump epochs, TokenNow aEnd, TokenNow bEnd, long start,
                   long end, List<CellCheckers.Verdict> verdicts, List<String> failures, Path report) {
        CellCheckers.Verdict verdict(String prefix) {
            return verdicts.stream().filter(v -> v.name().startsWith(prefix)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no checker " + prefix + " in " + run));
        }

        MoveCall move(int n) {
            return moves.get(n - 1);
        }

        long count(CellOp.Role role, CellOp.Kind kind, CellOp.Outcome outcome) {
            return history.stream().filter(op -> op.role() == role && op.kind() == kind && op.outcome() == outcome).count();
        }
    }

    /** The contract's gateways: pay moved to A and back under load, with nothing lost and tokens growing throughout. */
    @Test
    void aMoveUnderLoad_noViolation_tokensGrowAcrossIt() throws Exception {
        Outcome o = run("cell-move", null, Long.getLong("cells.seed", 21));
        assertThat(o.failures()).as("the workload's own failures; report %s", o.report()).isEmpty();
        assertMovesAnswered(o);
        for (CellCheckers.Verdict v : o.verdicts()) {
            assertThat(v.problems()).as("checker %s; report %s", v.name(), o.report()).isEmpty();
        }
        // The raise was needed: without it A's tokens would have been below B's (the first move raised A's floor).
        assertThat(o.move(1).bBefore().token()).as("B's token above A's before the first move; report %s", o.report())
                .isGreaterThan(o.move(1).aBefore().token());
        assertThat(o.move(1).floor()).as("the first move raised the default cell's floor; report %s", o.report())
                .isNotNull().isGreaterThan(0L);
        // not vacuous: grants of pay before, between and after the moves, increments acknowledged on every lock
        for (int phase = 0; phase < 3; phase++) {
            assertThat(payGrants(o, phase)).as("pay grants in phase %d; report %s", phase, o.report()).isGreaterThan(10);
        }
        assertThat(o.count(CellOp.Role.WEB, CellOp.Kind.ACQUIRE, CellOp.Outcome.OK)).as("web grants").isGreaterThan(30);
        assertThat(o.counters().values()).as("every lock's counter was incremented; report %s", o.report())
                .allMatch(c -> c.acknowledged() > 10);
    }

    /**
     * The fencing checker shown failing by construction: gateways whose moves skip the floor raise. Pay moves from B
     * (whose tokens are far above A's) to A: the grants of pay in A have tokens below those it had in B. What the
     * checkers see, exactly: the fencing checker reports, for every pay lock, a grant whose token did not grow over an
     * earlier grant (no lost update: the fenced counter refuses a read under a token below its fence, so every increment
     * made under A's tokens was refused, which the clients saw as FENCED "read refused"); checker 5 reports every pay
     * lock's tokens going down across the first move and none across the second (B's zxids are above A's, so moving
     * back to B makes them grow again, floor or not); the web locks, the other checkers and the moves themselves are
     * unaffected.
     */
    @Test
    void aMoveThatDoesNotRaiseTheFloor_isCaughtByTheFencingChecker() throws Exception {
        Outcome o = run("cell-move-without-floor-raise", BrokenGateway.Bug.MOVE_WITHOUT_FLOOR_RAISE.name(),
                Long.getLong("cells.seed", 22));
        assertThat(o.failures()).as("the workload's own failures; report %s", o.report()).isEmpty();
        assertMovesAnswered(o);
        assertThat(o.moves()).as("no move raised a floor; report %s", o.report()).allMatch(m -> m.floor() == null);
        assertThat(o.move(1).bBefore().token()).as("B's token above A's before the first move; report %s", o.report())
                .isGreaterThan(o.move(1).aBefore().token());

        List<String> fencing = o.verdict("1.").problems();
        List<String> payLocks = new ArrayList<>();
        for (int l = 0; l < PAY_LOCKS; l++) {
            payLocks.add(CellWorkload.lock(TwoCells.PAY, l));
        }
        for (String lock : payLocks) {
            assertThat(fencing).as("the fencing checker names %s; report %s", lock, o.report())
                    .anyMatch(p -> p.startsWith("lock " + lock + ": token did not grow: "));
        }
        // Nothing else: only pay locks' tokens going down (no lost update, no token granted twice, web untouched).
        assertThat(fencing).as("every fencing problem is a pay lock's token that did not grow; report %s", o.report())
                .allMatch(p -> p.startsWith("lock " + TwoCells.PAY + "/") && (p.contains(": token did not grow: ")
                        || p.contains(" more pairs whose token did not grow")));
        // Which cell made a grant shows in its token: every node B makes in this run is above B's token before the
        // gateways started (B's floor is never raised here), every node A makes is below it (an epoch below).
        long bFrom = o.epochs().bAfter().token();
        assertThat(o.aEnd().token()).as("A's tokens stayed below every token of B; report %s", o.report())
                .isLessThan(bFrom);
        CellCheckers.Move m1 = o.move(1).move();
        CellCheckers.Move m2 = o.move(2).move();
        List<CellOp> inA = o.history().stream().filter(op -> op.kind() == CellOp.Kind.ACQUIRE
                && op.outcome() == CellOp.Outcome.OK && TwoCells.PAY.equals(op.namespace()) && op.token() < bFrom).toList();
        assertThat(inA).as("pay grants made in A; report %s", o.report()).isNotEmpty()
                .allMatch(g -> g.ret() > m1.call() && g.call() < m2.ret());
        // The grants whose token did not grow are exactly those made in A (each below the grants B made before).
        assertThat(payGrantsBelowEarlierOnes(o.history())).as("pay grants below an earlier one; report %s", o.report())
                .containsExactlyInAnyOrderElementsOf(inA);
        assertThat(o.counters()).as("no lost update: each counter at its acknowledged increments; report %s", o.report())
                .allSatisfy((lock, c) -> assertThat(c.ok()).as(lock).isTrue());

        List<String> across = o.verdict("5.").problems();
        for (String lock : payLocks) {
            assertThat(across).as("checker 5 names %s across the first move; report %s", lock, o.report())
                    .anyMatch(p -> p.startsWith("lock " + lock + ": token went down across move 1 (b -> default): "));
        }
        assertThat(across).as("checker 5: the first move only, each pay lock once; report %s", o.report())
                .hasSize(PAY_LOCKS).allMatch(p -> p.contains(" across move 1 (b -> default): "));

        // What the clients saw: every increment under a token of A refused by the fence (its read: the fence is at a
        // token of B since the first grants), and increments accepted again after the second move.
        for (String lock : payLocks) {
            List<CellOp> underA = o.history().stream().filter(op -> op.kind() == CellOp.Kind.INCREMENT
                    && lock.equals(op.lock()) && op.token() < bFrom).toList();
            assertThat(underA).as("increments of %s under a token of A; report %s", lock, o.report()).isNotEmpty()
                    .allMatch(op -> op.outcome() == CellOp.Outcome.FENCED && "read refused".equals(op.detail()));
            assertThat(o.history()).as("increments of %s accepted after the second move; report %s", lock, o.report())
                    .anyMatch(op -> op.kind() == CellOp.Kind.INCREMENT && lock.equals(op.lock())
                            && op.call() > m2.ret() && op.outcome() == CellOp.Outcome.OK);
        }
        // The bug is in the tokens only: the other checkers hold.
        for (String other : List.of("2.", "6.", "7.", "8.")) {
            assertThat(o.verdict(other).problems()).as("checker %s; report %s", o.verdict(other).name(), o.report())
                    .isEmpty();
        }
    }

    /** Both moves answered 200, the first from b to default, the second back. */
    private static void assertMovesAnswered(Outcome o) {
        assertThat(o.moves()).as("moves; report %s", o.report()).hasSize(2);
        assertThat(o.move(1).status()).as("move 1's status; report %s", o.report()).isEqualTo(200);
        assertThat(o.move(1).reply().path("from").asText()).isEqualTo(TwoCells.CELL_B);
        assertThat(o.move(1).reply().path("to").asText()).isEqualTo("default");
        assertThat(o.move(2).status()).as("move 2's status; report %s", o.report()).isEqualTo(200);
        assertThat(o.move(2).reply().path("from").asText()).isEqualTo("default");
        assertThat(o.move(2).reply().path("to").asText()).isEqualTo(TwoCells.CELL_B);
    }

    /** Grants of pay in phase 0 (answered before move 1 was asked), 1 (sent after it, answered before move 2) or 2. */
    private static long payGrants(Outcome o, int phase) {
        CellCheckers.Move m1 = o.move(1).move();
        CellCheckers.Move m2 = o.move(2).move();
        return o.history().stream().filter(op -> op.kind() == CellOp.Kind.ACQUIRE && op.outcome() == CellOp.Outcome.OK
                && TwoCells.PAY.equals(op.namespace())).filter(op -> switch (phase) {
                    case 0 -> op.ret() < m1.call();
                    case 1 -> op.call() > m1.ret() && op.ret() < m2.call();
                    default -> op.call() > m2.ret();
                }).count();
    }

    /**
     * The grants of pay with a token at most that of a grant of the same lock answered before they were sent (each
     * retry of a request counts from its first send, as in the fencing checker).
     */
    private static List<CellOp> payGrantsBelowEarlierOnes(List<CellOp> history) {
        Map<String, Long> firstCall = new java.util.HashMap<>();
        for (CellOp op : history) {
            if (op.kind() == CellOp.Kind.ACQUIRE) {
                firstCall.merge(op.session() + " " + op.requestId(), op.call(), Math::min);
            }
        }
        List<CellOp> grants = history.stream().filter(op -> op.kind() == CellOp.Kind.ACQUIRE
                && op.outcome() == CellOp.Outcome.OK && TwoCells.PAY.equals(op.namespace())).toList();
        List<CellOp> out = new ArrayList<>();
        for (CellOp g : grants) {
            long sent = firstCall.get(g.session() + " " + g.requestId());
            if (grants.stream().anyMatch(b -> b.lock().equals(g.lock()) && b.ret() < sent && b.token() >= g.token())) {
                out.add(g);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ the run

    private static Outcome run(String run, String bug, long seed) throws Exception {
        AtomicReference<EpochBump> bump = new AtomicReference<>();
        // The service's gateways are given cell B while they run (the API's way); the broken ones by their settings.
        try (TwoCells cells = TwoCells.start(run, 2, bug, (a, b) -> bump.set(putEpochAhead(a, b)), bug == null);
             CuratorFramework zkA = curator(cells.a);
             CuratorFramework zkB = curator(cells.b)) {
            Path dir = cells.launcher.logDir();
            EpochBump epochs = bump.get();
            CellWorkload workload = new CellWorkload(cells.endpoints(), seed, MIX, PAY_LOCKS);
            List<MoveCall> moves = new ArrayList<>();
            List<Placement> placements = new ArrayList<>();
            long start = System.nanoTime();
            workload.start();
            try {
                placements.add(placement(zkA, zkB, "before the moves", TwoCells.CELL_B, start));
                sleepUntil(start + BEFORE.toNanos());
                moves.add(move(cells, zkA, zkB, 0, TwoCells.CELL_B, "default"));
                placements.add(placement(zkA, zkB, "after move 1", "default", moves.get(0).move().ret()));
                sleepUntil(moves.get(0).move().ret() + BETWEEN.toNanos());
                moves.add(move(cells, zkA, zkB, 1, "default", TwoCells.CELL_B));
                long back = moves.get(1).move().ret();
                placements.add(placement(zkA, zkB, "after move 2", TwoCells.CELL_B, back));
                // on until every pay client was granted again (what checker 6 looks for), within bounds
                Await.until("the workload's end", AFTER_MAX.plusSeconds(30), Duration.ofMillis(200), () -> {
                    long now = System.nanoTime();
                    return now - (back + AFTER_MAX.toNanos()) >= 0 || now - (back + AFTER.toNanos()) >= 0
                            && workload.everyClientGrantedSince(back, CellOp.Role.PAY);
                });
            } finally {
                workload.stop(Duration.ofSeconds(30));
            }
            long end = System.nanoTime();
            TokenNow aEnd = tokenNow(zkA);
            TokenNow bEnd = tokenNow(zkB);
            List<CellOp> history = workload.history();
            Map<String, FencedRegister.Summary> counters = workload.counters();
            List<CellCheckers.Move> asked = moves.stream().map(MoveCall::move).toList();
            List<CellCheckers.Verdict> verdicts = new ArrayList<>();
            verdicts.add(CellCheckers.fencing(history, counters, start));
            verdicts.add(CellCheckers.untouched(history, CellOp.Role.WEB, asked.get(0).call(),
                    asked.get(asked.size() - 1).ret(), "the moves", start));
            verdicts.add(CellCheckers.tokensAcrossMoves(history, TwoCells.PAY, asked, start));
            verdicts.add(CellCheckers.regrantedAfterMoves(history, TwoCells.PAY, CellOp.Role.PAY, asked,
                    TimeUnit.MILLISECONDS.toNanos(REGRANT_BOUND_MS), start));
            verdicts.add(placementVerdict(placements));
            verdicts.add(moveVerdict(moves));
            writeHistory(dir.resolve("history.jsonl"), history);
            Path report = dir.resolve("report.md");
            Outcome outcome = new Outcome(run, bug, history, counters, moves, placements, epochs, aEnd, bEnd, start, end,
                    verdicts, workload.failures(), report);
            Files.writeString(report, report(outcome, cells));
            System.out.println(run + ": report " + report);
            return outcome;
        }
    }

    private static CuratorFramework curator(ZkEnsemble zk) {
        CuratorFramework c = CuratorFrameworkFactory.newClient(zk.connectString(), 15_000, 5_000,
                new ExponentialBackoffRetry(100, 5, 1000));
        c.start();
        return c;
    }

    private static void sleepUntil(long nanoTime) {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Await.sleepQuietly(Duration.ofNanos(left));
        }
    }

    // ------------------------------------------------------------------ tokens

    /** The token a node made now in the cell would get: the zxid of a write of {@link #PROBE}, plus the latest floor. */
    static TokenNow tokenNow(CuratorFramework zk) throws Exception {
        Stat stat;
        try {
            stat = zk.setData().forPath(PROBE, new byte[0]);
        } catch (KeeperException.NoNodeException e) {
            zk.create().orSetData().forPath(PROBE, new byte[0]);
            stat = zk.setData().forPath(PROBE, new byte[0]);
        }
        long floor = 0;
        try {
            for (String child : zk.getChildren().forPath("/warden/token-floor")) {
                if (child.startsWith("floor-")) {
                    floor = Math.max(floor, Long.parseLong(child.substring("floor-".length())));
                }
            }
        } catch (KeeperException.NoNodeException e) {
            // no raise yet
        }
        return new TokenNow(stat.getMzxid(), floor, System.nanoTime());
    }

    /**
     * Puts cell B's epoch above cell A's, before the gateways start: every zxid of B from then on is above every zxid A
     * will ever have in this run (the epoch is a zxid's upper 32 bits), however fast A grows, and neither cell has a
     * floor yet. Each election is a new epoch: B's leader is killed and started again (the other two elect a new one)
     * until B's epoch is above. Two fresh ensembles may start with equal epochs or either one ahead (each election
     * while they form a quorum is one more), so this takes no restart, one, or two. Writes on B would do as well within
     * one epoch, but only by more than A grows in the run, which depends on the machine's speed.
     */
    static EpochBump putEpochAhead(ZkEnsemble a, ZkEnsemble b) {
        long t0 = System.nanoTime();
        try (CuratorFramework zkA = curator(a); CuratorFramework zkB = curator(b)) {
            TokenNow aBefore = tokenNow(zkA);
            TokenNow bBefore = tokenNow(zkB);
            int restarts = 0;
            while (tokenNow(zkB).epoch() <= tokenNow(zkA).epoch()) {
                if (++restarts > 5) {
                    throw new IllegalStateException("cell b's epoch still not above cell a's after 5 restarts of its "
                            + "leader: b " + tokenNow(zkB).describe() + ", a " + tokenNow(zkA).describe());
                }
                int leader = b.killLeader(Duration.ofSeconds(30));
                b.restart(leader);
                b.awaitQuorum(Duration.ofSeconds(60));
                Await.until("cell b writable again", Duration.ofSeconds(30), Duration.ofMillis(100), () -> {
                    try {
                        tokenNow(zkB);
                        return true;
                    } catch (Exception e) {
                        return false;
                    }
                });
            }
            return new EpochBump(aBefore, bBefore, tokenNow(zkA), tokenNow(zkB), restarts,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        } catch (Exception e) {
            throw new IllegalStateException("cannot put cell b's epoch above cell a's", e);
        }
    }

    // ------------------------------------------------------------------ moves

    /** {@code PUT /v1/namespaces/pay/cell} on gateway {@code gw}, with the cells' tokens read just before. */
    private static MoveCall move(TwoCells cells, CuratorFramework zkA, CuratorFramework zkB, int gw, String from,
                                 String to) throws Exception {
        TokenNow aBefore = tokenNow(zkA);
        TokenNow bBefore = tokenNow(zkB);
        String body = WardenClient.JSON.createObjectNode().put("cell", to).put("deadline_ms", DEADLINE_MS).toString();
        HttpRequest request = HttpRequest.newBuilder(cells.endpoints().get(gw).resolve("/v1/namespaces/" + TwoCells.PAY
                        + "/cell")).timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .header("Accept", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)).build();
        long call = System.nanoTime();
        int status = 0;
        JsonNode reply = WardenClient.JSON.createObjectNode();
        String error = null;
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            status = response.statusCode();
            reply = response.body() == null || response.body().isBlank() ? reply
                    : WardenClient.JSON.readTree(response.body());
        } catch (IOException e) {
            error = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        long ret = System.nanoTime();
        MoveCall m = new MoveCall(new CellCheckers.Move(TwoCells.PAY, from, to, call, ret), gw, status, reply, error,
                aBefore, bBefore);
        System.out.println("move of " + TwoCells.PAY + " " + from + " -> " + to + " on gw" + (gw + 1) + ": " + status
                + " " + reply + (error == null ? "" : " " + error) + " in " + m.millis() + " ms");
        return m;
    }

    /** Verdict 8: each move answered 200 with the cells asked for, and a count of ended holds. */
    private static CellCheckers.Verdict moveVerdict(List<MoveCall> moves) {
        List<String> problems = new ArrayList<>();
        List<String> shown = new ArrayList<>();
        for (int m = 0; m < moves.size(); m++) {
            MoveCall c = moves.get(m);
            String which = "move " + (m + 1) + " (" + c.move().describe() + ", gw" + (c.gateway() + 1) + ")";
            if (c.status() != 200) {
                problems.add(which + " answered " + c.status() + " " + c.reply() + (c.error() == null ? "" : " " + c.error()));
                continue;
            }
            if (!c.move().from().equals(c.reply().path("from").asText()) || !c.move().to().equals(c.reply().path("to")
                    .asText()) || !TwoCells.PAY.equals(c.reply().path("namespace").asText())) {
                problems.add(which + " answered another namespace or cells: " + c.reply());
            }
            if (c.forced() < 0 || c.tookMs() < 0) {
                problems.add(which + " has no forced or took_ms: " + c.reply());
            }
            shown.add(which + ": " + c.reply() + " in " + c.millis() + " ms");
        }
        return new CellCheckers.Verdict("8. each move answered 200 with its cells", problems, String.join("; ", shown));
    }

    // ------------------------------------------------------------------ where pay's entries are

    /**
     * Samples both ensembles from {@code from} on (after a sync of each, so that nothing written before is missed):
     * pay's queue entries must be in cell {@code serving} only (the other one's may still have pay's empty lock nodes,
     * containers ZooKeeper removes in its own time, never an entry), and the routes say so.
     */
    private static Placement placement(CuratorFramework zkA, CuratorFramework zkB, String label, String serving,
                                       long from) throws Exception {
        CuratorFramework in = serving.equals("default") ? zkA : zkB;
        CuratorFramework out = serving.equals("default") ? zkB : zkA;
        String other = serving.equals("default") ? TwoCells.CELL_B : "default";
        sync(zkA);
        sync(zkB);
        List<String> problems = new ArrayList<>();
        int samples = 0;
        int maxIn = 0;
        int maxOut = 0;
        long firstSeen = -1;
        long until = from + PLACEMENT_SAMPLING.toNanos();
        long most = from + PLACEMENT_MAX.toNanos();
        while (true) {
            long now = System.nanoTime();
            if (now - most >= 0 || now - until >= 0 && firstSeen >= 0) {
                break;
            }
            List<String> outEntries = entries(out);
            int inCount = entries(in).size();
            samples++;
            maxIn = Math.max(maxIn, inCount);
            maxOut = Math.max(maxOut, outEntries.size());
            if (inCount > 0 && firstSeen < 0) {
                firstSeen = System.nanoTime() - from;
            }
            if (!outEntries.isEmpty() && problems.size() < 10) {
                problems.add(label + ": queue entries of " + TwoCells.PAY + " in cell " + other + ", which no longer "
                        + "serves it: " + outEntries);
            }
            Await.sleepQuietly(Duration.ofMillis(20));
        }
        if (firstSeen < 0) {
            problems.add(label + ": no queue entry of " + TwoCells.PAY + " seen in cell " + serving + " within "
                    + PLACEMENT_MAX.toSeconds() + " s (" + samples + " samples)");
        }
        Map<String, String> routes = new LinkedHashMap<>();
        routes.put("default", routing(zkA));
        routes.put(TwoCells.CELL_B, routing(zkB));
        JsonNode a = WardenClient.JSON.readTree(routes.get("default"));
        JsonNode b = WardenClient.JSON.readTree(routes.get(TwoCells.CELL_B));
        boolean inB = serving.equals(TwoCells.CELL_B);
        if (contains(a.path("away"), TwoCells.PAY) != inB || contains(b.path("serves"), TwoCells.PAY) != inB
                || a.path("moving").has(TwoCells.PAY) || b.path("moving").has(TwoCells.PAY)) {
            problems.add(label + ": the routes do not say cell " + serving + " serves " + TwoCells.PAY + " (and no move "
                    + "is under way): " + routes);
        }
        return new Placement(label, serving, other, samples, maxIn, maxOut, firstSeen, routes, problems);
    }

    /** Verdict 7: pay's queue entries were seen in the serving cell only, before the moves and after each. */
    private static CellCheckers.Verdict placementVerdict(List<Placement> placements) {
        List<String> problems = new ArrayList<>();
        List<String> shown = new ArrayList<>();
        for (Placement p : placements) {
            problems.addAll(p.problems());
            shown.add(String.format("%s: %d samples, at most %d entries in %s (the first %s), at most %d in %s",
                    p.label(), p.samples(), p.maxServing(), p.serving(), p.firstSeenNanos() < 0 ? "never"
                            : String.format("%.2f s in", p.firstSeenNanos() / 1e9), p.maxOther(), p.other()));
        }
        return new CellCheckers.Verdict("7. queue entries of " + TwoCells.PAY + " in the serving cell only", problems,
                String.join("; ", shown));
    }

    /** Every queue entry of pay in the cell: {@code /warden/locks/pay/{shard}/{leaf}/{entry}}, as {@code leaf/entry}. */
    private static List<String> entries(CuratorFramework zk) throws Exception {
        String root = "/warden/locks/" + TwoCells.PAY;
        List<String> out = new ArrayList<>();
        for (String shard : children(zk, root)) {
            for (String leaf : children(zk, root + "/" + shard)) {
                for (String entry : children(zk, root + "/" + shard + "/" + leaf)) {
                    out.add(leaf + "/" + entry);
                }
            }
        }
        return out;
    }

    private static List<String> children(CuratorFramework zk, String path) throws Exception {
        try {
            return zk.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of(); // gone meanwhile (a container removed, an entry released)
        }
    }

    private static String routing(CuratorFramework zk) throws Exception {
        try {
            byte[] data = zk.getData().forPath("/warden/routing");
            return data == null || data.length == 0 ? "{}" : new String(data, StandardCharsets.UTF_8);
        } catch (KeeperException.NoNodeException e) {
            return "{}";
        }
    }

    private static boolean contains(JsonNode array, String value) {
        for (JsonNode n : array) {
            if (value.equals(n.asText())) {
                return true;
            }
        }
        return false;
    }

    /** A sync of the client's server with the leader: what it reads next includes every write made before. */
    private static void sync(CuratorFramework zk) throws Exception {
        CountDownLatch synced = new CountDownLatch(1);
        zk.sync().inBackground((client, event) -> synced.countDown()).forPath("/");
        if (!synced.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no answer to a sync within 30 s");
        }
    }

    // ------------------------------------------------------------------ report

    private static void writeHistory(Path file, List<CellOp> history) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (CellOp op : history) {
                out.write(WardenClient.JSON.writeValueAsString(op));
                out.newLine();
            }
        }
    }

    /** The phase of a call: before move 1, during it, between the moves, during move 2, after it. */
    private static String phase(CellOp op, List<MoveCall> moves) {
        CellCheckers.Move m1 = moves.get(0).move();
        CellCheckers.Move m2 = moves.get(1).move();
        if (op.ret() < m1.call()) {
            return "1 before move 1";
        }
        if (op.call() <= m1.ret()) {
            return "2 during move 1";
        }
        if (op.ret() < m2.call()) {
            return "3 between the moves";
        }
        if (op.call() <= m2.ret()) {
            return "4 during move 2";
        }
        return "5 after move 2";
    }

    private static String report(Outcome o, TwoCells cells) {
        long start = o.start();
        StringBuilder b = new StringBuilder();
        b.append("# Cell move `").append(o.run()).append("`\n\n");
        b.append("Two ZooKeeper ensembles of three servers: A (cell `default`, `--zk`) and B (cell `")
                .append(TwoCells.CELL_B).append(o.bug() == null ? "`, added while the gateways ran: `PUT /v1/cells/b` on "
                        + "gw1, served by gw2 from the cell directory, then `pay` moved to it), namespace `"
                        : "`, `--cells`), namespace `").append(TwoCells.PAY)
                .append("` on B at first; ").append(cells.gateways().size()).append(" gateways serving both. ")
                .append("Clients over plain HTTP, one attempt per call: ");
        for (CellWorkload.ClientSpec c : MIX) {
            b.append('`').append(c.name()).append("` (").append(c.gateway() < 0 ? "both gateways in turn"
                    : "gw" + (c.gateway() + 1)).append("), ");
        }
        b.append("session TTL ").append(CellWorkload.TTL_MS).append(" ms, `wait_ms` ").append(CellWorkload.WAIT_MS)
                .append(", ").append(PAY_LOCKS).append(" pay locks and ").append(CellWorkload.LOCKS)
                .append(" web locks, each with a fenced counter. `PUT /v1/namespaces/pay/cell` with `deadline_ms` ")
                .append(DEADLINE_MS).append(": to `default` ").append(BEFORE.toSeconds()).append(" s into the workload, ")
                .append("back to `b` ").append(BETWEEN.toSeconds()).append(" s after that was answered.");
        if (o.bug() != null) {
            b.append(" **Gateways with the deliberate bug `").append(o.bug()).append("`: the fencing checker is expected "
                    + "to report pay's tokens going down across the first move** (the checker shown failing).");
        }
        b.append(" Gateways: `").append(o.bug() == null ? GatewayProcess.serviceJar().toString()
                : BrokenGateway.class.getName() + " on the test classpath").append("` (service jar built ")
                .append(GatewayProcess.serviceJarTime()).append(").\n\n");

        EpochBump epochs = o.epochs();
        b.append("## Tokens of the cells\n\nThe token a node made now would get (newest zxid plus the latest floor), read "
                + "by a write of `").append(PROBE).append("` on each ensemble. Before the gateways started, B's epoch was "
                + "put above A's: ").append(epochs.leaderRestarts() == 0 ? "nothing to do, it was above already"
                : epochs.leaderRestarts() + (epochs.leaderRestarts() == 1 ? " restart" : " restarts") + " of B's leader").append(", in ").append(epochs.millis())
                .append(" ms.\n\n| when | cell A (default) | cell B |\n|---|---|---|\n");
        tokenRow(b, "before the gateways started", epochs.aBefore(), epochs.bBefore());
        tokenRow(b, "B's epoch above A's", epochs.aAfter(), epochs.bAfter());
        for (int m = 0; m < o.moves().size(); m++) {
            tokenRow(b, "before move " + (m + 1), o.moves().get(m).aBefore(), o.moves().get(m).bBefore());
        }
        tokenRow(b, "end", o.aEnd(), o.bEnd());
        double seconds = (o.aEnd().at() - epochs.aAfter().at()) / 1e9;
        b.append(String.format("%nA grew by %d zxids in %.1f s (%.0f a second), B by %d.%n",
                o.aEnd().zxid() - epochs.aAfter().zxid(), seconds, (o.aEnd().zxid() - epochs.aAfter().zxid()) / seconds,
                o.bEnd().zxid() - epochs.bAfter().zxid()));

        b.append("\n## Timeline\n\nSeconds from the workload's start.\n\n| event | s |\n|---|---:|\n");
        for (int m = 0; m < o.moves().size(); m++) {
            MoveCall c = o.moves().get(m);
            row(b, "move " + (m + 1) + " (" + c.move().describe() + ") asked on gw" + (c.gateway() + 1), c.move().call(),
                    start);
            row(b, "move " + (m + 1) + " answered " + c.status(), c.move().ret(), start);
        }
        row(b, "workload stopped", o.end(), start);

        b.append("\n## Moves\n\n| move | gateway | status | from | to | forced | floor | took_ms | call ms | reply |\n"
                + "|---|---|---:|---|---|---:|---:|---:|---:|---|\n");
        for (int m = 0; m < o.moves().size(); m++) {
            MoveCall c = o.moves().get(m);
            b.append("| ").append(m + 1).append(" | gw").append(c.gateway() + 1).append(" | ").append(c.status())
                    .append(" | ").append(c.reply().path("from").asText("-")).append(" | ")
                    .append(c.reply().path("to").asText("-")).append(" | ").append(c.forced()).append(" | ")
                    .append(c.floor() == null ? "none" : c.floor().toString()).append(" | ").append(c.tookMs())
                    .append(" | ").append(c.millis()).append(" | `").append(c.reply()).append(c.error() == null ? ""
                            : " " + c.error()).append("` |\n");
        }
        b.append("\nWhat the gateways logged of them:\n\n```\n");
        for (GatewayProcess gw : cells.gateways()) {
            try (var lines = Files.lines(gw.process().log(), StandardCharsets.ISO_8859_1)) {
                lines.filter(line -> line.contains("moving namespace") || line.contains("moved namespace")
                        || line.contains("CellMoves")).limit(20).forEach(line -> b.append(gw.gatewayId()).append(": ")
                        .append(line.length() > 300 ? line.substring(0, 300) + "..." : line).append('\n'));
            } catch (IOException | java.io.UncheckedIOException e) {
                b.append(gw.gatewayId()).append(": log not readable: ").append(e).append('\n');
            }
        }
        b.append("```\n");

        b.append("\n## Where pay's queue entries were\n\n| when | samples | most in the serving cell | first seen | most in "
                + "the other | routes |\n|---|---:|---|---|---|---|\n");
        for (Placement p : o.placements()) {
            b.append("| ").append(p.label()).append(" | ").append(p.samples()).append(" | ").append(p.maxServing())
                    .append(" in ").append(p.serving()).append(" | ").append(p.firstSeenNanos() < 0 ? "never"
                            : String.format("%.2f s", p.firstSeenNanos() / 1e9)).append(" | ").append(p.maxOther())
                    .append(" in ").append(p.other()).append(" | `").append(p.routes()).append("` |\n");
        }

        b.append("\n## Verdicts\n\n| checker | verdict | detail |\n|---|---|---|\n");
        for (CellCheckers.Verdict v : o.verdicts()) {
            b.append("| ").append(v.name()).append(" | ").append(v.ok() ? "ok" : "**PROBLEMS (" + v.problems().size() + ")**")
                    .append(" | ").append(v.summary().replace("|", "/")).append(" |\n");
        }
        if (!o.failures().isEmpty()) {
            b.append("\n**The workload itself failed** (the history is incomplete): ").append(o.failures()).append("\n");
        }

        b.append("\n## Calls by role, kind and phase\n\nBefore move 1: answered before it was asked; during a move: under "
                + "way at some moment from its call to its reply; between and after: sent after a reply. Counts by "
                + "outcome.\n\n| role | kind | phase | calls | outcomes | slowest ms |\n|---|---|---|---:|---|---:|\n");
        Map<String, List<CellOp>> groups = new TreeMap<>();
        for (CellOp op : o.history()) {
            groups.computeIfAbsent(op.role() + "|" + op.kind() + "|" + phase(op, o.moves()), k -> new ArrayList<>()).add(op);
        }
        groups.forEach((key, ops) -> {
            String[] parts = key.split("\\|");
            Map<CellOp.Outcome, Integer> outcomes = new EnumMap<>(CellOp.Outcome.class);
            ops.forEach(op -> outcomes.merge(op.outcome(), 1, Integer::sum));
            long slowest = ops.stream().mapToLong(CellOp::millis).max().orElse(0);
            b.append("| ").append(parts[0]).append(" | ").append(parts[1]).append(" | ").append(parts[2].substring(2))
                    .append(" | ").append(ops.size()).append(" | ").append(outcomes).append(" | ").append(slowest)
                    .append(" |\n");
        });

        b.append("\n## Grants of pay around each move\n\nThe last grants answered before the move was asked and the first "
                + "sent after its reply, per lock.\n\n```\n");
        for (int m = 0; m < o.moves().size(); m++) {
            CellCheckers.Move move = o.moves().get(m).move();
            b.append("move ").append(m + 1).append(" (").append(move.describe()).append(")\n");
            for (int l = 0; l < PAY_LOCKS; l++) {
                String lock = CellWorkload.lock(TwoCells.PAY, l);
                List<CellOp> grants = o.history().stream().filter(op -> op.kind() == CellOp.Kind.ACQUIRE
                        && op.outcome() == CellOp.Outcome.OK && lock.equals(op.lock())).toList();
                List<CellOp> before = grants.stream().filter(op -> op.ret() < move.call()).toList();
                before.subList(Math.max(0, before.size() - 2), before.size())
                        .forEach(op -> b.append("  before ").append(op.describe(start)).append('\n'));
                grants.stream().filter(op -> op.call() > move.ret()).limit(2)
                        .forEach(op -> b.append("  after  ").append(op.describe(start)).append('\n'));
            }
        }
        b.append("```\n");

        b.append("\n## Fenced counters\n\n| lock | value | acknowledged | refused reads | refused writes |\n"
                + "|---|---:|---:|---:|---:|\n");
        o.counters().forEach((lock, c) -> b.append("| ").append(lock).append(" | ").append(c.value()).append(" | ")
                .append(c.acknowledged()).append(" | ").append(c.refusedReads()).append(" | ").append(c.refusedWrites())
                .append(" |\n"));

        b.append("\n## Gateway logs\n\n| gateway | log | bytes | WARN or ERROR lines |\n|---|---|---:|---:|\n");
        for (GatewayProcess gw : cells.gateways()) {
            Path log = gw.process().log();
            long bytes = -1;
            long bad = -1;
            try (var lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
                bytes = Files.size(log);
                bad = lines.filter(line -> line.contains(" WARN ") || line.contains(" ERROR ")).count();
            } catch (IOException | java.io.UncheckedIOException e) {
                // shown as -1
            }
            b.append("| ").append(gw.gatewayId()).append(" | ").append(log.getFileName()).append(" | ").append(bytes)
                    .append(" | ").append(bad).append(" |\n");
        }

        CellCheckers.appendProblems(b, o.verdicts());
        return b.toString();
    }

    private static void tokenRow(StringBuilder b, String when, TokenNow a, TokenNow bb) {
        b.append("| ").append(when).append(" | ").append(a.describe()).append(" | ").append(bb.describe()).append(" |\n");
    }

    private static void row(StringBuilder b, String event, long t, long start) {
        b.append("| ").append(event).append(" | ").append(String.format("%.2f", (t - start) / 1e9)).append(" |\n");
    }
}
