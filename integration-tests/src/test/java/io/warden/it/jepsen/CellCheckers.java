package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The checkers of {@link CellQuorumLossIT} and {@link CellMoveIT}, over a {@link CellWorkload} history and the moments of
 * the one outage or of the moves. Each returns a {@link Verdict}: its problems (none when it holds) and a summary of what
 * it looked at, for the report.
 *
 * <ol>
 *   <li>{@link #fencing}: no lost update and tokens that grow, in both cells (and across moves);</li>
 *   <li>{@link #untouched}: the clients of the cell that kept its quorum (or of the namespace that did not move) saw
 *   nothing;</li>
 *   <li>{@link #faultWasReal}: the clients of the cell that lost it saw the outage, and were served again after it;</li>
 *   <li>{@link #spanningRefused}: no keepalive of a session that used that cell was acknowledged while the cell could
 *   not vouch for it, the spanning clients' keepalives were refused, and they recovered;</li>
 *   <li>{@link #tokensAcrossMoves}: a moved namespace's tokens grow across each move, lock by lock;</li>
 *   <li>{@link #regrantedAfterMoves}: each client of the moved namespace is granted again soon after each move.</li>
 * </ol>
 */
final class CellCheckers {
    /**
     * How much longer than its own wait a call of an untouched client may take: a healthy gateway answers in
     * milliseconds (a few ZooKeeper round trips on loopback), and 2 s is the vouching bound B (half the gateways' ZooKeeper
     * session timeout): a gateway whose view of a cell is older than that stops acknowledging keepalives, so a call held
     * up longer than B was held up by something, on a cell that had nothing wrong with it. Generous for a loaded 2-core
     * machine running eight JVMs.
     */
    static final long OVER_WAIT_MS = 2000;
    /**
     * Grants (and acknowledged keepalives) each untouched client must have had during the outage: it went on being
     * served, not merely never refused. A client makes several a second; the outage lasts 15 s.
     */
    static final int MIN_DURING_OUTAGE = 5;
    /**
     * Calls of an untouched client that its own cell's ZooKeeper refused (it did not answer the gateway for a second:
     * the machine starving every process, seen beside other test runs), excused up to this share of its role's calls.
     * The other cell's outage reaching this cell would refuse most calls of the outage, far more.
     */
    static final int OWN_CELL_REFUSALS_PERCENT = 1;
    /** ... and up to this many in any case (one stall can refuse a call of each of three clients). */
    static final int OWN_CELL_REFUSALS_AT_LEAST = 3;
    /** Pairs of grants out of token order shown per lock (one early bad token would otherwise be paired with all later). */
    private static final int MAX_LINES_PER_LOCK = 20;

    private CellCheckers() {
    }

    /**
     * One outage, in {@code System.nanoTime()}: the links cut ({@code cut}); no server of the cell seen serving any more
     * ({@code lostSeen}, by {@code srvr}); the links healed ({@code heal}); a quorum again ({@code quorumBack}); every
     * gateway serving the cell again ({@code servingBack}).
     */
    record Outage(String cell, long cut, long lostSeen, long heal, long quorumBack, long servingBack) {
        /** Whether the call was under way at some moment of the outage (sent before the heal, answered after the cut). */
        boolean during(CellOp op) {
            return op.call() < heal && op.ret() >= cut;
        }
    }

    /**
     * One move of {@code namespace} from cell {@code from} to cell {@code to}, as the test saw its call: {@code call} when
     * {@code PUT /v1/namespaces/{namespace}/cell} was sent, {@code ret} when its reply came (after the flip: from then on
     * the new cell serves the namespace), in {@code System.nanoTime()}.
     */
    record Move(String namespace, String from, String to, long call, long ret) {
        String describe() {
            return from + " -> " + to;
        }
    }

    /** The report's sections for the checkers that failed: each one's problems, the first 60. */
    static void appendProblems(StringBuilder b, List<Verdict> verdicts) {
        for (Verdict v : verdicts) {
            if (!v.ok()) {
                b.append("\n## Problems of checker ").append(v.name()).append("\n\n").append(v.problems().size())
                        .append(" in all").append(v.problems().size() > 60 ? ", the first 60" : "").append(".\n\n```\n");
                v.problems().stream().limit(60).forEach(p -> b.append(p).append('\n'));
                b.append("```\n");
            }
        }
    }

    record Verdict(String name, List<String> problems, String summary) {
        boolean ok() {
            return problems.isEmpty();
        }
    }

    private static String at(long t, long start) {
        return String.format("%.2f s", (t - start) / 1e9);
    }

    // ------------------------------------------------------------------ 1

    /**
     * Checker 1, fencing, in both cells: each lock's {@link FencedRegister} ends at the increments acknowledged to its
     * holders (a lost update means two holders read one value under tokens the register could not order); and tokens
     * grow with real time: a grant whose request was first sent after another grant of the same lock was answered has a
     * larger token (its queue node was made later: tokens are the node's czxid plus floors), and no two requests are
     * granted one token. The first send of a request counts, since a retry with the same {@code request_id} may be
     * granted the node its first attempt made.
     */
    static Verdict fencing(List<CellOp> history, Map<String, FencedRegister.Summary> counters, long start) {
        List<String> problems = new ArrayList<>();
        counters.forEach((lock, c) -> {
            if (!c.ok()) {
                problems.add("fenced counter of " + lock + ": value " + c.value() + " after " + c.acknowledged()
                        + " acknowledged increments (a lost update)");
            }
        });
        Map<String, Long> firstCall = new HashMap<>();
        for (CellOp op : history) {
            if (op.kind() == CellOp.Kind.ACQUIRE) {
                firstCall.merge(op.session() + " " + op.requestId(), op.call(), Math::min);
            }
        }
        Map<String, List<CellOp>> grants = new TreeMap<>();
        for (CellOp op : history) {
            if (op.kind() == CellOp.Kind.ACQUIRE && op.outcome() == CellOp.Outcome.OK) {
                grants.computeIfAbsent(op.lock(), k -> new ArrayList<>()).add(op);
            }
        }
        int checked = 0;
        for (Map.Entry<String, List<CellOp>> e : grants.entrySet()) {
            List<CellOp> byRet = new ArrayList<>(e.getValue());
            byRet.sort(Comparator.comparingLong(CellOp::ret));
            Map<Long, CellOp> byToken = new HashMap<>();
            for (CellOp g : byRet) {
                CellOp other = byToken.putIfAbsent(g.token(), g);
                if (other != null) {
                    problems.add("lock " + e.getKey() + ": token " + g.token() + " granted twice: " + other.describe(start)
                            + " and " + g.describe(start));
                }
            }
            int shrinks = 0;
            for (CellOp g : byRet) {
                long sent = firstCall.get(g.session() + " " + g.requestId());
                for (CellOp before : byRet) {
                    if (before.ret() >= sent) {
                        break;
                    }
                    if (before.token() >= g.token() && shrinks++ < MAX_LINES_PER_LOCK) {
                        problems.add("lock " + e.getKey() + ": token did not grow: " + g.describe(start)
                                + " (first sent at " + at(sent, start) + ") after " + before.describe(start));
                    }
                }
                checked++;
            }
            if (shrinks > MAX_LINES_PER_LOCK) {
                problems.add("lock " + e.getKey() + ": " + (shrinks - MAX_LINES_PER_LOCK) + " more pairs whose token did "
                        + "not grow");
            }
        }
        long acknowledged = counters.values().stream().mapToLong(FencedRegister.Summary::acknowledged).sum();
        long refused = counters.values().stream().mapToLong(c -> c.refusedReads() + c.refusedWrites()).sum();
        StringBuilder counts = new StringBuilder();
        counters.forEach((lock, c) -> counts.append(counts.length() == 0 ? "" : ", ").append(lock).append(' ')
                .append(c.value()).append('/').append(c.acknowledged()));
        return new Verdict("1. fencing (no lost update; tokens grow, both cells)", problems, counters.size()
                + " counters (value/acknowledged: " + counts + "), " + acknowledged + " increments acknowledged, " + refused
                + " stale reads or writes refused by the fence; " + checked + " grants checked for token order");
    }

    // ------------------------------------------------------------------ 2

    /**
     * Checker 2, the other cell's clients see nothing: every call of the {@code role} clients during the whole run did
     * what it asked (a session, a keepalive acknowledged, a grant within its wait, a release, an increment the fence
     * took: no 503, no session lost, no wait run out), none took longer than its own wait plus {@link #OVER_WAIT_MS},
     * and each of them was granted and kept alive at least {@link #MIN_DURING_OUTAGE} times during the outage. A 503
     * that names the client's own cell's ZooKeeper ({@link #refusedByItsOwnCell}) is reported, and fails the checker
     * only past {@link #OWN_CELL_REFUSALS_PERCENT}% of the calls (at least {@link #OWN_CELL_REFUSALS_AT_LEAST}).
     */
    static Verdict untouched(List<CellOp> history, CellOp.Role role, Outage o, long start) {
        return untouched(history, role, o.cut(), o.heal(), "the outage", start);
    }

    /**
     * Checker 2 over any window of trouble elsewhere ({@code what}: the calls under way at some moment from {@code from}
     * to {@code to} are "during" it), e.g. the moves of another namespace: the same rules as for an outage.
     */
    static Verdict untouched(List<CellOp> history, CellOp.Role role, long from, long to, String what, long start) {
        List<String> problems = new ArrayList<>();
        List<String> ownCell = new ArrayList<>();
        Map<String, int[]> duringOutage = new TreeMap<>(); // client -> {grants, keepalives acknowledged}
        long ops = 0;
        long maxOver = Long.MIN_VALUE;
        for (CellOp op : history) {
            if (op.role() != role) {
                continue;
            }
            ops++;
            int[] counts = duringOutage.computeIfAbsent(op.client(), k -> new int[2]);
            if (op.outcome() == CellOp.Outcome.UNAVAILABLE && refusedByItsOwnCell(op, role)) {
                ownCell.add(phase(op, from, to, what) + ": " + op.describe(start));
                continue;
            }
            if (op.outcome() != CellOp.Outcome.OK) {
                problems.add(phase(op, from, to, what) + ": " + op.describe(start));
                continue;
            }
            if (op.kind() != CellOp.Kind.INCREMENT) {
                long over = op.millis() - op.waitMs();
                maxOver = Math.max(maxOver, over);
                if (over > OVER_WAIT_MS) {
                    problems.add(phase(op, from, to, what) + ": took " + over + " ms beyond its wait (bound "
                            + OVER_WAIT_MS + " ms): " + op.describe(start));
                }
            }
            if (during(op, from, to) && op.kind() == CellOp.Kind.ACQUIRE) {
                counts[0]++;
            }
            if (during(op, from, to) && op.kind() == CellOp.Kind.KEEPALIVE) {
                counts[1]++;
            }
        }
        duringOutage.forEach((client, counts) -> {
            if (counts[0] < MIN_DURING_OUTAGE || counts[1] < MIN_DURING_OUTAGE) {
                problems.add(client + ": only " + counts[0] + " grants and " + counts[1] + " keepalives acknowledged "
                        + "during " + what + " (at least " + MIN_DURING_OUTAGE + " each)");
            }
        });
        if (duringOutage.isEmpty()) {
            problems.add("no " + role + " client in the history");
        }
        long excusable = Math.max(OWN_CELL_REFUSALS_AT_LEAST, ops * OWN_CELL_REFUSALS_PERCENT / 100);
        if (ownCell.size() > excusable) {
            problems.add(ownCell.size() + " calls refused by their own cell's ZooKeeper, more than " + excusable + " ("
                    + OWN_CELL_REFUSALS_PERCENT + "% of " + ops + ", at least " + OWN_CELL_REFUSALS_AT_LEAST + "): "
                    + ownCell.subList(0, Math.min(5, ownCell.size())));
        }
        StringBuilder per = new StringBuilder();
        duringOutage.forEach((client, counts) -> per.append(per.length() == 0 ? "" : ", ").append(client).append(' ')
                .append(counts[0]).append('/').append(counts[1]));
        return new Verdict("2. " + role + " clients see nothing (every call OK, none over its wait + " + OVER_WAIT_MS
                + " ms)", problems, ops + " calls of " + duringOutage.keySet() + ", " + problems.size()
                + " problems; slowest " + (maxOver == Long.MIN_VALUE ? "none" : maxOver + " ms") + " beyond its wait; "
                + "grants/keepalives acknowledged during " + what + ": " + per
                + (ownCell.isEmpty() ? "" : "; " + ownCell.size() + " refused by their own cell's ZooKeeper (the "
                + "machine, not the other cell; excused up to " + OWN_CELL_REFUSALS_PERCENT + "% of the calls, at least "
                + OWN_CELL_REFUSALS_AT_LEAST + "): " + ownCell));
    }

    /**
     * Whether a 503 says that the client's own cell's ZooKeeper did not answer the gateway (a {@link CellOp.Role#WEB}
     * client's is the default cell, a {@link CellOp.Role#PAY} client's cell {@value TwoCells#CELL_B}). A loaded machine
     * can starve any ensemble for a second; that is not the other cell's trouble reaching this one.
     */
    static boolean refusedByItsOwnCell(CellOp op, CellOp.Role role) {
        String own = role == CellOp.Role.WEB ? "default" : role == CellOp.Role.PAY ? TwoCells.CELL_B : null;
        return own != null && op.detail() != null && op.detail().contains("ZooKeeper of cell " + own + " ");
    }

    /** Before (answered before the cut), during (under way at some moment of the outage) or after (sent after the heal). */
    static String phase(CellOp op, Outage o) {
        return phase(op, o.cut(), o.heal(), "the outage");
    }

    /** As for an outage: before {@code what} (answered before {@code from}), during it, or after it (sent after {@code to}). */
    static String phase(CellOp op, long from, long to, String what) {
        return op.ret() < from ? "before " + what : during(op, from, to) ? "during " + what : "after " + what;
    }

    /** Whether the call was under way at some moment from {@code from} to {@code to}. */
    private static boolean during(CellOp op, long from, long to) {
        return op.call() < to && op.ret() >= from;
    }

    // ------------------------------------------------------------------ 3

    /**
     * Checker 3, the fault was real: the pay-only clients (of the cell that lost its quorum) were answered 503 during the
     * outage; nothing of that cell was granted from when no server of it served until the heal (a grant needs a write);
     * and every pay-only client was granted again after the heal.
     */
    static Verdict faultWasReal(List<CellOp> history, Outage o, long start) {
        List<String> problems = new ArrayList<>();
        Map<String, Map<CellOp.Outcome, Integer>> failed = new TreeMap<>();
        long unavailable = 0;
        for (CellOp op : history) {
            if (op.role() == CellOp.Role.PAY && o.during(op) && op.outcome() != CellOp.Outcome.OK) {
                failed.computeIfAbsent(op.client() + " " + op.kind(), k -> new TreeMap<>()).merge(op.outcome(), 1, Integer::sum);
                if (op.outcome() == CellOp.Outcome.UNAVAILABLE) {
                    unavailable++;
                }
            }
            if (TwoCells.PAY.equals(op.namespace()) && op.kind() == CellOp.Kind.ACQUIRE && op.outcome() == CellOp.Outcome.OK
                    && op.call() >= o.lostSeen() && op.ret() <= o.heal()) {
                problems.add("granted while no server of its cell served: " + op.describe(start));
            }
        }
        if (unavailable == 0) {
            problems.add("no pay-only call was answered 503 during the outage (failures seen: " + failed + ")");
        }
        Map<String, Long> recovery = new TreeMap<>();
        Set<String> payClients = new TreeSet<>();
        for (CellOp op : history) {
            if (op.role() == CellOp.Role.PAY) {
                payClients.add(op.client());
                if (op.kind() == CellOp.Kind.ACQUIRE && op.outcome() == CellOp.Outcome.OK && op.call() > o.heal()) {
                    recovery.merge(op.client(), op.ret() - o.heal(), Math::min);
                }
            }
        }
        for (String client : payClients) {
            if (!recovery.containsKey(client)) {
                problems.add(client + " was not granted again after the heal");
            }
        }
        Map<String, String> shown = new LinkedHashMap<>();
        recovery.forEach((client, nanos) -> shown.put(client, String.format("%.2f s", nanos / 1e9)));
        return new Verdict("3. the fault was real (pay-only clients refused during the outage, granted after it)", problems,
                unavailable + " pay-only calls answered 503 during the outage; failures by client and call: " + failed
                        + "; first grant after the heal: " + shown);
    }

    // ------------------------------------------------------------------ 4

    /**
     * Checker 4, keepalives need every cell: a session that was granted a pay lock before the cut has its record in the
     * cell that lost its quorum, so none of its keepalives may be acknowledged from {@code lostSeen + B} (B: the vouching
     * bound; a sync answered before the loss vouches for B after it at most) until the heal, if answered before the heal
     * (pay-only sessions and spanning ones alike); each spanning client had such a session and its keepalives were
     * refused during the outage; and each spanning client had a keepalive acknowledged and a pay lock granted after the
     * heal, on the same session or a new one.
     */
    static Verdict spanningRefused(List<CellOp> history, Outage o, long vouchBoundNanos, long start) {
        List<String> problems = new ArrayList<>();
        Set<String> usedCell = new HashSet<>();
        for (CellOp op : history) {
            if (TwoCells.PAY.equals(op.namespace()) && op.kind() == CellOp.Kind.ACQUIRE && op.outcome() == CellOp.Outcome.OK
                    && op.ret() < o.cut()) {
                usedCell.add(op.session());
            }
        }
        long refusalFrom = o.lostSeen() + vouchBoundNanos;
        Map<String, Integer> refused = new TreeMap<>();
        Map<String, Integer> grace = new TreeMap<>();
        Map<String, Set<String>> sessions = new TreeMap<>();
        Map<String, Long> keptAlive = new TreeMap<>();
        Map<String, Long> granted = new TreeMap<>();
        Set<String> spanning = new TreeSet<>();
        long lastAcked = Long.MIN_VALUE;
        for (CellOp op : history) {
            if (op.role() == CellOp.Role.SPAN) {
                spanning.add(op.client());
                if (op.session() != null) {
                    sessions.computeIfAbsent(op.client(), k -> new TreeSet<>()).add(op.session());
                }
            }
            if (op.kind() == CellOp.Kind.KEEPALIVE && usedCell.contains(op.session())) {
                boolean acked = op.outcome() == CellOp.Outcome.OK;
                if (acked && op.call() >= refusalFrom && op.ret() <= o.heal()) {
                    problems.add("keepalive acknowledged while cell " + o.cell() + " could not vouch (no server serving "
                            + "since " + at(o.lostSeen(), start) + ", bound B " + TimeUnit.NANOSECONDS.toMillis(vouchBoundNanos)
                            + " ms, healed at " + at(o.heal(), start) + "): " + op.describe(start));
                }
                if (acked && op.call() >= o.cut() && op.call() < refusalFrom) {
                    grace.merge(op.client(), 1, Integer::sum);
                    lastAcked = Math.max(lastAcked, op.call());
                }
                if (!acked && o.during(op) && op.role() == CellOp.Role.SPAN) {
                    refused.merge(op.client(), 1, Integer::sum);
                }
            }
            if (op.role() == CellOp.Role.SPAN && op.call() > o.heal() && op.outcome() == CellOp.Outcome.OK) {
                if (op.kind() == CellOp.Kind.KEEPALIVE) {
                    keptAlive.merge(op.client(), op.ret() - o.heal(), Math::min);
                }
                if (op.kind() == CellOp.Kind.ACQUIRE && TwoCells.PAY.equals(op.namespace())) {
                    granted.merge(op.client(), op.ret() - o.heal(), Math::min);
                }
            }
        }
        for (String client : spanning) {
            boolean joined = sessions.getOrDefault(client, Set.of()).stream().anyMatch(usedCell::contains);
            if (!joined) {
                problems.add(client + " had no session that used cell " + o.cell() + " before the outage");
            } else if (!refused.containsKey(client)) {
                problems.add(client + ": no keepalive of its session was refused during the outage");
            }
            if (!keptAlive.containsKey(client)) {
                problems.add(client + ": no keepalive acknowledged after the heal");
            }
            if (!granted.containsKey(client)) {
                problems.add(client + ": no pay lock granted after the heal");
            }
        }
        if (spanning.isEmpty()) {
            problems.add("no spanning client in the history");
        }
        Map<String, String> recovered = new TreeMap<>();
        for (String client : spanning) {
            recovered.put(client, String.format("keepalive %s, pay grant %s, %d sessions in the run",
                    keptAlive.containsKey(client) ? String.format("%.2f s", keptAlive.get(client) / 1e9) : "never",
                    granted.containsKey(client) ? String.format("%.2f s", granted.get(client) / 1e9) : "never",
                    sessions.getOrDefault(client, Set.of()).size()));
        }
        return new Verdict("4. keepalives of sessions using cell " + o.cell() + " refused while it cannot vouch; spanning "
                + "clients recover", problems, usedCell.size() + " sessions used cell " + o.cell()
                + " before the cut; spanning keepalives refused during the outage: " + refused
                + "; acknowledged in the grace window (from the cut to no server serving + B): " + grace
                + (lastAcked == Long.MIN_VALUE ? "" : String.format(", the last sent %.2f s after the cut",
                        (lastAcked - o.cut()) / 1e9))
                + "; after the heal: " + recovered);
    }

    // ------------------------------------------------------------------ 5

    /**
     * Checker 5, a moved namespace's tokens grow across each move, lock by lock: every grant of a request first sent
     * after the move's reply (its queue node made in the new cell) has a larger token than every grant answered before
     * the move was asked (made in the old cell, or earlier). Checker 1 says as much of every pair of grants in real-time
     * order; this one names the move a token went down across. Each lock of the namespace must have grants on both sides
     * of each move (else the check says nothing of it).
     */
    static Verdict tokensAcrossMoves(List<CellOp> history, String namespace, List<Move> moves, long start) {
        List<String> problems = new ArrayList<>();
        Map<String, Long> firstCall = new HashMap<>();
        for (CellOp op : history) {
            if (op.kind() == CellOp.Kind.ACQUIRE) {
                firstCall.merge(op.session() + " " + op.requestId(), op.call(), Math::min);
            }
        }
        Map<String, List<CellOp>> grants = new TreeMap<>();
        for (CellOp op : history) {
            if (op.kind() == CellOp.Kind.ACQUIRE && op.outcome() == CellOp.Outcome.OK && namespace.equals(op.namespace())) {
                grants.computeIfAbsent(op.lock(), k -> new ArrayList<>()).add(op);
            }
        }
        if (grants.isEmpty()) {
            problems.add("no grant of namespace " + namespace + " in the history");
        }
        List<String> shown = new ArrayList<>();
        for (int m = 0; m < moves.size(); m++) {
            Move move = moves.get(m);
            String which = "move " + (m + 1) + " (" + move.describe() + ")";
            for (Map.Entry<String, List<CellOp>> e : grants.entrySet()) {
                CellOp highestBefore = null;
                CellOp lowestAfter = null;
                List<CellOp> after = new ArrayList<>();
                for (CellOp g : e.getValue()) {
                    if (g.ret() < move.call() && (highestBefore == null || g.token() > highestBefore.token())) {
                        highestBefore = g;
                    }
                    if (firstCall.get(g.session() + " " + g.requestId()) > move.ret()) {
                        after.add(g);
                        if (lowestAfter == null || g.token() < lowestAfter.token()) {
                            lowestAfter = g;
                        }
                    }
                }
                if (highestBefore == null || lowestAfter == null) {
                    problems.add("lock " + e.getKey() + ": no grant " + (highestBefore == null ? "answered before " : "")
                            + (highestBefore == null && lowestAfter == null ? "nor " : "")
                            + (lowestAfter == null ? "sent after " : "") + which + " to compare");
                    continue;
                }
                long top = highestBefore.token();
                long below = after.stream().filter(g -> g.token() <= top).count();
                if (below > 0) {
                    problems.add("lock " + e.getKey() + ": token went down across " + which + ": " + below + " of the "
                            + after.size() + " grants sent after it have a token at most " + top + ", the highest before "
                            + "it; the lowest: " + lowestAfter.describe(start) + "; the highest before: "
                            + highestBefore.describe(start));
                }
                shown.add(which + " " + e.getKey() + ": highest before " + top + ", lowest after " + lowestAfter.token()
                        + " (" + after.size() + " grants after)");
            }
        }
        return new Verdict("5. tokens of " + namespace + " grow across each move", problems,
                moves.size() + " moves, " + grants.size() + " locks: " + String.join("; ", shown));
    }

    // ------------------------------------------------------------------ 6

    /**
     * Checker 6, the moved namespace is served again after each move: every client of {@code role} (each uses only that
     * namespace) was granted one of its locks within {@code boundNanos} of each move's reply.
     */
    static Verdict regrantedAfterMoves(List<CellOp> history, String namespace, CellOp.Role role, List<Move> moves,
                                       long boundNanos, long start) {
        List<String> problems = new ArrayList<>();
        Set<String> clients = new TreeSet<>();
        for (CellOp op : history) {
            if (op.role() == role) {
                clients.add(op.client());
            }
        }
        if (clients.isEmpty()) {
            problems.add("no " + role + " client in the history");
        }
        List<String> shown = new ArrayList<>();
        for (int m = 0; m < moves.size(); m++) {
            Move move = moves.get(m);
            Map<String, String> delays = new TreeMap<>();
            for (String client : clients) {
                long first = Long.MAX_VALUE;
                for (CellOp op : history) {
                    if (op.client().equals(client) && op.kind() == CellOp.Kind.ACQUIRE && op.outcome() == CellOp.Outcome.OK
                            && namespace.equals(op.namespace()) && op.ret() > move.ret()) {
                        first = Math.min(first, op.ret() - move.ret());
                    }
                }
                if (first == Long.MAX_VALUE) {
                    problems.add(client + " was not granted a lock of " + namespace + " after move " + (m + 1) + " ("
                            + move.describe() + ", answered at " + at(move.ret(), start) + ")");
                    delays.put(client, "never");
                } else {
                    if (first > boundNanos) {
                        problems.add(client + " was granted a lock of " + namespace + " only " + String.format("%.2f s",
                                first / 1e9) + " after move " + (m + 1) + " (" + move.describe() + ") was answered (bound "
                                + TimeUnit.NANOSECONDS.toMillis(boundNanos) + " ms)");
                    }
                    delays.put(client, String.format("%.2f s", first / 1e9));
                }
            }
            shown.add("move " + (m + 1) + " (" + move.describe() + "): " + delays);
        }
        return new Verdict("6. " + role + " clients granted again within " + TimeUnit.NANOSECONDS.toMillis(boundNanos)
                + " ms of each move", problems, "first grant after each move's reply: " + String.join("; ", shown));
    }
}
