package io.warden.console;

import java.util.Optional;

/**
 * The cell's principals, as the console sees them (with an auth file): a login is a principal's bearer token, and only
 * a principal that is an admin of every namespace may use the console (its pages show every namespace's sessions, and
 * its actions act on any of them). Implemented by the gateway over its auth file; re-read with it.
 */
public interface ConsolePrincipals {
    /** Who a token names: the principal, and whether it is admin of every namespace. */
    record Principal(String name, boolean adminEverywhere) {
    }

    /** The principal whose bearer token this is, or empty. */
    Optional<Principal> byToken(String token);
}
