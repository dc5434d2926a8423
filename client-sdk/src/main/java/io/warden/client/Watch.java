package io.warden.client;

import java.util.concurrent.CompletionStage;

/**
 * A running watch of lock events ({@link WardenClient#watch}); close it to stop.
 *
 * <p>The listener is called on one thread of the watch, in revision order, one event at a time; it should return
 * quickly (a slow listener holds up this watch's stream, and the gateway cuts a stream whose consumer falls more than
 * a megabyte behind; the watch then resumes, still without a gap). A listener that throws is logged and the watch
 * goes on.
 *
 * <p>Across reconnects (a gateway stops, drains or cannot be reached: the watch moves on to the next endpoint) the
 * listener sees every event exactly once: the watch resumes after the last revision it delivered. When that history
 * is gone at the gateway, the listener gets one {@link LockEvent.Type#RESYNC} event with the current state instead.
 *
 * <p>Thread-safety: {@link #close()} and the getters may be called from any thread, also from the listener.
 */
public interface Watch extends AutoCloseable {
    /** The revision of the last event delivered to the listener, or -1 before the first. */
    long lastRevision();

    /**
     * Completes normally once the watch is closed, or exceptionally when a gateway refused it for good (e.g. a
     * {@link WardenClientException} with code {@code PERMISSION_DENIED}); the listener is not called after either.
     */
    CompletionStage<Void> done();

    /** Stops the watch; the listener is not called after this returns (unless from the listener itself). Idempotent. */
    @Override
    void close();
}
