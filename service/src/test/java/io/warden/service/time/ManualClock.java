package io.warden.service.time;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A clock for tests: time moves only when {@link #advance(Duration)} is called, which runs every task that
 * falls due, in due order, on the calling thread (tasks scheduled while advancing run too if due).
 *
 * <p>Concurrency: all state is guarded by {@code this}; tasks run outside the lock.
 */
public final class ManualClock implements Clock {
    private final PriorityQueue<Task> tasks = new PriorityQueue<>();
    private long now = 1_000_000_000L;
    private long sequence;

    @Override
    public synchronized long read() {
        return now;
    }

    @Override
    public synchronized Cancellable schedule(Duration delay, Runnable task) {
        Task t = new Task(now + Math.max(0, delay.toNanos()), sequence++, task);
        tasks.add(t);
        return () -> {
            synchronized (ManualClock.this) {
                tasks.remove(t);
            }
        };
    }

    /** Moves time forward by {@code amount}, running due tasks at their due times. */
    public void advance(Duration amount) {
        long target;
        synchronized (this) {
            target = now + amount.toNanos();
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.due > target) {
                    now = target;
                    return;
                }
                tasks.poll();
                now = Math.max(now, next.due);
            }
            next.task.run();
        }
    }

    /** Tasks not yet run, for assertions. */
    public synchronized List<Long> pendingDueTimes() {
        List<Long> due = new ArrayList<>();
        for (Task t : tasks) {
            due.add(t.due);
        }
        return due;
    }

    private record Task(long due, long seq, Runnable task) implements Comparable<Task> {
        @Override
        public int compareTo(Task o) {
            return due != o.due ? Long.compare(due, o.due) : Long.compare(seq, o.seq);
        }
    }
}
