package io.warden.client.direct;

import io.warden.client.AcquireTimeoutException;
import io.warden.client.FencedLock;
import io.warden.client.Hold;
import io.warden.client.LockMode;
import io.warden.client.WardenClientException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;

/**
 * A {@link FencedLock} straight in ZooKeeper: each acquire makes a new Curator {@link InterProcessReadWriteLock} on
 * the lock's node ({@link io.warden.client.LockNames#zkPath}, below the chroot), takes its read or write lock, and asks that lock for the path of the node
 * it made ({@code getLockPath()}, on the acquiring thread) to read the token.
 *
 * <p>Unlike {@link io.warden.client.WardenClient}'s locks, {@link #acquire} throws no
 * {@link io.warden.client.SessionLostException}: there is no Warden session. ZooKeeper failures that Curator's retry
 * policy gives up on are thrown as {@link WardenClientException} without a code.
 *
 * <p>Concurrency: immutable; each acquire uses its own Curator lock, so acquires of one lock on many threads are
 * independent (and not reentrant).
 */
final class DirectFencedLock implements FencedLock {
    private final DirectLocks locks;
    private final String name;
    private final String path;
    private final LockMode mode;

    DirectFencedLock(DirectLocks locks, String name, LockMode mode) {
        this.locks = locks;
        this.name = name;
        this.path = io.warden.client.LockNames.zkPath(name);
        this.mode = mode;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LockMode mode() {
        return mode;
    }

    @Override
    public Hold acquire(Duration wait) {
        check(wait);
        locks.checkOpen();
        InterProcessReadWriteLock rw = new InterProcessReadWriteLock(locks.client(), path, locks.lockData());
        boolean granted;
        try {
            // On a timeout or an interrupt Curator deletes the node it made: nothing is left queued.
            granted = mode == LockMode.EXCLUSIVE
                    ? rw.writeLock().acquire(wait.toNanos(), TimeUnit.NANOSECONDS)
                    : rw.readLock().acquire(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WardenClientException("interrupted while waiting for lock '" + name + "'; its request was cancelled", e);
        } catch (Exception e) {
            throw new WardenClientException("could not acquire lock '" + name + "' in ZooKeeper: " + e, e);
        }
        if (!granted) {
            throw new AcquireTimeoutException(name, wait);
        }
        // getLockPath() answers for the calling thread: the one that acquired.
        String node = mode == LockMode.EXCLUSIVE ? rw.writeLock().getLockPath() : rw.readLock().getLockPath();
        // Note on concurrency: an interrupt that comes once Curator has granted must not break the read of the token
        // (the grant would be thrown away); the caller gets the hold, with its interrupt flag set again: whatever the
        // race, an acquire either returns a hold or leaves none behind.
        boolean interrupted = Thread.interrupted();
        try {
            return locks.grant(name, mode, node);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits on a thread of the {@link DirectLocks} (Curator's lock blocks its thread). {@code cancel} interrupts the
     * wait, and Curator deletes the queued node; a grant that raced the cancel is released.
     */
    @Override
    public CompletableFuture<Hold> acquireAsync(Duration wait) {
        check(wait);
        locks.checkOpen();
        CompletableFuture<Hold> result = new CompletableFuture<>();
        Future<?> task;
        try {
            task = locks.waiters().submit(() -> {
                try {
                    Hold hold = acquire(wait);
                    if (!result.complete(hold)) {
                        Thread.interrupted(); // the cancel's interrupt, if it came late, must not disturb the release
                        releaseQuietly(hold);
                    }
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("these direct locks (chroot " + locks.chroot() + ") were closed", e);
        }
        result.whenComplete((hold, error) -> {
            if (result.isCancelled()) {
                task.cancel(true);
            }
        });
        return result;
    }

    private static void releaseQuietly(Hold hold) {
        try {
            hold.release();
        } catch (RuntimeException ignored) {
            // lost already: nothing left to release
        }
    }

    private static void check(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative, got " + wait);
        }
    }

    @Override
    public String toString() {
        return "FencedLock[" + name + " " + mode + " direct]";
    }
}
