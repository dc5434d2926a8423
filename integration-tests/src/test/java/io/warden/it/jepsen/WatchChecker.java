package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The watch checker: a watcher that reconnected across the faults saw every event once, in revision order.
 *
 * <ul>
 *   <li><b>Order:</b> revisions never go down from one event to the next.</li>
 *   <li><b>Once:</b> no event (revision, type, name, session, token) comes twice.</li>
 *   <li><b>Every event:</b> every grant a client was told of (a GRANTED acquire in the history, called after the watch
 *   was open and answered before it closed) has a GRANTED event of that name with that token. A RESYNC stands for
 *   history that is gone (contract §3: the state replaces the events), so a grant whose call and answer overlap the
 *   gap a RESYNC closes (from {@link #RESYNC_SLACK_NANOS} before the event that preceded it, to the RESYNC) is not
 *   required; the report counts them.</li>
 * </ul>
 *
 * <p>Thread-safety: stateless.
 */
final class WatchChecker {
    /** Events trail the grants they report; a gap is taken to start this long before the last event before it. */
    static final long RESYNC_SLACK_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** What the checker found: problems (empty when ok), grants checked, grants excused by a RESYNC, RESYNCs seen. */
    record Result(List<String> problems, int grantsChecked, int excused, int resyncs, int events) {
        boolean ok() {
            return problems.isEmpty();
        }
    }

    private WatchChecker() {
    }

    static Result check(WatchRecorder.Recording watch, List<Op> history) {
        List<String> problems = new ArrayList<>();
        List<WatchRecorder.Seen> events = watch.events();
        Set<String> seenOnce = new HashSet<>();
        Set<String> granted = new HashSet<>();
        List<long[]> gaps = new ArrayList<>();
        int resyncs = 0;
        for (int i = 0; i < events.size(); i++) {
            WatchRecorder.Seen e = events.get(i);
            if (i > 0 && e.revision() < events.get(i - 1).revision()) {
                problems.add("out of order: " + e + " after " + events.get(i - 1));
            }
            String key = e.revision() + "|" + e.type() + "|" + e.name() + "|" + e.session() + "|" + e.token();
            if (!seenOnce.add(key)) {
                problems.add("delivered twice: " + e);
            }
            if ("GRANTED".equals(e.type())) {
                granted.add(e.name() + "|" + e.token());
            }
            if ("RESYNC".equals(e.type())) {
                resyncs++;
                long from = i == 0 ? watch.opened() : events.get(i - 1).received();
                gaps.add(new long[] {from - RESYNC_SLACK_NANOS, e.received()});
            }
        }
        int checked = 0;
        int excused = 0;
        for (Op op : history) {
            if (op.kind() != Op.Kind.ACQUIRE || op.outcome() != Op.Outcome.GRANTED
                    || op.call() < watch.opened() || op.ret() > watch.closed()) {
                continue;
            }
            checked++;
            if (granted.contains(op.key() + "|" + op.token())) {
                continue;
            }
            boolean inGap = gaps.stream().anyMatch(g -> op.call() <= g[1] && op.ret() >= g[0]);
            if (inGap) {
                excused++;
            } else {
                problems.add("no GRANTED event for the grant of " + op);
            }
        }
        return new Result(problems, checked, excused, resyncs, events.size());
    }
}
