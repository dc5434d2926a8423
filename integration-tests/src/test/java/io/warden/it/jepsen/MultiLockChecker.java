package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The multi-lock liveness checker (contract §2.11, §3): no multi-lock request of the random workload waits for ever.
 * Every one must be answered by a gateway (GRANTED, TIMED_OUT, or an error) within its {@code wait_ms} plus
 * {@link #BOUND_MS}; the client's own attempt gives up at {@code wait_ms} plus 5 s and tries another gateway, so a call
 * held past that shows here. A request whose call overlapped a fault, or the {@link #RECOVERY_MS} after one, is
 * excused (an answer may be lost or late then) and counted. Whether its grants were right is the mutex checker's job
 * (each name's op is in that name's history); that two multi-lock requests in crossed orders are granted at all, the
 * liveness round's ({@link ProofRun#slowToAcquire}).
 *
 * <p>Thread-safety: stateless.
 */
final class MultiLockChecker {
    /** How long past its {@code wait_ms} a request may take to be answered, at most. */
    static final long BOUND_MS = 5_000;
    /** How long after a fault a late or missing answer is still excused (an election, a gateway's reconnection). */
    static final long RECOVERY_MS = 5_000;

    record Result(List<String> problems, int requests, int granted, int excused) {
        boolean ok() {
            return problems.isEmpty();
        }
    }

    private MultiLockChecker() {
    }

    static Result check(List<MultiLockWorkload.Request> requests, List<Nemesis.Fault> faults) {
        List<String> problems = new ArrayList<>();
        int granted = 0;
        int excused = 0;
        for (MultiLockWorkload.Request r : requests) {
            if ("GRANTED".equals(r.outcome())) {
                granted++;
            }
            long tookMs = TimeUnit.NANOSECONDS.toMillis(r.ret() - r.call());
            if (r.answered() && tookMs <= r.waitMs() + BOUND_MS) {
                continue;
            }
            if (duringAFault(r.call(), r.ret(), faults)) {
                excused++;
                continue;
            }
            problems.add("multi-lock request " + r.requestId() + " of session " + r.session() + " on " + r.names()
                    + " (wait " + r.waitMs() + " ms, by " + r.process() + ") "
                    + (r.answered() ? "answered " + r.outcome() + " only after " + tookMs + " ms"
                    : "not answered by any gateway in " + tookMs + " ms")
                    + " (bound: its wait plus " + BOUND_MS + " ms), with no fault near it");
        }
        return new Result(problems, requests.size(), granted, excused);
    }

    /** Whether [{@code from}, {@code to}] overlaps a fault or the {@link #RECOVERY_MS} after it. */
    static boolean duringAFault(long from, long to, List<Nemesis.Fault> faults) {
        long recovery = TimeUnit.MILLISECONDS.toNanos(RECOVERY_MS);
        for (Nemesis.Fault f : faults) {
            if (f.start() - to < 0 && from - (f.end() + recovery) < 0) {
                return true;
            }
        }
        return false;
    }
}
