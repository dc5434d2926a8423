package io.warden.console.view;

/**
 * Who looks at a page.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param actor        the name an admin logged in with, or null for a read-only viewer
 * @param adminEnabled whether this gateway has an admin credential at all (else nobody can log in)
 * @param csrf         the CSRF token an admin's forms must carry, or null for a viewer
 * @param openMode     the gateway has no auth file: anyone who reaches it may do anything (a banner says so)
 * @param principals   logins are principals' bearer tokens (an auth file), not the admin token and a name
 */
public record Viewer(String actor, boolean adminEnabled, String csrf, boolean openMode, boolean principals) {
    public Viewer(String actor, boolean adminEnabled, String csrf) {
        this(actor, adminEnabled, csrf, false, false);
    }

    public static Viewer anonymous(boolean adminEnabled) {
        return new Viewer(null, adminEnabled, null);
    }

    /** Whether admin actions may be offered. */
    public boolean admin() {
        return actor != null && csrf != null;
    }
}
