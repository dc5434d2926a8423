package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether a history is linearizable against a {@link Model}: is there one order of its operations, each placed at a
 * moment between its call and its return, in which every operation's recorded outcome is what the model allows?
 *
 * <p>The search is Wing and Gong's, with Lowe's memoisation (as in Porcupine): walk the history's calls and returns in
 * time order; at a call, try to linearize that operation now (the model allows it from one of the possible states, and
 * this set of linearized operations with this set of states was not tried before); at the return of an operation not
 * yet linearized, undo the last choice and try the next call instead. The states are a set (the model may allow
 * several effects of one outcome, see {@link Model}); an operation whose answer never came returns after everything
 * else, so it may be placed anywhere after its call. Calls sort before returns at the same instant (touching intervals
 * count as concurrent: the checker never reports a violation that a tie could explain).
 *
 * <p>Histories are checked per key ({@link #checkPerKey}): a mutex of one name does not constrain another's, and
 * linearizability composes, so each name's history is searched alone.
 *
 * <p>Cost: exponential in the number of mutually concurrent operations at worst, bounded by {@code maxSteps}; past
 * it the answer is {@link Verdict#UNKNOWN}, never a pass.
 */
public final class Linearizability {
    public enum Verdict { LINEARIZABLE, VIOLATION, UNKNOWN }

    /**
     * The answer for one key. For a violation: the longest prefix of a linearization the search found
     * ({@code deepest}, in order), and the operations that were open (called, not linearized) when it could go no
     * further: one of them cannot happen after that prefix.
     */
    public record Result(String key, Verdict verdict, int operations, long steps, List<Op> deepest, List<Op> stuck) {
        public boolean ok() {
            return verdict == Verdict.LINEARIZABLE;
        }

        @Override
        public String toString() {
            if (verdict == Verdict.LINEARIZABLE) {
                return key + ": linearizable (" + operations + " operations, " + steps + " steps)";
            }
            StringBuilder b = new StringBuilder(key + ": " + verdict + " (" + operations + " operations, " + steps + " steps)");
            if (!deepest.isEmpty()) {
                // Past the budget too: where the search kept getting stuck is most often where the history went wrong.
                int from = Math.max(0, deepest.size() - 8);
                b.append("\n  longest linearized prefix (last ").append(deepest.size() - from).append(" of ").append(deepest.size()).append("):");
                deepest.subList(from, deepest.size()).forEach(o -> b.append("\n    ").append(o));
                b.append(verdict == Verdict.VIOLATION ? "\n  none of these can come next:" : "\n  after it, none of these was found to come next:");
                stuck.forEach(o -> b.append("\n    ").append(o));
            }
            return b.toString();
        }
    }

    private Linearizability() {
    }

    /** The key of an operation that belongs to every key's history (the end of a session ends all its holds). */
    public static final String EVERY_KEY = "*";

    /**
     * Checks each key's operations alone, with the operations of {@link #EVERY_KEY} of the sessions that act on it;
     * results in key order of first appearance.
     */
    public static <S> List<Result> checkPerKey(Model<S> model, List<Op> history, long maxSteps) {
        Map<String, List<Op>> byKey = new LinkedHashMap<>();
        List<Op> everywhere = new ArrayList<>();
        for (Op op : history) {
            if (EVERY_KEY.equals(op.key())) {
                everywhere.add(op);
            } else {
                byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
            }
        }
        for (List<Op> ops : byKey.values()) {
            // only the ends of sessions that act on this key can change its state
            Set<String> sessions = new HashSet<>();
            ops.forEach(o -> sessions.add(o.session()));
            everywhere.stream().filter(o -> sessions.contains(o.session())).forEach(ops::add);
        }
        List<Result> results = new ArrayList<>();
        byKey.forEach((key, ops) -> results.add(check(model, key, ops, maxSteps)));
        return results;
    }

    /** One entry of the time-ordered list: an operation's call or its return. Links are the search's. */
    private static final class Entry {
        final Op op;
        final boolean call;
        final long time;
        Entry match;
        Entry prev;
        Entry next;

        Entry(Op op, boolean call) {
            this.op = op;
            this.call = call;
            this.time = call ? op.call() : op.ret();
        }

        /** Takes this entry out of the list; {@link #restore} puts it back (in the reverse order of removals). */
        void remove() {
            prev.next = next;
            if (next != null) {
                next.prev = prev;
            }
        }

        void restore() {
            prev.next = this;
            if (next != null) {
                next.prev = this;
            }
        }
    }

    private record Frame(Entry call, Set<Object> states) {
    }

    private record Seen(BitSet linearized, Set<Object> states) {
    }

    @SuppressWarnings("unchecked")
    static <S> Result check(Model<S> model, String key, List<Op> ops, long maxSteps) {
        List<Entry> entries = new ArrayList<>(2 * ops.size());
        Map<Op, Integer> index = new LinkedHashMap<>();
        for (Op op : ops) {
            index.put(op, index.size());
            Entry c = new Entry(op, true);
            Entry r = new Entry(op, false);
            c.match = r;
            r.match = c;
            entries.add(c);
            entries.add(r);
        }
        entries.sort(Comparator.comparingLong((Entry e) -> e.time).thenComparing(e -> !e.call));
        Entry head = new Entry(new Op(-1, "", key, Op.Kind.END, "", 0, Op.Outcome.ENDED, 0, 0), true);
        Entry last = head;
        for (Entry e : entries) {
            last.next = e;
            e.prev = last;
            last = e;
        }

        BitSet linearized = new BitSet(ops.size());
        Set<Object> states = Set.of(model.initial());
        List<Frame> stack = new ArrayList<>();
        Set<Seen> seen = new HashSet<>();
        List<Op> deepest = List.of();
        List<Op> stuck = List.of();
        long steps = 0;
        Entry e = head.next;
        while (head.next != null) {
            if (++steps > maxSteps) {
                return new Result(key, Verdict.UNKNOWN, ops.size(), steps, deepest, stuck);
            }
            if (e.call) {
                Set<Object> next = new LinkedHashSet<>();
                for (Object s : states) {
                    next.addAll(model.step((S) s, e.op));
                }
                if (!next.isEmpty()) {
                    BitSet b = (BitSet) linearized.clone();
                    b.set(index.get(e.op));
                    if (seen.add(new Seen(b, Set.copyOf(next)))) {
                        stack.add(new Frame(e, states));
                        states = next;
                        linearized = b;
                        e.remove();
                        e.match.remove();
                        e = head.next;
                        continue;
                    }
                }
                e = e.next;
            } else {
                // The return of an operation not linearized: nothing placed since its call can be kept as it is.
                if (stack.size() >= deepest.size()) {
                    deepest = stack.stream().map(f -> f.call().op).toList();
                    stuck = open(head);
                }
                if (stack.isEmpty()) {
                    return new Result(key, Verdict.VIOLATION, ops.size(), steps, deepest, stuck);
                }
                Frame f = stack.remove(stack.size() - 1);
                states = f.states();
                linearized = (BitSet) linearized.clone();
                linearized.clear(index.get(f.call().op));
                f.call().match.restore();
                f.call().restore();
                e = f.call().next;
            }
        }
        return new Result(key, Verdict.LINEARIZABLE, ops.size(), steps, List.of(), List.of());
    }

    /** The operations called and not yet linearized, up to the first pending return: what could come next. */
    private static List<Op> open(Entry head) {
        List<Op> open = new ArrayList<>();
        for (Entry x = head.next; x != null; x = x.next) {
            if (!x.call) {
                break;
            }
            open.add(x.op);
        }
        return open;
    }
}
