package io.warden.service.api;

/**
 * Counts for one namespace: live locks, holds, queued requests, and distinct sessions with a hold or a wait in it.
 * {@code tooLargeLocks} of the locks were too large for the gateway to read: their holds, waits and sessions are not in
 * the other counts.
 */
public record NamespaceStats(String namespace, int locks, int holders, int waiters, int sessions, int tooLargeLocks) {
    public NamespaceStats(String namespace, int locks, int holders, int waiters, int sessions) {
        this(namespace, locks, holders, waiters, sessions, 0);
    }
}
