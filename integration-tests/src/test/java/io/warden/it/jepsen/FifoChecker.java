package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The FIFO and shared-runs checker (contract §2.5) over a lock of readers and writers: a request's token is its queue
 * node's zxid, so tokens give the queue order. For two grants {@code a} and {@code b} of one name with
 * {@code a.token < b.token} where at least one is EXCLUSIVE, {@code b} may hold only after {@code a}'s hold ended: a
 * writer waits for everyone queued before it, and a reader never overtakes a queued writer. A violation for sure:
 * {@code b}'s grant was answered before {@code a}'s hold could have begun to end (its release was called, or its
 * session could legally have ended). Reader after reader is free to overlap, which is what a shared run is; the
 * report counts the grants that did (a run of readers at once).
 *
 * <p>Only grants are compared: a request that was not granted (timed out and cancelled, or its session ended) left the
 * queue without holding. Sound without knowing when anything took effect inside its call: it never reports a history
 * a correct service could have produced.
 *
 * <p>Thread-safety: stateless.
 */
final class FifoChecker {
    record Result(List<String> problems, int grants, int overlappingReaders) {
        boolean ok() {
            return problems.isEmpty();
        }
    }

    private FifoChecker() {
    }

    /** One grant and the earliest moment its hold may have ended. */
    private record Hold(Op grant, long earliestEnd) {
    }

    static Result check(List<Op> history, String key) {
        Map<String, Long> sessionEnds = new HashMap<>();
        for (Op op : history) {
            if (op.kind() == Op.Kind.END) {
                sessionEnds.merge(op.session(), op.call(), Math::min);
            }
        }
        Map<String, Op> releases = new HashMap<>();
        for (Op op : history) {
            if (op.kind() == Op.Kind.RELEASE && key.equals(op.key())) {
                releases.putIfAbsent(op.session() + "|" + op.token(), op);
            }
        }
        List<Hold> holds = new ArrayList<>();
        for (Op op : history) {
            if (op.kind() == Op.Kind.ACQUIRE && op.outcome() == Op.Outcome.GRANTED && key.equals(op.key())) {
                Op release = releases.get(op.session() + "|" + op.token());
                long end = Math.min(release == null ? Op.NEVER : release.call(),
                        sessionEnds.getOrDefault(op.session(), Op.NEVER));
                holds.add(new Hold(op, end));
            }
        }
        holds.sort(java.util.Comparator.comparingLong(h -> h.grant().token()));
        List<String> problems = new ArrayList<>();
        int overlapping = 0;
        for (int i = 0; i < holds.size(); i++) {
            Hold a = holds.get(i);
            for (int j = i + 1; j < holds.size(); j++) {
                Hold b = holds.get(j);
                if (b.grant().call() > a.earliestEnd()) {
                    break; // neither this b nor a later one was asked for before a's hold could end... by token order
                }
                boolean bothShared = a.grant().shared() && b.grant().shared();
                if (b.grant().ret() < a.earliestEnd()) {
                    if (bothShared) {
                        overlapping++;
                    } else {
                        problems.add("token " + b.grant().token() + " (" + b.grant().mode() + ") was granted before the "
                                + "hold of the earlier-queued token " + a.grant().token() + " (" + a.grant().mode()
                                + ") could have ended:\n    " + a.grant() + "\n    " + b.grant());
                    }
                }
            }
        }
        return new Result(problems, holds.size(), overlapping);
    }
}
