package io.warden.console.view;

/**
 * A page that explains a failure: a bad parameter (400), a missing login (401/403), an unknown page (404), an
 * unreachable gateway or ZooKeeper (503).
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param hint a next step ("log in", "go to the overview"), or null
 */
public record ErrorView(int status, String title, String message, String hint) {
}
