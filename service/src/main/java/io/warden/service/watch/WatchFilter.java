package io.warden.service.watch;

import io.warden.service.api.LockName;
import io.warden.service.api.WardenException;

import java.util.regex.Pattern;

/**
 * Which locks a watch covers: one lock by its full name, or every lock under a prefix. A prefix is a namespace
 * ({@code payments}: every lock of that namespace) or a namespace followed by {@code /} and the start of a path
 * ({@code payments/invoice-}: every lock whose name starts with that string).
 *
 * <p>The hub indexes watches by {@link #name()} and {@link #prefix()} ({@code SubscriberIndex}); a filter with neither
 * would be checked against every event.
 *
 * <p>Concurrency: immutable.
 */
public record WatchFilter(String name, String prefix) {
    private static final Pattern PREFIX_REST = Pattern.compile("[A-Za-z0-9._:/-]*");

    public WatchFilter {
        if ((name == null) == (prefix == null)) {
            throw new IllegalArgumentException("exactly one of name and prefix");
        }
    }

    /** Validates the query of {@code GET /v1/watch}; failures name the field ({@code name} or {@code prefix}). */
    public static WatchFilter of(String name, String prefix) {
        if (name != null && prefix != null) {
            throw WardenException.invalid("prefix", "give either name or prefix, not both");
        }
        if (name == null && prefix == null) {
            throw WardenException.invalid("name", "is required (or give prefix): the lock or the prefix of the locks to watch");
        }
        if (name != null) {
            return new WatchFilter(LockName.parse("name", name).toString(), null);
        }
        if (prefix.length() > LockName.MAX_LENGTH) {
            throw WardenException.invalid("prefix", "is at most " + LockName.MAX_LENGTH + " characters, got " + prefix.length());
        }
        int slash = prefix.indexOf('/');
        LockName.validateNamespace("prefix", slash < 0 ? prefix : prefix.substring(0, slash));
        if (slash >= 0 && !PREFIX_REST.matcher(prefix.substring(slash + 1)).matches()) {
            throw WardenException.invalid("prefix", "after the namespace only [A-Za-z0-9._:/-] may follow");
        }
        return new WatchFilter(null, prefix);
    }

    /** Every lock of the cell (the console's event log; not offered over HTTP). */
    public static WatchFilter everything() {
        return new WatchFilter(null, "");
    }

    public static WatchFilter name(LockName name) {
        return new WatchFilter(name.toString(), null);
    }

    /**
     * Whether the watch wants this event. The hub asks this of every watch its index names for the event's lock (see
     * {@code SubscriberIndex}); a filter with conditions beyond the lock name (a session, say) adds them here.
     */
    public boolean matches(WatchEvent event) {
        return matches(event.name());
    }

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
        return name != null ? "name=" + name : "prefix=" + prefix;
    }
}
