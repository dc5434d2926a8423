package io.warden.service.zk;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The queue of a group-commit stage ({@link GroupCommit} for writes, {@link GroupRead} for reads): a call that finds
 * fewer than {@code inFlight} batches in flight is sent at once (alone, at one client: nothing ever waits for a timer);
 * the calls that arrive meanwhile wait, in order, and the next batch takes as many of them as its bounds allow when a
 * slot is free again.
 *
 * <p>A batch's slot is given back only after all its callers have been answered. Answers run the callers' continuations
 * on the ZooKeeper event thread, and what they cause (the grant decision's read after an acquire, the next client call
 * after a grant) then joins the next batch instead of going out one by one.
 *
 * <p>Concurrency: {@link #queue} and {@link #inFlight} are guarded by this object's monitor. Calls are added from any
 * thread; batches are taken off the queue under the monitor and sent outside it, by the thread that freed or found the
 * slot (a caller's, or the event thread that answered the batch before). Answers come on the ZooKeeper event thread.
 * Memory: the queue holds the calls made while a batch is in flight: each is a caller waiting for ZooKeeper, as it would
 * be without the stage; nothing else is kept.
 *
 * <p>Relies on every sent batch being answered (Curator and ZooKeeper answer each request: a reply, or an error once
 * the connection is lost and the retry policy gives up): a batch never answered would hold its slot for good.
 */
abstract class Batcher<C> {
    /** Guarded by {@code this}. */
    private final ArrayDeque<C> queue = new ArrayDeque<>();
    private final int maxInFlight;
    /** Batches sent and not yet answered. Guarded by {@code this}. */
    private int inFlight;

    Batcher(int maxInFlight) {
        this.maxInFlight = maxInFlight;
    }

    /** Queues the call and sends whatever a free slot allows. */
    final void submit(C call) {
        synchronized (this) {
            queue.addLast(call);
        }
        pump();
    }

    /** Calls waiting for a slot. */
    final synchronized int queued() {
        return queue.size();
    }

    /**
     * Removes the next batch from the head of {@code queue} and returns it: at least its first call (the queue is not
     * empty), then as many more as the bounds allow. Runs under the monitor; must be quick and must not call out.
     */
    abstract List<C> take(ArrayDeque<C> queue);

    /**
     * Sends a batch. The future completes once every call of the batch has been answered (also when sending failed:
     * the calls are then answered with that failure). Must not throw.
     */
    abstract CompletableFuture<Void> send(List<C> batch);

    private void pump() {
        while (true) {
            List<C> batch;
            synchronized (this) {
                if (inFlight >= maxInFlight || queue.isEmpty()) {
                    return;
                }
                batch = take(queue);
                inFlight++;
            }
            CompletableFuture<Void> answered = send(batch);
            if (answered.isDone()) {
                free(); // answered at once (never sent): go on here rather than recurse
                continue;
            }
            answered.whenComplete((v, e) -> {
                free();
                pump();
            });
        }
    }

    private synchronized void free() {
        inFlight--;
    }
}
