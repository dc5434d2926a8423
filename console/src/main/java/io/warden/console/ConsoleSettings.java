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
 */
public record ConsoleSettings(String adminToken, Duration pollInterval, Duration loginTtl) {
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

    public boolean adminEnabled() {
        return adminToken != null;
    }
}
