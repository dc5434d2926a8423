package io.warden.service.lock;

import io.warden.service.time.Clock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The next look a held call takes on its own schedule, when nothing else would wake it: its lock is too large to read
 * (such a lock gives no notice when it shrinks), or its last look failed for the connection to ZooKeeper. The first
 * recheck comes a second after it is asked for, each later one twice as late, up to {@link #MAX}.
 *
 * <p>Concurrency: the count is atomic; {@link #next} is set by the look that schedules it and cancelled by the path
 * that answers the call ({@link #cancel}). A recheck set after that path ran is cancelled by {@link #schedule} itself,
 * which asks whether the call still waits only after setting it. A new recheck cancels the one it replaces, so a call
 * has one pending at a time (two schedules that race may leave one more, which runs as any look does).
 */
final class Recheck {
    /** The longest a call waits between two rechecks. */
    static final Duration MAX = Duration.ofSeconds(8);

    private final AtomicInteger count = new AtomicInteger();
    private volatile Clock.Cancellable next;

    /** Schedules {@code look}; returns its delay in milliseconds. */
    long schedule(Clock clock, BooleanSupplier waiting, Runnable look) {
        long delayMs = Math.min(MAX.toMillis(), 1000L << Math.min(count.getAndIncrement(), 10));
        Clock.Cancellable set = clock.schedule(Duration.ofMillis(delayMs), look);
        Clock.Cancellable before = next;
        next = set;
        if (before != null) {
            before.cancel();
        }
        if (!waiting.getAsBoolean()) {
            set.cancel(); // answered meanwhile: the path that answered it ran before this was set
        }
        return delayMs;
    }

    /** The call is answered: its recheck, if any, will not run. */
    void cancel() {
        Clock.Cancellable set = next;
        if (set != null) {
            set.cancel();
        }
    }
}
