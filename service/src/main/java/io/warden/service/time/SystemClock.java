package io.warden.service.time;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * {@link System#nanoTime()} and one daemon scheduler thread. Scheduled tasks must be short and non-blocking:
 * they hand work to ZooKeeper's async API and return.
 */
public final class SystemClock implements Clock, AutoCloseable {
    private final ScheduledExecutorService scheduler;

    public SystemClock(String threadName) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.scheduler = Executors.unconfigurableScheduledExecutorService(executor);
    }

    @Override
    public long read() {
        return System.nanoTime();
    }

    @Override
    public Cancellable schedule(Duration delay, Runnable task) {
        ScheduledFuture<?> f = scheduler.schedule(task, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
