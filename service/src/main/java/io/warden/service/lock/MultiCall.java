package io.warden.service.lock;

import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.MultiAcquireResult;
import io.warden.service.api.WardenException;
import io.warden.service.time.Clock;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One multi-lock acquire call held on this gateway until it is answered: its request (one record, one queue entry per
 * name, docs/decisions/0012) and where the call stands. {@link MultiLocks} moves it and answers it.
 *
 * <p>Concurrency: as {@link HeldCall}: {@link #state} moves forward only, by compare-and-set; the path that moves the
 * call out of WAITING owns it and alone answers it. Any look may run at any time, from ZooKeeper's event thread or the
 * timer thread. {@link #lockPaths} and {@link #nodes} are fixed at construction (index k: the request's k-th name).
 */
final class MultiCall {
    final MultiAcquireRequest req;
    final String uuid;
    /** The names' lock paths, in the request's order. */
    final List<String> lockPaths;
    /** The request's queue node on each name (same index as {@link #lockPaths}). */
    final List<String> nodes;
    /** The request's token before the grant rules: every entry's czxid is the one transaction's zxid (plus the floor). */
    final long token;
    final long startNanos;
    /** Whether this call's own multi made the request (false: a retry that found it made before). */
    final boolean made;
    final CompletableFuture<MultiAcquireResult> future = new CompletableFuture<>();
    private final AtomicReference<HeldCall.State> state = new AtomicReference<>(HeldCall.State.WAITING);
    /** Looks at the queues so far: the first checks admission on every name. */
    final AtomicInteger evaluations = new AtomicInteger();
    /** Set by the first look when the request is refused at admission (a limit of one of its locks). */
    volatile WardenException refusal;
    volatile Clock.Cancellable timer;
    /** Its looks on its own schedule (a lock too large to read, a look the connection failed). */
    final Recheck recheck = new Recheck();

    MultiCall(MultiAcquireRequest req, String uuid, List<String> lockPaths, List<String> nodes, long token,
              long startNanos, boolean made) {
        this.req = req;
        this.uuid = uuid;
        this.lockPaths = List.copyOf(lockPaths);
        this.nodes = List.copyOf(nodes);
        this.token = token;
        this.startNanos = startNanos;
        this.made = made;
    }

    List<String> nodePaths() {
        java.util.List<String> paths = new java.util.ArrayList<>(nodes.size());
        for (int k = 0; k < nodes.size(); k++) {
            paths.add(lockPaths.get(k) + "/" + nodes.get(k));
        }
        return paths;
    }

    boolean waiting() {
        return state.get() == HeldCall.State.WAITING;
    }

    HeldCall.State state() {
        return state.get();
    }

    boolean move(HeldCall.State from, HeldCall.State to) {
        if (to.ordinal() <= from.ordinal()) {
            throw new IllegalArgumentException("a held call moves forward only: " + from + " -> " + to);
        }
        return state.compareAndSet(from, to);
    }
}
