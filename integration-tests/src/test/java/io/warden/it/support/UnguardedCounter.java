package io.warden.it.support;

import java.time.Duration;

/**
 * A counter with no protection of its own, incremented read-modify-write with a pause between the read and the write
 * (as in ShedLock's {@code FuzzTester}): if two clients ever hold the lock at once, an update is lost and the final
 * value falls short of the number of increments.
 *
 * <p>Concurrency: deliberately unguarded; {@code volatile} only so a lost update is a real race, not a stale cache.
 */
public final class UnguardedCounter {
    private volatile long value;

    public void incrementSlowly(Duration pause) {
        long read = value;
        if (!pause.isZero()) {
            Await.sleepQuietly(pause);
        }
        value = read + 1;
    }

    public long value() {
        return value;
    }
}
