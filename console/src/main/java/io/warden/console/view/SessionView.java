package io.warden.console.view;

/**
 * The page of one session.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param row null when the snapshot has no such session (it expired, was closed, or never existed)
 */
public record SessionView(String sessionId, SessionRow row, AsOf asOf) {
}
