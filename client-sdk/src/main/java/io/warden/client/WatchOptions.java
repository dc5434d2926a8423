package io.warden.client;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What a {@link WardenClient#watch watch} covers: one lock by its full name ({@link #name}), or every lock under a
 * prefix ({@link #prefix}): a namespace ({@code payments}: every lock of it) or a namespace, {@code /} and the start of
 * a path ({@code payments/invoice-}: every lock whose name starts with that string).
 *
 * <p>Thread-safety: immutable.
 */
public final class WatchOptions {
    private static final Pattern NAMESPACE = Pattern.compile("[a-z][a-z0-9-]{0,62}");
    private static final Pattern PREFIX_REST = Pattern.compile("[A-Za-z0-9._:/-]*");

    private final String name;
    private final String prefix;
    /** Set only for the client's watch of its own session's holds (not public: see {@link HoldWatch}). */
    private final String sessionId;
    /** With {@link #sessionId}: the cell whose events to watch (a gateway that serves several), or null for the default. */
    private final String cell;

    private WatchOptions(String name, String prefix) {
        this(name, prefix, null);
    }

    private WatchOptions(String name, String prefix, String sessionId) {
        this(name, prefix, sessionId, null);
    }

    private WatchOptions(String name, String prefix, String sessionId, String cell) {
        this.name = name;
        this.prefix = prefix;
        this.sessionId = sessionId;
        this.cell = cell;
    }

    /** The events of one session's requests on every lock ({@code GET /v1/watch?session_id=}). */
    static WatchOptions session(String sessionId) {
        return session(sessionId, null);
    }

    /** The events of one session's requests on every lock of cell {@code cell} ({@code &cell=}; null: the default cell). */
    static WatchOptions session(String sessionId, String cell) {
        return new WatchOptions(null, null, Objects.requireNonNull(sessionId, "sessionId"), cell);
    }

    /** The events of one lock, {@code namespace/path}. */
    public static WatchOptions name(String name) {
        return new WatchOptions(LockNames.check(name), null);
    }

    /** The events of every lock under {@code prefix}: a namespace, or a namespace, {@code /} and the start of a path. */
    public static WatchOptions prefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.length() > LockNames.MAX_LENGTH) {
            throw new IllegalArgumentException("prefix is at most " + LockNames.MAX_LENGTH + " characters, got " + prefix.length());
        }
        int slash = prefix.indexOf('/');
        String namespace = slash < 0 ? prefix : prefix.substring(0, slash);
        if (!NAMESPACE.matcher(namespace).matches()) {
            throw new IllegalArgumentException("prefix '" + prefix + "': namespace '" + namespace
                    + "' must match [a-z][a-z0-9-]{0,62}");
        }
        if (slash >= 0 && !PREFIX_REST.matcher(prefix.substring(slash + 1)).matches()) {
            throw new IllegalArgumentException("prefix '" + prefix + "': after the namespace only [A-Za-z0-9._:/-] may follow");
        }
        return new WatchOptions(null, prefix);
    }

    /** The query parameter naming what is watched, URL-safe as validated: {@code name=...} or {@code prefix=...}. */
    String query() {
        return sessionId != null ? "session_id=" + sessionId + (cell == null ? "" : "&cell=" + cell)
                : name != null ? "name=" + name : "prefix=" + prefix;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WatchOptions w && Objects.equals(name, w.name) && Objects.equals(prefix, w.prefix)
                && Objects.equals(sessionId, w.sessionId) && Objects.equals(cell, w.cell);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, prefix, sessionId, cell);
    }

    @Override
    public String toString() {
        return sessionId != null ? "session " + sessionId + (cell == null ? "" : " in cell " + cell)
                : name != null ? "name " + name : "prefix " + prefix;
    }
}
