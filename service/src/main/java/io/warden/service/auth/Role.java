package io.warden.service.auth;

import java.util.Locale;

/**
 * What a principal may do in a namespace, ordered: each role includes the ones before it (docs/api.md, authorization).
 * {@code read} sees locks, holders, waiters and watches; {@code lock} also opens sessions and takes locks;
 * {@code admin} also acts on other principals' sessions (force-release, expire, keep alive, close).
 */
public enum Role {
    READ, LOCK, ADMIN;

    /** Whether this role includes {@code needed}. */
    public boolean includes(Role needed) {
        return compareTo(needed) >= 0;
    }

    /** The role as the auth file writes it: {@code read}, {@code lock}, {@code admin}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The role named {@code text} (as the auth file writes it), or null. */
    static Role parse(String text) {
        for (Role r : values()) {
            if (r.text().equals(text)) {
                return r;
            }
        }
        return null;
    }
}
