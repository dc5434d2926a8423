package io.warden.service.api;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One acquire of several names at once (guarantee 11 of docs/guarantees.md): {@code names} (2 to {@link #MAX_NAMES},
 * distinct, in the caller's order) each get a queue entry, all made in one ZooKeeper transaction, and the request is
 * granted when it holds every name. {@code mode} applies to every name and is EXCLUSIVE or SHARED: a multi-lock request
 * takes no semaphore permits (docs/decisions/0012). The other fields mean what they mean in {@link AcquireRequest};
 * with {@code onDeadlock} FAIL the whole request (every entry) may be a deadlock's victim (docs/decisions/0013).
 */
public record MultiAcquireRequest(String sessionId, List<LockName> names, Mode mode, long waitMs, String requestId,
                                  OnTimeout onTimeout, boolean requestIdGiven, OnDeadlock onDeadlock) {
    public static final int MIN_NAMES = 2;
    public static final int MAX_NAMES = 64;

    /** A request whose id the caller gave, that waits out a deadlock (on_deadlock WAIT). */
    public MultiAcquireRequest(String sessionId, List<LockName> names, Mode mode, long waitMs, String requestId,
                               OnTimeout onTimeout) {
        this(sessionId, names, mode, waitMs, requestId, onTimeout, true);
    }

    /** A request that waits out a deadlock (on_deadlock WAIT). */
    public MultiAcquireRequest(String sessionId, List<LockName> names, Mode mode, long waitMs, String requestId,
                               OnTimeout onTimeout, boolean requestIdGiven) {
        this(sessionId, names, mode, waitMs, requestId, onTimeout, requestIdGiven, OnDeadlock.WAIT);
    }

    /** The same request with {@code onDeadlock}. */
    public MultiAcquireRequest withOnDeadlock(OnDeadlock value) {
        return new MultiAcquireRequest(sessionId, names, mode, waitMs, requestId, onTimeout, requestIdGiven, value);
    }

    public MultiAcquireRequest {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(names, "names");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(onTimeout, "onTimeout");
        Objects.requireNonNull(onDeadlock, "onDeadlock");
        names = List.copyOf(names);
        if (names.size() < MIN_NAMES || names.size() > MAX_NAMES) {
            throw WardenException.invalid("names", "a multi-lock request names " + MIN_NAMES + " to " + MAX_NAMES
                    + " locks, got " + names.size() + (names.size() == 1 ? " (acquire one lock with name)" : ""));
        }
        Set<LockName> seen = new HashSet<>();
        for (LockName n : names) {
            if (!seen.add(n)) {
                throw WardenException.invalid("names", "names " + n + " twice; each name may appear once");
            }
        }
        if (mode == Mode.SEMAPHORE) {
            throw WardenException.invalid("mode", "a multi-lock request is EXCLUSIVE or SHARED; SEMAPHORE takes one name");
        }
        if (waitMs < 0 || waitMs > AcquireRequest.MAX_WAIT_MS) {
            throw WardenException.invalid("wait_ms", "must be between 0 and " + AcquireRequest.MAX_WAIT_MS + ", got " + waitMs);
        }
    }

    /** A try (wait_ms 0, CANCEL): answered TIMED_OUT and removed unless it holds every name at once. */
    public boolean isTry() {
        return waitMs == 0 && onTimeout == OnTimeout.CANCEL;
    }
}
