package io.warden.console;

import java.time.Duration;
import java.util.Objects;

/**
 * How the console runs.
 *
 * @param adminToken   the admin credential; null or blank turns admin actions off (the console is then read-only for
 *                     everyone). Every gateway of a cell should be given the same one: logins are signed with it, so
 *                     a login made on one gateway is valid on all.
 * @param pollInterval how often live fragments refresh
 * @param loginTtl     how long an admin login lasts
 * @param principals   the cell's principals when the gateway has an auth file, else null (open mode). With them every
 *                     page needs a login with the bearer token of a principal that is admin of every namespace, and
 *                     the admin token (if any) only signs the logins, so that they are valid on every gateway that
 *                     has the same one; without one, logins are valid on this gateway only
 */
public record ConsoleSettings(String adminToken, Duration pollInterval, Duration loginTtl, ConsolePrincipals principals) {
    public ConsoleSettings(String adminToken, Duration pollInterval, Duration loginTtl) {
        this(adminToken, pollInterval, loginTtl, null);
    }

    public static final Duration DEFAULT_POLL = Duration.ofSeconds(2);
    public static final Duration DEFAULT_LOGIN_TTL = Duration.ofHours(8);

    public ConsoleSettings {
        Objects.requireNonNull(pollInterval, "pollInterval");
        Objects.requireNonNull(loginTtl, "loginTtl");
        if (pollInterval.toMillis() < 100) {
            throw new IllegalArgumentException("pollInterval must be at least 100 ms, got " + pollInterval.toMillis() + " ms");
        }
        if (adminToken != null && adminToken.isBlank()) {
            adminToken = null;
        }
        if (adminToken != null && adminToken.length() < 16) {
            throw new IllegalArgumentException("the console admin token must be at least 16 characters, got "
                    + adminToken.length());
        }
    }

    public static ConsoleSettings readOnly() {
        return new ConsoleSettings(null, DEFAULT_POLL, DEFAULT_LOGIN_TTL);
    }

    /** Whether anyone can log in: an admin token in open mode, always with principals. */
    public boolean adminEnabled() {
        return adminToken != null || principals != null;
    }

    /** Whether the gateway runs without an auth file (the console shows a banner saying so). */
    public boolean openMode() {
        return principals == null;
    }
}
