package io.warden.console.view;

/**
 * A namespace's counts on the overview.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param locks    locks with a queue
 * @param holders  holding requests
 * @param waiters  waiting requests
 * @param sessions distinct sessions with a hold or a wait in the namespace (a session is not bound to one namespace)
 */
public record NamespaceCount(String name, int locks, int holders, int waiters, int sessions) {
}
