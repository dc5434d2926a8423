package io.warden.service.time;

/**
 * A monotonic clock in nanoseconds, like Caffeine's {@code Ticker}. Engine code never reads wall-clock time:
 * TTLs and wait deadlines are measured on a ticker so tests can advance time instead of sleeping.
 */
@FunctionalInterface
public interface Ticker {
    long read();

    static Ticker system() {
        return System::nanoTime;
    }
}
