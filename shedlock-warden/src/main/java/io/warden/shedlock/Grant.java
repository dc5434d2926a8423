package io.warden.shedlock;

import io.warden.client.Hold;
import io.warden.client.LockOwnershipLostException;
import io.warden.client.WardenClientException;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One Warden hold taken for a ShedLock lock, with the two times ShedLock gives it: it is released at the latest when
 * {@code lockAtMostFor} has passed (by a timer, naming its token, so it never touches a later holder), and an unlock
 * before {@code lockAtLeastFor} has passed only moves that release to then. {@link WardenLock}s (the {@code SimpleLock}s
 * ShedLock sees) share one grant across extensions: extending moves both times, and the token stays.
 *
 * <p>Concurrency: {@code atMostUntil}, {@code atLeastUntil}, {@code unlocked}, {@code abandoned}, {@code ended} and
 * {@code timer} are guarded by {@code this}. Callers are the job's thread (unlock), any thread (extend, e.g. ShedLock's
 * {@code KeepAliveLockProvider} timer), the provider's timer thread (the release at a deadline) and the client's event
 * thread ({@link #lost()}). Every decision is taken under the monitor; the release itself, an HTTP call, runs outside
 * it, on the thread that decided to end the grant (exactly one: {@code ended} goes false to true once).
 */
final class Grant {
    private static final System.Logger log = System.getLogger(Grant.class.getName());

    private final Hold hold;
    private final String shedLockName;
    private final long token;
    private final LongSupplier ticker;
    private final ScheduledExecutorService scheduler;
    private final Consumer<Grant> onEnd;

    /** Ticker times (nanoseconds): the release is due at {@code atMostUntil}, or at {@code atLeastUntil} once unlocked. */
    private long atMostUntil;
    private long atLeastUntil;
    /** ShedLock's unlock came; the hold is kept only until {@code atLeastUntil}. */
    private boolean unlocked;
    /** An extension failed: ShedLock has no valid lock of this grant left, so no unlock will come. */
    private boolean abandoned;
    /** The hold was released (or found lost): nothing may touch it again. */
    private boolean ended;
    private ScheduledFuture<?> timer;

    Grant(Hold hold, String shedLockName, LongSupplier ticker, ScheduledExecutorService scheduler, Consumer<Grant> onEnd) {
        this.hold = hold;
        this.shedLockName = shedLockName;
        this.token = hold.token();
        this.ticker = ticker;
        this.scheduler = scheduler;
        this.onEnd = onEnd;
    }

    Hold hold() {
        return hold;
    }

    long token() {
        return token;
    }

    String shedLockName() {
        return shedLockName;
    }

    /** Sets the two deadlines, counted from {@code start} (a ticker time), and arms the release at the first. */
    void start(long start, Duration lockAtMostFor, Duration lockAtLeastFor) {
        synchronized (this) {
            atMostUntil = start + nanos(lockAtMostFor);
            atLeastUntil = start + nanos(lockAtLeastFor);
            arm(atMostUntil);
        }
        hold.lost().thenRun(this::lost);
    }

    /**
     * Moves both deadlines to {@code lockAtMostFor} and {@code lockAtLeastFor} from now. False (and the hold is let go,
     * if it was still there) when the grant cannot be extended: it was released, lost, its session may have expired
     * ({@link Hold#isValid()} is false), or {@code lockAtMostFor} has passed, even if the timer has not released it yet.
     */
    boolean extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        long now = ticker.getAsLong();
        synchronized (this) {
            if (!ended && !unlocked && now - atMostUntil < 0 && hold.isValid()) {
                atMostUntil = now + nanos(lockAtMostFor);
                atLeastUntil = now + nanos(lockAtLeastFor);
                arm(atMostUntil);
                return true;
            }
            abandoned = true;
            if (ended) {
                return false;
            }
            end();
        }
        release("it could not be extended");
        return false;
    }

    /**
     * ShedLock's unlock: releases the hold now, or at {@code lockAtLeastFor} when that has not passed yet. A grant that
     * already ended (its {@code lockAtMostFor} passed, or it was lost) is left alone: its token releases nothing of a
     * later holder's, and the loss was logged when it happened.
     */
    void unlock() {
        long now = ticker.getAsLong();
        synchronized (this) {
            if (ended) {
                log.log(System.Logger.Level.WARNING, "ShedLock lock ''{0}'' (Warden lock {1}, token {2}) had already ended before"
                        + " its unlock: the job ran past lockAtMostFor or lost its hold, so it may not have run alone",
                        shedLockName, hold.name(), token);
                return;
            }
            unlocked = true;
            if (now - atLeastUntil < 0) {
                arm(atLeastUntil); // kept for lockAtLeastFor, as ShedLock promises; the timer releases it then
                return;
            }
            end();
        }
        release("unlocked");
    }

    /**
     * Whether ShedLock is done with this grant: it unlocked it (the hold may still be kept for lockAtLeastFor), or an
     * extension failed (after which ShedLock's lock is no longer valid, so no unlock comes).
     */
    synchronized boolean finished() {
        return unlocked || abandoned;
    }

    /** Releases the hold now, whatever its deadlines (the provider closes). */
    void releaseNow() {
        synchronized (this) {
            if (ended) {
                return;
            }
            end();
        }
        release("its provider was closed");
    }

    /** The timer: releases the hold if its deadline has come (a timer armed before an extension finds it later). */
    private void due() {
        long now = ticker.getAsLong();
        boolean afterUnlock;
        synchronized (this) {
            if (ended) {
                return;
            }
            long deadline = unlocked ? atLeastUntil : atMostUntil;
            if (now - deadline < 0) {
                arm(deadline);
                return;
            }
            end();
            afterUnlock = unlocked;
        }
        if (!afterUnlock) {
            log.log(System.Logger.Level.WARNING, "ShedLock lock ''{0}'' (Warden lock {1}, token {2}): lockAtMostFor passed while"
                    + " the job still ran; releasing it, so another node may run the job now", shedLockName, hold.name(), token);
        }
        release(afterUnlock ? "lockAtLeastFor passed after its unlock" : "lockAtMostFor passed before its unlock");
    }

    /** The hold was lost (its session, or a release by someone else): it ended, and there is nothing to release. */
    private void lost() {
        synchronized (this) {
            if (ended) {
                return;
            }
            end();
        }
        log.log(System.Logger.Level.WARNING, "ShedLock lock ''{0}'' (Warden lock {1}, token {2}) was lost while held",
                shedLockName, hold.name(), token);
    }

    /** Under the monitor: marks the grant ended and stops its timer. The caller releases (or not) after leaving it. */
    private void end() {
        ended = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        onEnd.accept(this);
    }

    /** Under the monitor: (re)arms the one timer of this grant for {@code deadline} (a ticker time). */
    private void arm(long deadline) {
        if (timer != null) {
            timer.cancel(false);
        }
        long delay = Math.max(0, deadline - ticker.getAsLong());
        try {
            timer = scheduler.schedule(this::due, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            timer = null; // the provider is closing: it releases every grant itself
        }
    }

    /** Releases the hold by its token, on this thread. Never throws: ShedLock unlocks in a finally block. */
    private void release(String why) {
        try {
            hold.release();
            log.log(System.Logger.Level.DEBUG, "ShedLock lock ''{0}'' (Warden lock {1}, token {2}) released: {3}",
                    shedLockName, hold.name(), token, why);
        } catch (LockOwnershipLostException e) {
            log.log(System.Logger.Level.WARNING, "ShedLock lock ''{0}'' (Warden lock {1}, token {2}) was lost before its release: {3}",
                    shedLockName, hold.name(), token, e.getMessage());
        } catch (WardenClientException | IllegalStateException e) {
            // No gateway answered or the client is closed: the hold ends with its session at the latest.
            log.log(System.Logger.Level.WARNING, "ShedLock lock ''{0}'' (Warden lock {1}, token {2}) could not be released"
                    + " ({3}); it ends with the session at the latest", shedLockName, hold.name(), token, e.toString());
        }
    }

    /** A duration in nanoseconds, at most about 73 years, so that a ticker time plus it cannot overflow. */
    static long nanos(Duration d) {
        long cap = Long.MAX_VALUE / 4;
        return d.compareTo(Duration.ofNanos(cap)) > 0 ? cap : d.toNanos();
    }

    @Override
    public String toString() {
        return "Grant[" + shedLockName + " as " + hold.name() + " token " + token + "]";
    }
}
