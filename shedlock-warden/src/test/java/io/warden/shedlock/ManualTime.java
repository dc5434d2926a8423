package io.warden.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A ticker and a scheduler on one manual clock: {@link #advance} moves the clock and runs, on the calling thread, every
 * task that has come due, in deadline order. Single-threaded: for tests that call everything from one thread.
 */
final class ManualTime extends AbstractExecutorService implements ScheduledExecutorService {
    private long now = 1_000_000_000L;
    private final List<Task> tasks = new ArrayList<>();
    private boolean shutdown;

    /** The ticker: nanoseconds on the manual clock. */
    long read() {
        return now;
    }

    /** Moves the clock by {@code d} and runs what came due. */
    void advance(Duration d) {
        now += d.toNanos();
        runDue();
    }

    /** Moves the clock by {@code d} without running anything (a timer thread that is late). */
    void advanceWithoutRunning(Duration d) {
        now += d.toNanos();
    }

    /** Tasks scheduled and neither run nor cancelled. */
    int pending() {
        return (int) tasks.stream().filter(t -> !t.cancelled).count();
    }

    private void runDue() {
        while (true) {
            Task next = tasks.stream().filter(t -> !t.cancelled && t.at - now <= 0)
                    .min(Comparator.comparingLong(t -> t.at)).orElse(null);
            if (next == null) {
                return;
            }
            tasks.remove(next);
            next.done = true;
            next.command.run();
        }
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        if (shutdown) {
            throw new RejectedExecutionException("shut down");
        }
        Task t = new Task(now + unit.toNanos(delay), command);
        tasks.add(t);
        return t;
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> left = new ArrayList<>();
        tasks.forEach(t -> left.add(t.command));
        tasks.clear();
        return left;
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return shutdown;
    }

    @Override
    public void execute(Runnable command) {
        command.run();
    }

    private final class Task implements ScheduledFuture<Object> {
        final long at;
        final Runnable command;
        boolean cancelled;
        boolean done;

        Task(long at, Runnable command) {
            this.at = at;
            this.command = command;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(at - now, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done || cancelled) {
                return false;
            }
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }
    }
}
