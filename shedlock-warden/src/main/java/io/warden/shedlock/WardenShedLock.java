package io.warden.shedlock;

import io.warden.client.Hold;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;

/**
 * The Warden hold and fencing token of the ShedLock job running on this thread. {@link WardenLockProvider#lock} records
 * the grant on the thread that calls it, which for ShedLock's {@code LockingTaskExecutor} and Spring's
 * {@code @SchedulerLock} is the thread that then runs the job; the job's unlock forgets it again. So, in the job:
 * <pre>{@code
 * long token = WardenShedLock.currentToken();              // pass it with every write: the resource refuses lower ones
 * FencedWrite.apply(WardenShedLock.currentHold(), t -> store.write(report, t));   // checks isValid() first
 * }</pre>
 * With nested locks the innermost one is current; {@link #hold(String)} finds one by its ShedLock name. A job that
 * hands work to other threads passes the token (or the hold) along itself, or asks
 * {@link WardenLockProvider#holdOf(String)}.
 *
 * <p>The token is the grant's for good: it stays readable after the hold has ended (its {@code lockAtMostFor} passed,
 * or the hold was lost), because writing with it is then exactly what the resource must refuse. Whether the hold is
 * still valid is {@link Hold#isValid()}; {@link Hold#lost()} completes when it was lost. Do not release the hold
 * yourself: ShedLock's unlock does, after {@code lockAtLeastFor}.
 *
 * <p>Concurrency: the state is thread-local; only the owning thread reads or writes its deque. A grant unlocked from
 * another thread, or whose extension failed, is dropped from this thread's deque the next time this thread looks.
 */
public final class WardenShedLock {
    private static final ThreadLocal<Deque<Grant>> ACTIVE = new ThreadLocal<>();

    private WardenShedLock() {
    }

    /**
     * The hold of the innermost ShedLock lock this thread took through a {@link WardenLockProvider} and has not
     * unlocked.
     *
     * @throws IllegalStateException when this thread holds none (not called from the locked job, or from another thread)
     */
    public static Hold currentHold() {
        return current().hold();
    }

    /**
     * The fencing token of {@link #currentHold()}: larger than the token of every earlier holder of the lock, on any
     * node.
     *
     * @throws IllegalStateException when this thread holds no such lock
     */
    public static long currentToken() {
        return current().token();
    }

    /** The hold of the ShedLock lock {@code shedLockName} taken on this thread and not unlocked, if any. */
    public static Optional<Hold> hold(String shedLockName) {
        Deque<Grant> active = active(false);
        if (active == null) {
            return Optional.empty();
        }
        for (Iterator<Grant> it = active.descendingIterator(); it.hasNext(); ) {
            Grant g = it.next();
            if (g.shedLockName().equals(shedLockName)) {
                return Optional.of(g.hold());
            }
        }
        return Optional.empty();
    }

    private static Grant current() {
        Deque<Grant> active = active(false);
        if (active == null || active.isEmpty()) {
            throw new IllegalStateException("this thread holds no ShedLock lock of a WardenLockProvider: call it from"
                    + " the locked job's own thread while the job runs");
        }
        return active.peekLast();
    }

    /** The provider took {@code grant} on this thread. */
    static void started(Grant grant) {
        active(true).addLast(grant);
    }

    /** ShedLock unlocked {@code grant} (on this thread, normally the one that took it). */
    static void unlocked(Grant grant) {
        Deque<Grant> active = ACTIVE.get();
        if (active != null) {
            active.removeLastOccurrence(grant);
            if (active.isEmpty()) {
                ACTIVE.remove();
            }
        }
    }

    /**
     * This thread's grants, without those ShedLock is done with (unlocked from another thread, or whose extension failed:
     * ShedLock's unlock of such a lock throws before it reaches the provider); null when none and not {@code create}.
     */
    private static Deque<Grant> active(boolean create) {
        Deque<Grant> active = ACTIVE.get();
        if (active != null) {
            active.removeIf(Grant::finished);
            if (active.isEmpty() && !create) {
                ACTIVE.remove();
                return null;
            }
        } else if (create) {
            active = new ArrayDeque<>();
            ACTIVE.set(active);
        }
        return active;
    }
}
