package io.warden.client;

/**
 * Told about every change of a {@link WardenClient}'s {@link SessionState}, in order, on one event thread of the
 * client. A listener must return quickly and must not block: keep work off that thread.
 *
 * <p>Thread-safety: implementations are called from the client's event thread only, one call at a time.
 */
@FunctionalInterface
public interface SessionListener {
    void stateChanged(SessionState state);
}
