package io.warden.service.lock;

import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.WardenException;
import io.warden.service.time.Clock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One acquire call held on this gateway until it is answered, and where it stands ({@link State}). {@link HeldCalls}
 * moves it and answers it.
 *
 * <p>Concurrency: {@link #state} moves forward only — {@code WAITING → DONE}, or {@code WAITING → ENDING → DONE} — by
 * compare-and-set ({@link #move}); the path that moves a call out of {@code WAITING} owns it and is the only one that
 * answers it, so a call is never answered twice and never told GRANTED after its request was removed. Anything may
 * look at a call at any time (a blocker's watch, a reconnection, a timer), from ZooKeeper's event thread or the
 * gateway's timer thread, and two looks may overlap; each decides only by winning a move. The counters are atomic for
 * the same reason. {@link #timer} is set once, before the first look; {@link #recheck} has its own note.
 */
final class HeldCall {
    /** Where a held call stands. */
    enum State {
        /** Queued (or not yet looked at): any look may decide it. */
        WAITING,
        /**
         * Being ended by the path that moved it here — its wait ran out, or it was refused at admission, or it is a
         * try-lock that does not hold — which removes or keeps its request and then answers it.
         */
        ENDING,
        /** Answered, or being answered by the path that moved it here. */
        DONE
    }

    final AcquireRequest req;
    final String lockPath;
    final String uuid;
    final String node;
    final long token;
    final long startNanos;
    /** Whether this call's own multi made the request (false: a retry that found it made before). */
    final boolean made;
    final CompletableFuture<AcquireResult> future = new CompletableFuture<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.WAITING);
    /** Looks at the queue so far: the first checks admission. */
    final AtomicInteger evaluations = new AtomicInteger();
    /** Set by the first look when the request is refused at admission (a limit of the lock). */
    volatile WardenException refusal;
    /** The end of its wait ({@code wait_ms}). */
    volatile Clock.Cancellable timer;
    /** Its looks on its own schedule (a lock too large to read, a look the connection failed). */
    final Recheck recheck = new Recheck();

    HeldCall(AcquireRequest req, String lockPath, String uuid, String node, long token, long startNanos, boolean made) {
        this.req = req;
        this.lockPath = lockPath;
        this.uuid = uuid;
        this.node = node;
        this.token = token;
        this.startNanos = startNanos;
        this.made = made;
    }

    boolean waiting() {
        return state.get() == State.WAITING;
    }

    State state() {
        return state.get();
    }

    /** Moves the call from {@code from} to {@code to} (forward only); true when this caller made the move. */
    boolean move(State from, State to) {
        if (to.ordinal() <= from.ordinal()) {
            throw new IllegalArgumentException("a held call moves forward only: " + from + " -> " + to);
        }
        return state.compareAndSet(from, to);
    }
}
