package io.warden.service.watch;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The watches by what their filters name: an event's candidates are the watches of its exact name, of its namespace, of
 * every string prefix of its name (looked up only at the prefix lengths in use), and those of everything; an event
 * costs the watches that may want it, not every watch. The hub still checks each candidate's whole filter
 * ({@link WatchFilter#matches(WatchEvent)}), so a filter with more conditions than its name or prefix stays correct. A
 * session's filter without a name or prefix (the SDK's watch of its own holds) is indexed by the session: an event
 * costs the watches of its session, not every session's.
 *
 * <p>Concurrency: not thread-safe; confined to the watch hub's thread. Bounded by the open watches (the hub's two
 * pools, {@link WatchHub.Limits}).
 */
final class SubscriberIndex<S> {
    private final Map<String, Set<S>> byName = new HashMap<>();
    private final Map<String, Set<S>> byNamespace = new HashMap<>();
    private final Map<String, Set<S>> byPrefix = new HashMap<>();
    /** The lengths of the string prefixes in {@link #byPrefix}, with how many prefixes have each. */
    private final TreeMap<Integer, Integer> prefixLengths = new TreeMap<>();
    private final Set<S> everything = new LinkedHashSet<>();
    private final Map<String, Set<S>> bySession = new HashMap<>();
    private int size;

    void add(S s, WatchFilter filter) {
        if (bucket(filter, true).add(s)) {
            size++;
        }
    }

    void remove(S s, WatchFilter filter) {
        Set<S> set = bucket(filter, false);
        if (set != null && set.remove(s)) {
            size--;
            if (set.isEmpty()) {
                drop(filter);
            }
        }
    }

    int size() {
        return size;
    }

    /** Every watch once (each is in exactly one bucket). */
    void forEach(Consumer<S> each) {
        byName.values().forEach(set -> set.forEach(each));
        byNamespace.values().forEach(set -> set.forEach(each));
        byPrefix.values().forEach(set -> set.forEach(each));
        everything.forEach(each);
        bySession.values().forEach(set -> set.forEach(each));
    }

    /** Every watch whose filter's name or prefix covers {@code lockName}, and those of the session's own filters. */
    void candidates(String lockName, String sessionId, Consumer<S> each) {
        Set<S> named = byName.get(lockName);
        if (named != null) {
            named.forEach(each);
        }
        int slash = lockName.indexOf('/');
        if (slash > 0 && !byNamespace.isEmpty()) {
            Set<S> ns = byNamespace.get(lockName.substring(0, slash));
            if (ns != null) {
                ns.forEach(each);
            }
        }
        if (!byPrefix.isEmpty()) {
            for (int length : prefixLengths.headMap(lockName.length(), true).keySet()) {
                Set<S> p = byPrefix.get(lockName.substring(0, length));
                if (p != null) {
                    p.forEach(each);
                }
            }
        }
        everything.forEach(each);
        if (sessionId != null && !bySession.isEmpty()) {
            Set<S> own = bySession.get(sessionId);
            if (own != null) {
                own.forEach(each);
            }
        }
    }

    /** A filter of a session over every lock: indexed by the session (the hub checks the rest of the filter). */
    private static boolean bySessionOnly(WatchFilter f) {
        return f.sessionId() != null && f.name() == null && f.prefix() != null && f.prefix().isEmpty();
    }

    private Set<S> bucket(WatchFilter f, boolean create) {
        if (bySessionOnly(f)) {
            return create ? bySession.computeIfAbsent(f.sessionId(), k -> new LinkedHashSet<>()) : bySession.get(f.sessionId());
        }
        if (f.name() != null) {
            return create ? byName.computeIfAbsent(f.name(), k -> new LinkedHashSet<>()) : byName.get(f.name());
        }
        String prefix = f.prefix();
        if (prefix.isEmpty()) {
            return everything;
        }
        if (prefix.indexOf('/') < 0) {
            return create ? byNamespace.computeIfAbsent(prefix, k -> new LinkedHashSet<>()) : byNamespace.get(prefix);
        }
        Set<S> set = byPrefix.get(prefix);
        if (set == null && create) {
            set = new LinkedHashSet<>();
            byPrefix.put(prefix, set);
            prefixLengths.merge(prefix.length(), 1, Integer::sum);
        }
        return set;
    }

    private void drop(WatchFilter f) {
        if (bySessionOnly(f)) {
            bySession.remove(f.sessionId());
        } else if (f.name() != null) {
            byName.remove(f.name());
        } else if (f.prefix() != null && !f.prefix().isEmpty()) {
            if (f.prefix().indexOf('/') < 0) {
                byNamespace.remove(f.prefix());
            } else if (byPrefix.remove(f.prefix()) != null) {
                prefixLengths.computeIfPresent(f.prefix().length(), (k, n) -> n == 1 ? null : n - 1);
            }
        }
    }
}
