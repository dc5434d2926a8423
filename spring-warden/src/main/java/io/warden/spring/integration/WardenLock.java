package io.warden.spring.integration;

import io.warden.client.AcquireTimeoutException;
import io.warden.client.FencedLock;
import io.warden.client.Hold;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * A lock of a {@link WardenLockRegistry}: a {@link java.util.concurrent.locks.Lock} that one thread at a time holds
 * across every process using the same Warden cell and lock name, with a fencing token.
 * <pre>{@code
 * WardenLock lock = registry.obtain("invoice-42");
 * lock.lock();
 * try {
 *     invoices.update(42, amount, lock.token());   // UPDATE ... SET fence = :token WHERE id = 42 AND fence < :token
 * } finally {
 *     lock.unlock();
 * }
 * }</pre>
 *
 * <h2>Threads and reentrancy</h2>
 * Like {@link ReentrantLock}: the thread that locked it owns it, may lock it again (each {@code lock} needs its
 * {@code unlock}; only the outermost ones talk to Warden, unless the grant ended meanwhile: then a nested lock asks for
 * a new grant, as Spring's JDBC and Redis registries do), and only it may unlock it: {@link #unlock()} by another
 * thread throws {@link IllegalMonitorStateException}. Threads of one process wait for each other locally before they
 * ask Warden, so a process has at most one request per lock name queued at a time.
 *
 * <h2>The fencing token</h2>
 * {@link #token()} is the token of the current grant: it grows with every grant of the name, in any process, so a
 * resource that refuses a token lower than the last one it accepted can never take a write from a holder whose lock
 * has passed on. Pass it with every write. {@link #hold()} gives the SDK's {@link Hold} itself ({@code isValid()},
 * {@code lost()}, and {@code io.warden.client.fencing.FencedWrite}).
 *
 * <h2>A lock is not a mutex</h2>
 * A holder can be paused (a GC pause, a stopped VM) past its lock's TTL or its session's, lose the lock, resume and
 * still write. Nothing in a client can prevent that; only the token, checked by the resource in the write itself, can.
 * After the session is SUSPENDED you cannot be sure you hold the lock; after it is LOST you do not.
 *
 * <h2>Time to live</h2>
 * Every grant has a TTL ({@link #lock(Duration)}, {@link #tryLock(Duration, Duration)}; the registry's default
 * otherwise). When it runs out before {@link #unlock()}, the registry releases the grant (logged as a warning) and the
 * next process may take the lock; {@link WardenLockRegistry#renewLock(Object, Duration)} starts it over. The TTL is
 * kept by the registry's timer in this process; should the process stop or be cut off, its Warden session's TTL ends
 * the grant instead. An {@code unlock()} after the grant ended without it (the TTL ran out, or the hold was lost: the
 * session expired, an admin force-released it) throws {@link java.util.ConcurrentModificationException}, as Spring's
 * own registries do, and still frees the lock for this process's threads.
 *
 * <p>{@link #newCondition()} is not supported.
 *
 * <p>Concurrency: {@code local} is the thread ownership and reentrancy; {@code grant} is written by the owning thread
 * while it holds {@code local} (set by the outermost lock, cleared by the outermost unlock) and read by the registry's
 * {@code close()}; {@code retired} is written with {@code local} held; the grant itself is thread-safe ({@link Grant}).
 */
public final class WardenLock implements DistributedLock {
    private static final System.Logger log = System.getLogger(WardenLock.class.getName());

    /** A wait that does not end; the SDK keeps the request's place in the queue across its calls. */
    static final Duration FOREVER = Duration.ofDays(3650);

    private final WardenLockRegistry registry;
    private final String key;
    private final FencedLock remote;
    private final ReentrantLock local = new ReentrantLock();
    private volatile Grant grant;
    private volatile long lastUsedNanos;
    private volatile boolean retired;

    WardenLock(WardenLockRegistry registry, String key, FencedLock remote) {
        this.registry = registry;
        this.key = key;
        this.remote = remote;
        this.lastUsedNanos = System.nanoTime();
    }

    /** The Warden lock name: the registry's prefix, a slash, and the key. */
    public String name() {
        return remote.name();
    }

    /** Waits, not interruptibly, for the lock with the registry's default TTL. */
    @Override
    public void lock() {
        lock(registry.defaultTtl());
    }

    /**
     * Waits, not interruptibly, for the lock with this TTL. An interrupt while it waits is kept (the interrupt flag is
     * set again once the lock is held), as {@link java.util.concurrent.locks.Lock#lock()} requires.
     *
     * @throws IllegalArgumentException when {@code ttl} is not positive
     * @throws CannotAcquireLockException when Warden refused the request or could not be reached
     */
    @Override
    public void lock(Duration ttl) {
        WardenLockRegistry.checkTtl(ttl, "ttl");
        local.lock();
        try {
            acquire(FOREVER, ttl, false, true);
        } catch (InterruptedException notThrownWhenUninterruptible) {
            local.unlock();
            throw new IllegalStateException(notThrownWhenUninterruptible);
        } catch (RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    /**
     * Waits for the lock with the registry's default TTL; an interrupt cancels the request (it leaves nothing queued
     * and no grant behind) and throws {@link InterruptedException}.
     */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        try {
            acquire(FOREVER, registry.defaultTtl(), true, true);
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    /** Takes the lock if it is free now (one call to Warden), with the registry's default TTL. */
    @Override
    public boolean tryLock() {
        try {
            return tryLock(Duration.ZERO, registry.defaultTtl(), false);
        } catch (InterruptedException notThrownWhenUninterruptible) {
            throw new IllegalStateException(notThrownWhenUninterruptible);
        }
    }

    /** Waits up to {@code time} for the lock, with the registry's default TTL; interruptible. */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return tryLock(Duration.ofNanos(unit.toNanos(Math.max(0, time))), registry.defaultTtl(), true);
    }

    /**
     * Waits up to {@code waitTime} for the lock, with this TTL; interruptible (an interrupt cancels the request).
     *
     * @return whether the lock was acquired in time
     * @throws IllegalArgumentException when {@code waitTime} is negative or {@code ttl} is not positive
     * @throws CannotAcquireLockException when Warden refused the request or could not be reached
     */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        return tryLock(waitTime, ttl, true);
    }

    private boolean tryLock(Duration waitTime, Duration ttl, boolean interruptibly) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        if (waitTime.isNegative()) {
            throw new IllegalArgumentException("waitTime must not be negative, got " + waitTime);
        }
        WardenLockRegistry.checkTtl(ttl, "ttl");
        Duration wait = waitTime.compareTo(FOREVER) > 0 ? FOREVER : waitTime;
        long deadline = System.nanoTime() + wait.toNanos();
        boolean locked = interruptibly ? local.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS) : local.tryLock();
        if (!locked) {
            return false;
        }
        try {
            Duration remaining = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            if (acquire(remaining, ttl, interruptibly, false)) {
                return true;
            }
            local.unlock();
            return false;
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    /**
     * Called by a thread that has just locked {@code local} (once more, when nested): makes sure it has a grant.
     * Nested, while the grant is not over, nothing is asked of Warden. Outermost, or nested after the grant ended without
     * this thread (its TTL ran out, or the hold was lost), a new grant is asked for, as Spring's JDBC and Redis registries
     * acquire again in a nested lock; the ended grant is then dropped, and the outermost unlock releases the new one.
     *
     * @param forever wait until granted ({@code wait} is then the wait of each call to Warden)
     * @return whether this thread has a live grant now (false only when the wait ran out)
     */
    private boolean acquire(Duration wait, Duration ttl, boolean interruptibly, boolean forever) throws InterruptedException {
        Grant current = grant;
        if (local.getHoldCount() > 1 && current != null && !current.isOver()) {
            return true;
        }
        Hold hold;
        do {
            hold = outcome(remote.acquireAsync(wait), interruptibly);
        } while (hold == null && forever);
        if (hold == null) {
            return false;
        }
        if (current != null) {
            current.abandon();
        }
        begin(hold, ttl);
        return true;
    }

    /**
     * The hold an acquire ends with; null when the wait ran out. Interruptibly, an interrupt cancels the request (the
     * SDK removes it from the queue, and releases a grant that won the race) and is thrown.
     */
    private Hold outcome(CompletableFuture<Hold> pending, boolean interruptibly) throws InterruptedException {
        try {
            return interruptibly ? pending.get() : pending.join();
        } catch (InterruptedException e) {
            pending.cancel(true);
            throw e;
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof AcquireTimeoutException) {
                return null;
            }
            throw new CannotAcquireLockException("could not lock '" + name() + "': " + cause.getMessage(), cause);
        } catch (CancellationException e) {
            throw new CannotAcquireLockException("could not lock '" + name() + "': the request was cancelled", e);
        }
    }

    // Called by the owning thread, holding local.
    private void begin(Hold hold, Duration ttl) {
        if (retired) {
            // expireUnusedOlderThan dropped this lock from the registry after the caller obtained it: put it back, so
            // that obtain() goes on returning the lock this thread holds.
            retired = false;
            registry.reinstate(key, this);
        }
        Grant g;
        try {
            g = new Grant(hold, ttl, registry.timer());
        } catch (RejectedExecutionException closed) {
            hold.release();
            throw new IllegalStateException("the lock registry was closed while lock '" + name() + "' was being"
                    + " acquired; the grant was released", closed);
        }
        var renewals = registry.renewalScheduler();
        if (renewals != null) {
            g.renewEvery(renewals);
        }
        grant = g;
        lastUsedNanos = System.nanoTime();
        log.log(System.Logger.Level.DEBUG, "locked ''{0}'' (token {1}, TTL {2} ms)", name(), g.token, ttl.toMillis());
    }

    /**
     * Unlocks once; the outermost unlock releases the grant in Warden.
     *
     * @throws IllegalMonitorStateException when the current thread does not own the lock
     * @throws java.util.ConcurrentModificationException when the grant had already ended without this unlock (its TTL
     *                                                   ran out, or it was lost); the lock is free for this process
     *                                                   all the same
     */
    @Override
    public void unlock() {
        Grant g = ownGrant();
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        grant = null;
        lastUsedNanos = System.nanoTime();
        try {
            g.release();
            log.log(System.Logger.Level.DEBUG, "unlocked ''{0}'' (token {1})", name(), g.token);
        } finally {
            local.unlock();
        }
    }

    /**
     * The fencing token of the grant the current thread holds (nested locks keep it, unless one took a new grant after
     * this one ended): larger than the token of every earlier grant of this name, in any process. Still answered after the TTL ran out or the hold was
     * lost (the resource, not the lock, decides whether it is stale).
     *
     * @throws IllegalMonitorStateException when the current thread does not own the lock
     */
    public long token() {
        return ownGrant().token;
    }

    /**
     * The SDK's hold of the grant the current thread holds: {@link Hold#isValid()}, {@link Hold#lost()}, and the value
     * {@code io.warden.client.fencing.FencedWrite} takes. Release it through {@link #unlock()}, not through the hold.
     *
     * @throws IllegalMonitorStateException when the current thread does not own the lock
     */
    public Hold hold() {
        return ownGrant().hold;
    }

    /** Whether the current thread owns the lock. */
    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** Whether a thread of this process owns the lock. */
    public boolean isAcquiredInThisProcess() {
        return local.isLocked();
    }

    /**
     * Starts the current grant's TTL over (see {@link WardenLockRegistry#renewLock(Object, Duration)}).
     *
     * @throws IllegalMonitorStateException when the current thread does not own the lock
     * @throws IllegalStateException when the grant has ended (its TTL ran out) or its hold is not valid
     */
    void renew(Duration ttl) {
        WardenLockRegistry.checkTtl(ttl, "ttl");
        Grant g = ownGrant();
        if (!g.renew(ttl)) {
            throw new IllegalStateException("could not renew lock '" + name() + "' (token " + g.token + "): its TTL has"
                    + " run out or the hold is no longer valid (lost, or the session may have expired)");
        }
    }

    private Grant ownGrant() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("the current thread does not own lock '" + name() + "'");
        }
        return grant;
    }

    long lastUsedNanos() {
        return lastUsedNanos;
    }

    /**
     * For {@link WardenLockRegistry#expireUnusedOlderThan}: marks this lock retired when no thread holds it and it was
     * last used before {@code cutoffNanos}. Holding {@code local} while deciding keeps a thread from taking the lock
     * in between; a thread that obtained it before and locks it later puts it back ({@link #begin}).
     */
    boolean retireIfUnusedSince(long cutoffNanos) {
        if (!local.tryLock()) {
            return false;
        }
        try {
            if (local.getHoldCount() > 1 || lastUsedNanos - cutoffNanos >= 0) {
                return false;
            }
            retired = true;
            return true;
        } finally {
            local.unlock();
        }
    }

    /** Releases the grant a thread still holds (the registry is closing); the owner's unlock then finds it ended. */
    void abandon() {
        Grant g = grant;
        if (g != null) {
            g.abandon();
        }
    }

    /** Not supported: a Warden lock has no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("conditions are not supported by Warden locks");
    }

    @Override
    public String toString() {
        Grant g = grant;
        return "WardenLock[" + name() + (g == null ? ", unlocked" : ", token " + g.token) + "]";
    }
}
