package io.warden.service.lock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The acquire calls held open on this gateway, by session id: what reconnect re-evaluation, drain,
 * {@code sessionEnded} and the answers to release and cancel look through.
 *
 * <p>Concurrency: owns {@link #bySession}. A session's set is created, changed and dropped only inside
 * {@code compute}/{@code computeIfPresent} on that session's key, so "add" and "remove, and drop the set when it is
 * empty" are each one atomic step: a call can never be added to a set that has just been dropped from the map (with
 * {@code computeIfAbsent(...).add(call)} beside {@code remove(key, emptySet)}, a call could be added to a set that the
 * remove had just dropped, and be lost). The sets are concurrent, so readers iterate them outside the map's lock; what
 * they return is a snapshot. Bounded by the calls the gateway holds open (each ends by its {@code wait_ms} timer at the
 * latest); a session has calls for at most {@code max-requests-per-session} requests, plus retries of those.
 *
 * @param <W> the call ({@link HeldCall}); compared by identity or its own equals
 */
final class WaitingCalls<W> {
    private final Map<String, Set<W>> bySession = new ConcurrentHashMap<>();

    void add(String sessionId, W call) {
        bySession.compute(sessionId, (k, set) -> {
            Set<W> calls = set != null ? set : ConcurrentHashMap.newKeySet();
            calls.add(call);
            return calls;
        });
    }

    /** Removes the call; true when it was registered. The session's entry goes with its last call. */
    boolean remove(String sessionId, W call) {
        boolean[] removed = new boolean[1];
        bySession.computeIfPresent(sessionId, (k, set) -> {
            removed[0] = set.remove(call);
            return set.isEmpty() ? null : set;
        });
        return removed[0];
    }

    /** The session's calls now (a copy). */
    List<W> of(String sessionId) {
        Set<W> set = bySession.get(sessionId);
        return set == null ? List.of() : List.copyOf(set);
    }

    /** Every call now (a copy). */
    List<W> all() {
        List<W> all = new ArrayList<>();
        bySession.values().forEach(all::addAll);
        return all;
    }

    int size() {
        return bySession.values().stream().mapToInt(Set::size).sum();
    }
}
