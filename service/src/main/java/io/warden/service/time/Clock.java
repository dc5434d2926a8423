package io.warden.service.time;

import java.time.Duration;

/**
 * A ticker that can also run a task after a delay measured on that ticker. Production uses
 * {@link SystemClock}; tests use {@code ManualClock}, which runs due tasks when advanced.
 *
 * <p>Thread-safety: implementations are safe for concurrent use. Tasks run on the clock's own thread(s)
 * and must not block.
 */
public interface Clock extends Ticker {
    /** Runs {@code task} once {@code delay} has passed on this clock; the returned handle cancels it. */
    Cancellable schedule(Duration delay, Runnable task);

    @FunctionalInterface
    interface Cancellable {
        void cancel();
    }
}
