package io.warden.client;

import java.util.concurrent.ThreadLocalRandom;

/** Bounded exponential backoff with jitter between retries of one call: 20 ms, 40 ms, ... at most 1 s. */
final class Backoff {
    static final long BASE_MS = 20;
    static final long MAX_MS = 1000;

    private Backoff() {
    }

    /** The pause before retry number {@code attempt} (1 = the first retry), in milliseconds, jittered into [d/2, d]. */
    static long delayMs(int attempt) {
        long d = Math.min(MAX_MS, BASE_MS << Math.min(Math.max(attempt - 1, 0), 10));
        return d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1);
    }
}
