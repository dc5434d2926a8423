package io.warden.console.view;

/**
 * The login page.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param next    where to go after logging in (a console path)
 * @param actor   the name typed so far
 * @param error   why the last attempt failed, or null
 * @param enabled whether admin login is possible at all on this gateway
 */
public record LoginView(String next, String actor, String error, boolean enabled) {
}
