package io.warden.service.watch;

import io.warden.service.api.LockName;
import io.warden.service.api.WardenException;


/**
 * Which locks a watch covers: one lock by its full name, or every lock under a prefix. A prefix is a namespace
 * ({@code payments}: every lock of that namespace) or a namespace followed by {@code /} and the start of a path
 * ({@code payments/invoice-}: every lock whose name starts with that string).
 *
 * <p>With a {@code sessionId} as well (how the SDK learns that a hold of its session ended by a force-release or a
 * release from elsewhere), only the events of that session's requests pass, and a RESYNC lists only the covered locks
 * where that session holds or waits; without a name or prefix a session's filter covers every lock.
 *
 * <p>The hub indexes watches by {@link #name()}, {@link #prefix()} and, for a session's filter without a name,
 * {@link #sessionId()} ({@code SubscriberIndex}), and asks {@link #matches(WatchEvent)} of each candidate.
 *
 * <p>Concurrency: immutable.
 */
public record WatchFilter(String name, String prefix, String sessionId) {

    public WatchFilter {
        if ((name == null) == (prefix == null)) {
            throw new IllegalArgumentException("exactly one of name and prefix");
        }
    }

    public WatchFilter(String name, String prefix) {
        this(name, prefix, null);
    }

    /** Validates the query of {@code GET /v1/watch}; failures name the field ({@code name} or {@code prefix}). */
    public static WatchFilter of(String name, String prefix) {
        return of(name, prefix, null);
    }

    /**
     * Validates the query of {@code GET /v1/watch}; failures name the field. {@code sessionId} must have been
     * validated as a session id by the caller; with it, name and prefix may both be absent (every lock).
     */
    public static WatchFilter of(String name, String prefix, String sessionId) {
        if (name != null && prefix != null) {
            throw WardenException.invalid("prefix", "give either name or prefix, not both");
        }
        if (name == null && prefix == null) {
            if (sessionId != null) {
                return new WatchFilter(null, "", sessionId);
            }
            throw WardenException.invalid("name", "is required (or give prefix or session_id): the lock, the prefix of "
                    + "the locks or the session to watch");
        }
        if (name != null) {
            return new WatchFilter(LockName.parse("name", name).toString(), null, sessionId);
        }
        LockName.validatePrefix("prefix", prefix);
        return new WatchFilter(null, prefix, sessionId);
    }

    /** The one namespace the watched locks are in, or null for a watch of every lock (of a session, or the console's). */
    public String namespace() {
        String of = name != null ? name : prefix;
        if (of.isEmpty()) {
            return null;
        }
        int slash = of.indexOf('/');
        return slash < 0 ? of : of.substring(0, slash);
    }

    /** Every lock of the cell (the console's event log; not offered over HTTP). */
    public static WatchFilter everything() {
        return new WatchFilter(null, "");
    }

    public static WatchFilter name(LockName name) {
        return new WatchFilter(name.toString(), null);
    }

    /** Whether the lock {@code lockName} is covered (by name or prefix; the session part is not looked at here). */
    public boolean matches(String lockName) {
        if (name != null) {
            return name.equals(lockName);
        }
        if (prefix.isEmpty()) {
            return true;
        }
        return prefix.indexOf('/') < 0 ? lockName.startsWith(prefix + "/") : lockName.startsWith(prefix);
    }

    /**
     * Whether the watch wants this event: its lock is covered and, with a session, it is that session's request. The
     * hub asks this of every watch its index names for the event (see {@code SubscriberIndex}).
     */
    public boolean matches(WatchEvent event) {
        return matches(event.name()) && (sessionId == null || sessionId.equals(event.sessionId()));
    }

    /**
     * Every lock this filter covers has a name starting with this string (the names that do are one range of a sorted
     * map): the name itself, the namespace followed by {@code /}, or the string prefix.
     */
    public String rangeStart() {
        if (name != null) {
            return name;
        }
        return prefix.isEmpty() || prefix.indexOf('/') >= 0 ? prefix : prefix + "/";
    }

    @Override
    public String toString() {
        String what = name != null ? "name=" + name : "prefix=" + prefix;
        return sessionId == null ? what : what + "&session_id=" + sessionId;
    }
}
