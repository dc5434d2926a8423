package io.warden.service.auth;

import java.util.List;
import java.util.Objects;

/**
 * Who is making a request: a principal of the auth file with its grants, or {@link #OPEN} when the gateway runs without
 * an auth file (open mode: everyone may do everything). Immutable.
 *
 * @param name   the principal's name ({@code [a-z0-9._-]{1,64}}), or null for {@link #OPEN}
 * @param grants what it may do, per namespace
 */
public record Caller(String name, List<Grant> grants) {
    /** Every request of a gateway without an auth file. */
    public static final Caller OPEN = new Caller(null, List.of(new Grant(Grant.ANY, Role.ADMIN)));

    public Caller {
        grants = List.copyOf(grants);
    }

    /** Whether this is open mode's caller (no auth file). */
    public boolean open() {
        return name == null;
    }

    /** The highest role granted in {@code namespace}, or null for none. */
    public Role role(String namespace) {
        Role best = null;
        for (Grant g : grants) {
            if (g.covers(namespace) && (best == null || g.role().includes(best))) {
                best = g.role();
            }
        }
        return best;
    }

    /** Whether the caller has at least {@code needed} in {@code namespace}. */
    public boolean may(String namespace, Role needed) {
        Role r = role(namespace);
        return r != null && r.includes(needed);
    }

    /** Whether the caller has at least {@code needed} in every namespace, present and future ({@code *}). */
    public boolean mayEverywhere(Role needed) {
        for (Grant g : grants) {
            if (g.namespace().equals(Grant.ANY) && g.role().includes(needed)) {
                return true;
            }
        }
        return false;
    }

    /** Whether this caller is the principal {@code owner} (a session's); never for open mode or an owner-less session. */
    public boolean is(String owner) {
        return name != null && Objects.equals(name, owner);
    }

    /** For logs: the principal's name, or {@code (open mode)}. */
    public String label() {
        return name == null ? "(open mode)" : name;
    }
}
