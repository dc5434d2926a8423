package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The election checker: at no moment do two candidates lead with a valid hold, and later terms have larger tokens. It
 * reads what each election instance ({@link ElectionWorkload}) believed and when, not what the service did.
 *
 * <p>A term (one grant: an election instance and a token) is valid over one interval, from its start to its end, and
 * never again ({@code Leadership} promises that). What a recording proves about that interval:
 * <ul>
 *   <li>it had begun by its ELECTED line, and by the end of every LEADING sample of it (a sample that found it valid);</li>
 *   <li>it had not ended by the start of its last LEADING sample;</li>
 *   <li>it had ended by its DEFEATED line;</li>
 *   <li>its grant was asked for after the instance's last CAMPAIGN or DEFEATED line before its ELECTED line (the
 *   election asks for the next term only after the listener of the last one's defeat returned).</li>
 * </ul>
 * So a term was surely valid throughout its <em>certain span</em>: from the earliest of its ELECTED line and the ends of
 * its samples, to the start of its last sample. The rules:
 * <ol>
 *   <li><b>One leader:</b> the certain spans of two terms never overlap (two holds valid at one moment: two grants of an
 *   EXCLUSIVE lock at once, contract §2.1, or a leadership that outlived its hold).</li>
 *   <li><b>Tokens grow:</b> a term whose certain span is wholly after another's, or that was asked for after the other
 *   one's DEFEATED line, has the larger token (§2.2: its grant came later).</li>
 *   <li><b>A term never comes back:</b> no LEADING sample of a term starts after its DEFEATED line.</li>
 *   <li><b>Told once:</b> a term has at most one ELECTED and one DEFEATED line, in that order.</li>
 * </ol>
 * Sound: a correct service and election never produce a violation (rule 1 needs both terms surely valid at one instant;
 * the workload neither releases nor takes the election's lock other than through the election). Every candidate runs
 * in one JVM, so all times are of one monotonic clock.
 *
 * <p>Thread-safety: stateless.
 */
final class ElectionChecker {
    /** What the checker found: problems (empty when ok), terms seen, terms with a certain span, samples. */
    record Result(List<String> problems, int terms, int spans, int samples) {
        boolean ok() {
            return problems.isEmpty();
        }
    }

    /** One term as recorded; {@code Long.MAX_VALUE} / {@code Long.MIN_VALUE} where a bound is unknown. */
    static final class Term {
        final String election;
        final String session;
        final long token;
        long elected = Long.MAX_VALUE;
        int electedLines;
        long defeated = Long.MAX_VALUE;
        int defeatedLines;
        long askedAfter = Long.MIN_VALUE;
        long spanStart = Long.MAX_VALUE;
        long spanEnd = Long.MIN_VALUE;
        long lastSampleStart = Long.MIN_VALUE;
        int samples;

        Term(String election, String session, long token) {
            this.election = election;
            this.session = session;
            this.token = token;
        }

        boolean hasSpan() {
            return samples > 0 && spanStart <= spanEnd;
        }

        @Override
        public String toString() {
            return "token " + token + " of " + election + " (session " + session + ")";
        }
    }

    private ElectionChecker() {
    }

    static Result check(List<ElectionWorkload.Seen> recording) {
        List<ElectionWorkload.Seen> lines = new ArrayList<>(recording);
        lines.sort(Comparator.comparingLong(ElectionWorkload.Seen::t0));
        Map<String, Term> terms = new LinkedHashMap<>();
        Map<String, Long> lastAsk = new java.util.HashMap<>();
        List<String> problems = new ArrayList<>();
        int samples = 0;
        for (ElectionWorkload.Seen s : lines) {
            String key = s.election() + "|" + s.token();
            switch (s.kind()) {
                case "CAMPAIGN" -> lastAsk.put(s.election(), s.t0());
                case "ELECTED" -> {
                    Term t = terms.computeIfAbsent(key, k -> new Term(s.election(), s.session(), s.token()));
                    t.electedLines++;
                    t.elected = Math.min(t.elected, s.t0());
                    t.askedAfter = lastAsk.getOrDefault(s.election(), Long.MIN_VALUE);
                }
                case "DEFEATED" -> {
                    Term t = terms.computeIfAbsent(key, k -> new Term(s.election(), s.session(), s.token()));
                    t.defeatedLines++;
                    t.defeated = Math.min(t.defeated, s.t0());
                    lastAsk.merge(s.election(), s.t0(), Math::max);
                }
                case "LEADING" -> {
                    samples++;
                    Term t = terms.computeIfAbsent(key, k -> new Term(s.election(), s.session(), s.token()));
                    t.samples++;
                    t.spanStart = Math.min(t.spanStart, s.t1());
                    t.spanEnd = Math.max(t.spanEnd, s.t0());
                    t.lastSampleStart = Math.max(t.lastSampleStart, s.t0());
                }
                default -> { }
            }
        }
        List<Term> all = new ArrayList<>(terms.values());
        for (Term t : all) {
            t.spanStart = Math.min(t.spanStart, t.elected);
            if (t.electedLines > 1 || t.defeatedLines > 1) {
                problems.add("told " + t.electedLines + " times elected and " + t.defeatedLines + " times defeated: " + t);
            }
            if (t.electedLines == 1 && t.defeatedLines == 1 && t.defeated < t.elected) {
                problems.add("told defeated before elected: " + t);
            }
            if (t.lastSampleStart > t.defeated) {
                problems.add("led again after its defeat: " + t + " was sampled valid "
                        + (t.lastSampleStart - t.defeated) / 1_000_000 + " ms after its DEFEATED line");
            }
        }
        List<Term> spans = all.stream().filter(Term::hasSpan).sorted(Comparator.comparingLong(t -> t.spanStart)).toList();
        for (int i = 0; i < spans.size(); i++) {
            Term a = spans.get(i);
            for (int j = i + 1; j < spans.size() && spans.get(j).spanStart <= a.spanEnd; j++) {
                Term b = spans.get(j);
                problems.add("two leaders at once: " + a + " and " + b + " were both valid from " + b.spanStart
                        + " to " + Math.min(a.spanEnd, b.spanEnd) + " (" + (Math.min(a.spanEnd, b.spanEnd) - b.spanStart) / 1_000_000
                        + " ms at least)");
            }
        }
        for (Term a : all) {
            for (Term b : all) {
                if (a == b) {
                    continue;
                }
                boolean bAfterA = (a.hasSpan() && b.hasSpan() && a.spanEnd < b.spanStart)
                        || (a.defeated != Long.MAX_VALUE && b.askedAfter > a.defeated);
                if (bAfterA && b.token <= a.token) {
                    problems.add("token did not grow: " + b + " came after " + a);
                }
            }
        }
        return new Result(problems, all.size(), spans.size(), samples);
    }
}
