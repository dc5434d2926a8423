package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The deadlock checker (contract §2.13) over the {@link DeadlockWorkload}'s groups and the history:
 * <ol>
 *   <li><b>only a waiting FAIL request is failed, never a hold</b>: a 409 DEADLOCK goes only to a member that asked
 *   {@code on_deadlock: FAIL}, for the request it was waiting with; the hold it had meanwhile stays valid — its
 *   release afterwards is not answered {@code released:false} (unless its session may legally have ended by then);</li>
 *   <li><b>every victim was in a cycle</b>: for the cycle its 409 reported, there is one moment within the victim's
 *   call at which each member was waiting (an acquire of that member's name under way) and every session it waited for
 *   held that name (a grant asked for before, not ended yet);</li>
 *   <li><b>a cycle with a FAIL member is broken, once</b>: in a group that formed its cycle (every member granted its
 *   first name, every second request asked before any was answered) with a FAIL member, the first answer comes within
 *   {@link #BOUND_MS} of the cycle's forming, or of the end of the faults near it and their recovery
 *   ({@link #deadline}); exactly one member is
 *   answered DEADLOCK — at most one while a fault was near (a session that expired in a pause, or an answer lost, may
 *   end the cycle first; a request whose answer was lost excuses the group's bound, counted);</li>
 *   <li><b>a cycle of WAIT requests is left alone</b>: no member of a group where all said WAIT is answered DEADLOCK
 *   (they end by their own {@code wait_ms}).</li>
 * </ol>
 * Sound: each rule uses only what a correct service guarantees whatever the timing inside a call (a grant may take
 * effect anywhere in its call, a hold may end anywhere up to its release's answer or its session's end).
 *
 * <p>Thread-safety: stateless.
 */
final class DeadlockChecker {
    /** How long after its cycle formed (or the faults near it ended) a FAIL member's cycle must be broken. */
    static final long BOUND_MS = 5_000;

    record Result(List<String> problems, int groups, int formed, int victims, int waitOnlyCycles, int excused) {
        boolean ok() {
            return problems.isEmpty();
        }
    }

    private DeadlockChecker() {
    }

    /** An interval of possible times. */
    private record Span(long from, long to) {
        boolean contains(long t) {
            return from <= t && t <= to;
        }
    }

    static Result check(List<DeadlockWorkload.Group> groups, List<Op> history, List<Nemesis.Fault> faults) {
        Map<Integer, Op> byId = new HashMap<>();
        Map<String, Long> endCall = new HashMap<>();
        Map<String, Long> endSeen = new HashMap<>();
        Map<String, Op> releases = new HashMap<>();
        for (Op op : history) {
            byId.put(op.id(), op);
            if (op.kind() == Op.Kind.END) {
                endCall.merge(op.session(), op.call(), Math::min);
                endSeen.merge(op.session(), op.ret(), Math::min);
            } else if (op.kind() == Op.Kind.RELEASE) {
                releases.putIfAbsent(op.session() + "|" + op.key() + "|" + op.token(), op);
            }
        }
        // Per (session, name): when it may have held it (from a grant's call to its release's answer or its session's
        // end) and when it may have been waiting for it (an acquire's call to its answer).
        Map<String, List<Span>> held = new HashMap<>();
        Map<String, List<Span>> waited = new HashMap<>();
        for (Op op : history) {
            if (op.kind() != Op.Kind.ACQUIRE) {
                continue;
            }
            String key = op.session() + "|" + op.key();
            waited.computeIfAbsent(key, k -> new ArrayList<>()).add(new Span(op.call(), op.ret()));
            if (op.outcome() == Op.Outcome.GRANTED || op.outcome() == Op.Outcome.UNKNOWN) {
                Op release = releases.get(key + "|" + op.token());
                long end = Math.min(release == null || op.outcome() == Op.Outcome.UNKNOWN ? Op.NEVER : release.ret(),
                        endSeen.getOrDefault(op.session(), Op.NEVER));
                held.computeIfAbsent(key, k -> new ArrayList<>()).add(new Span(op.call(), Math.max(end, op.call())));
            }
        }
        List<String> problems = new ArrayList<>();
        int formed = 0;
        int victims = 0;
        int waitOnly = 0;
        int excused = 0;
        for (DeadlockWorkload.Group g : groups) {
            List<Op> asks = new ArrayList<>();
            boolean allAsked = true;
            boolean allHeld = true;
            for (DeadlockWorkload.Member m : g.members()) {
                Op hold = m.holdOp() < 0 ? null : byId.get(m.holdOp());
                Op ask = m.waitOp() < 0 ? null : byId.get(m.waitOp());
                allHeld &= hold != null && hold.outcome() == Op.Outcome.GRANTED;
                allAsked &= ask != null;
                if (ask != null) {
                    asks.add(ask);
                }
                if (ask == null || ask.outcome() != Op.Outcome.DEADLOCK) {
                    continue;
                }
                victims++;
                // (a) only a FAIL request, and the hold it had stays valid
                if (!"FAIL".equals(m.onDeadlock())) {
                    problems.add("group " + g.id() + ": " + m.process() + " said on_deadlock " + m.onDeadlock()
                            + " and was answered DEADLOCK: " + ask);
                }
                if (hold != null && hold.outcome() == Op.Outcome.GRANTED) {
                    Op release = releases.get(m.session() + "|" + m.holds() + "|" + hold.token());
                    if (release != null && release.outcome() == Op.Outcome.NOT_RELEASED
                            && release.ret() < endCall.getOrDefault(m.session(), Op.NEVER)) {
                        problems.add("group " + g.id() + ": the victim " + m.process() + "'s hold of " + m.holds()
                                + " (token " + hold.token() + ") was gone after its DEADLOCK answer, though its session "
                                + "lived: " + release);
                    }
                }
                // (b) the cycle it reported existed at one moment of its call
                String why = inCycle(ask, m.cycle(), held, waited);
                if (why != null) {
                    problems.add("group " + g.id() + ": the victim " + m.process() + " was answered DEADLOCK for a cycle "
                            + "that did not exist during its call (" + why + "): " + ask + "; cycle " + m.cycle());
                }
            }
            if (!allHeld || !allAsked) {
                continue;
            }
            long lastCall = asks.stream().mapToLong(Op::call).max().orElseThrow();
            long firstRet = asks.stream().mapToLong(Op::ret).min().orElseThrow();
            if (lastCall > firstRet) {
                continue; // answered before the last one asked: no cycle for sure
            }
            formed++;
            long deadlocks = asks.stream().filter(a -> a.outcome() == Op.Outcome.DEADLOCK).count();
            if (!g.anyFail()) {
                // (d) left alone
                waitOnly++;
                if (deadlocks > 0) {
                    problems.add("group " + g.id() + ": a cycle of WAIT requests was broken (" + deadlocks
                            + " answered DEADLOCK): " + asks);
                }
                continue;
            }
            // (c) broken within the bound, exactly once
            long formedAt = lastCall;
            for (DeadlockWorkload.Member m : g.members()) {
                formedAt = Math.max(formedAt, byId.get(m.holdOp()).ret());
            }
            long lastEnd = asks.stream().mapToLong(Op::ret).max().orElseThrow();
            boolean faultNear = MultiLockChecker.duringAFault(formedAt, lastEnd, faults);
            if (deadlocks > 1 || deadlocks == 0 && !faultNear
                    && asks.stream().noneMatch(a -> a.outcome() == Op.Outcome.UNKNOWN)) {
                problems.add("group " + g.id() + ": a cycle with a FAIL member had " + deadlocks
                        + " victims (one expected)" + ": " + asks);
            }
            if (asks.stream().anyMatch(a -> a.outcome() == Op.Outcome.UNKNOWN)) {
                excused++;
                continue;
            }
            long deadline = deadline(formedAt, firstRet, faults);
            if (firstRet > deadline) {
                problems.add("group " + g.id() + ": a cycle with a FAIL member was not broken within " + BOUND_MS
                        + " ms: formed by " + formedAt + ", first answer " + TimeUnit.NANOSECONDS.toMillis(firstRet - formedAt)
                        + " ms later: " + asks);
            }
        }
        return new Result(problems, groups.size(), formed, victims, waitOnly, excused);
    }

    /**
     * By when a cycle formed at {@code formedAt} and first answered at {@code firstRet} must have been broken:
     * {@link #BOUND_MS} after it formed; when a fault overlapped it, or ended less than
     * {@link MultiLockChecker#RECOVERY_MS} before it formed, {@link #BOUND_MS} plus that recovery time after the last
     * such fault ended (the cell may still be electing, and the requests' entries may be made only then).
     */
    static long deadline(long formedAt, long firstRet, List<Nemesis.Fault> faults) {
        long recovery = TimeUnit.MILLISECONDS.toNanos(MultiLockChecker.RECOVERY_MS);
        long from = formedAt;
        for (Nemesis.Fault f : faults) {
            if (f.start() - firstRet < 0 && f.end() + recovery - formedAt > 0) {
                from = Math.max(from, f.end() + recovery);
            }
        }
        return from + TimeUnit.MILLISECONDS.toNanos(BOUND_MS);
    }

    /**
     * Null when there is one moment within {@code victim}'s call at which every member of {@code cycle} was waiting for
     * its name and everyone it waits for held that name; else what is missing.
     */
    private static String inCycle(Op victim, List<DeadlockWorkload.CycleMember> cycle, Map<String, List<Span>> held,
                                  Map<String, List<Span>> waited) {
        if (cycle == null || cycle.isEmpty()) {
            return "no cycle in its answer";
        }
        List<List<Span>> constraints = new ArrayList<>();
        constraints.add(List.of(new Span(victim.call(), victim.ret())));
        for (DeadlockWorkload.CycleMember c : cycle) {
            List<Span> w = waited.get(c.session() + "|" + c.name());
            if (w == null) {
                return "session " + c.session() + " never asked for " + c.name();
            }
            constraints.add(w);
            for (String holder : c.waitsFor()) {
                List<Span> h = held.get(holder + "|" + c.name());
                if (h == null) {
                    return "session " + holder + " never held " + c.name();
                }
                constraints.add(h);
            }
        }
        // The intersection of unions of spans, if not empty, contains the start of one of the spans (or the victim's).
        for (List<Span> spans : constraints) {
            for (Span s : spans) {
                long t = s.from();
                if (constraints.stream().allMatch(c -> c.stream().anyMatch(x -> x.contains(t)))) {
                    return null;
                }
            }
        }
        return "no moment at which every member waited for its name while its blockers held it";
    }
}
