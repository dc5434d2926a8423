package io.warden.spring.integration;

import io.warden.client.Hold;
import io.warden.client.LockOwnershipLostException;
import io.warden.client.WardenClientException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.springframework.scheduling.TaskScheduler;

/**
 * One grant of a {@link WardenLock}: the SDK's {@link Hold} and the lock's time to live, after which the registry
 * releases the hold unless it was renewed.
 *
 * <p>Concurrency: made by the thread that acquired the lock; {@link #release()} is called by that thread, {@link #renew}
 * by it or by a renewal task, {@link #expire} by the registry's timer thread. The fields below {@code token} are guarded
 * by {@code this}; the hold is released outside the monitor (a release is an HTTP call), exactly once, by whichever of
 * the owner's release and the expiry sets {@code ended} first.
 */
final class Grant {
    private static final System.Logger log = System.getLogger(Grant.class.getName());

    final Hold hold;
    final long token;
    private final ScheduledExecutorService timer;
    private volatile boolean lost; // set once, when the hold's lost() completes

    // Guarded by this.
    private boolean ended;
    private String endedWithoutOwner; // null, or how the grant ended without its owner's unlock
    private Duration ttl;
    private long generation;
    private ScheduledFuture<?> expiry;
    private ScheduledFuture<?> renewal;

    Grant(Hold hold, Duration ttl, ScheduledExecutorService timer) {
        this.hold = hold;
        this.token = hold.token();
        this.timer = timer;
        hold.lost().thenRun(() -> lost = true);
        synchronized (this) {
            expireAfter(ttl);
        }
    }

    /**
     * Renews the TTL every third of it on {@code scheduler} until the grant ends. A renewal that finds the hold not
     * valid (the session may be expiring) does nothing, so the TTL runs out unless a later one succeeds.
     */
    synchronized void renewEvery(TaskScheduler scheduler) {
        if (ended) {
            return;
        }
        Duration each = ttl;
        Duration period = each.dividedBy(3).isZero() ? Duration.ofMillis(1) : each.dividedBy(3);
        renewal = scheduler.scheduleWithFixedDelay(() -> renew(each), period);
    }

    /**
     * Whether the grant is over without its owner's release: its TTL ran out, the registry was closed, or the hold was
     * lost. A hold that is merely not valid now (the session may be expiring) is not over: it may become valid again.
     */
    synchronized boolean isOver() {
        return ended || lost;
    }

    /**
     * Starts the TTL over at {@code ttl} from now; false when the grant has ended (released, or expired) or the hold is
     * no longer valid (lost, or the session may have expired: nobody can be sure it still holds the lock).
     */
    synchronized boolean renew(Duration ttl) {
        if (ended || !hold.isValid()) {
            return false;
        }
        expireAfter(ttl);
        return true;
    }

    // Guarded by this (called with the monitor held).
    private void expireAfter(Duration ttl) {
        this.ttl = ttl;
        if (expiry != null) {
            expiry.cancel(false);
        }
        // An expiry task that already runs (and waits for the monitor) must not end a grant renewed meanwhile: each
        // task carries the generation it was scheduled for, and only the latest one acts.
        long scheduledFor = ++generation;
        expiry = timer.schedule(() -> expire(scheduledFor), ttl.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void expire(long scheduledFor) {
        Duration lasted;
        synchronized (this) {
            if (ended || scheduledFor != generation) {
                return;
            }
            ended = true;
            lasted = ttl;
            endedWithoutOwner = "when its TTL of " + lasted.toMillis() + " ms ran out";
            if (renewal != null) {
                renewal.cancel(false);
            }
        }
        log.log(System.Logger.Level.WARNING, "lock ''{0}'' (token {1}) was still locked when its TTL of {2} ms ran out:"
                + " released; its holder''s unlock() will throw", hold.name(), token, lasted.toMillis());
        releaseQuietly();
    }

    /** Ends the grant from outside its owner (the registry is closing): releases the hold, reports nothing. */
    void abandon() {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            endedWithoutOwner = "when its registry was closed";
            cancelTimers();
        }
        releaseQuietly();
    }

    private void releaseQuietly() {
        try {
            hold.release();
        } catch (LockOwnershipLostException | WardenClientException e) {
            log.log(System.Logger.Level.DEBUG, "releasing lock ''{0}'' (token {1}): {2}", hold.name(), token, e.getMessage());
        }
    }

    // Guarded by this.
    private void cancelTimers() {
        if (expiry != null) {
            expiry.cancel(false);
        }
        if (renewal != null) {
            renewal.cancel(false);
        }
    }

    /**
     * The owner's unlock: releases the hold (naming its token, so it never touches a later holder's grant).
     *
     * @throws ConcurrentModificationException when the grant had already ended without the owner: its TTL ran out, the
     *                                         registry was closed, or the hold was lost (the session expired, an
     *                                         admin force-released it); whatever the lock guarded may have been
     *                                         changed by another holder
     */
    void release() {
        String without;
        synchronized (this) {
            without = endedWithoutOwner;
            ended = true;
            cancelTimers();
        }
        if (without != null) {
            throw new ConcurrentModificationException("lock '" + hold.name() + "' (token " + token + ") was released "
                    + without + ", before this unlock; another holder may have taken it since, so the data it"
                    + " protects may have been changed concurrently");
        }
        // An interrupted owner still releases before unlock() returns (the SDK would leave an interrupted release to
        // the background, and the next holder would wait for it): the flag is cleared for the call and set again.
        boolean interrupted = Thread.interrupted();
        try {
            hold.release();
        } catch (LockOwnershipLostException gone) {
            throw new ConcurrentModificationException("lock '" + hold.name() + "' (token " + token + ") was lost"
                    + " before this unlock (" + gone.getMessage() + "); another holder may have taken it since, so the"
                    + " data it protects may have been changed concurrently", gone);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
