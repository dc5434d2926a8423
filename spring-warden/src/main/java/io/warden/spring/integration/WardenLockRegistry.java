package io.warden.spring.integration;

import io.warden.client.LockNames;
import io.warden.client.WardenClient;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * Spring Integration's {@code LockRegistry} on Warden: distributed, fenced, renewable locks that expire when their
 * holder stops renewing them. Every lock of the registry is held in the session of one {@link WardenClient} (the
 * application's, one per process), under the name {@code prefix + "/" + key}.
 * <pre>{@code
 * WardenClient warden = WardenClient.builder().endpoints("http://gw1:7070", "http://gw2:7070").clientId("billing")
 *         .sessionTtl(Duration.ofSeconds(10)).build();                          // one per process, closed last
 * WardenLockRegistry registry = new WardenLockRegistry(warden, "billing", Duration.ofSeconds(30)); // billing/{key}
 *
 * // the lock's fencing token goes with every write
 * registry.executeLocked("invoice-42", () -> invoices.update(42, amount, registry.obtain("invoice-42").token()));
 * }</pre>
 *
 * <p>Two registries (two processes, or two clients in one) exclude each other on the same name; within a registry a
 * lock is owned by a thread and is reentrant ({@link WardenLock}). Keys are strings: one to eight path segments of
 * letters, digits and {@code . _ : -}, separated by {@code /}.
 *
 * <p><b>Time to live.</b> A grant lasts until {@code unlock()}, or until its TTL runs out without a
 * {@link #renewLock(Object) renewal}, when the registry releases it so that another process can take the lock (and the
 * holder's {@code unlock()} throws {@link java.util.ConcurrentModificationException}). With a
 * {@link #setRenewalTaskScheduler renewal scheduler}, every grant is renewed every third of its TTL until it is
 * unlocked, so it expires only when its process stops. The TTL is counted by this registry; if the process stops or is
 * cut off from Warden, its session's TTL ends its grants instead.
 *
 * <p><b>Cached locks.</b> {@link #obtain} returns the same {@link WardenLock} for the same key until
 * {@link #expireUnusedOlderThan} drops it, which it does only for locks that no thread holds. Call it now and then in
 * an application that uses many keys.
 *
 * <p>{@link #close()} releases the grants still held and stops the registry's timer; it does not close the
 * {@link WardenClient}, which belongs to the application.
 *
 * <p>Concurrency: thread-safe. {@code locks} is a concurrent map whose entries change only in its atomic
 * {@code compute} methods; {@code renewalScheduler} is volatile; {@code closed} goes false to true once.
 */
public final class WardenLockRegistry
        implements ExpirableLockRegistry<WardenLock>, RenewableLockRegistry<WardenLock>, AutoCloseable {
    /** The TTL of a grant when none is given: 60 seconds, as Spring's Redis registry. */
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(60);

    private static final AtomicInteger REGISTRIES = new AtomicInteger();

    private final WardenClient warden;
    private final String prefix;
    private final Duration defaultTtl;
    private final ScheduledThreadPoolExecutor timer;
    private final ConcurrentHashMap<String, WardenLock> locks = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile TaskScheduler renewalScheduler;

    /** A registry of the locks {@code prefix/key}, with {@link #DEFAULT_TTL}. */
    public WardenLockRegistry(WardenClient warden, String prefix) {
        this(warden, prefix, DEFAULT_TTL);
    }

    /**
     * A registry of the locks {@code prefix/key} whose grants last {@code defaultTtl} unless another TTL is given.
     *
     * @param warden     the client whose session holds the locks; not closed by this registry
     * @param prefix     a Warden namespace ({@code billing}), optionally followed by path segments
     *                   ({@code billing/jobs}): the key is appended after a slash
     * @param defaultTtl positive
     * @throws IllegalArgumentException when the prefix is not a namespace and path or the TTL is not positive
     */
    public WardenLockRegistry(WardenClient warden, String prefix, Duration defaultTtl) {
        this.warden = Objects.requireNonNull(warden, "warden");
        Objects.requireNonNull(prefix, "prefix");
        try {
            LockNames.check(prefix + "/key");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("prefix '" + prefix + "' must be a Warden namespace, optionally followed"
                    + " by path segments (e.g. 'billing' or 'billing/jobs'): " + e.getMessage(), e);
        }
        this.prefix = prefix;
        this.defaultTtl = checkTtl(defaultTtl, "defaultTtl");
        int n = REGISTRIES.incrementAndGet();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "warden-lock-registry-" + n + "-ttl");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * The lock of {@code lockKey}: the same object for the same key (until {@link #expireUnusedOlderThan} drops it).
     *
     * @param lockKey a {@link String}: the lock is named {@code prefix/lockKey}
     * @throws IllegalArgumentException when the key is not a string or makes no valid lock name
     * @throws IllegalStateException    when the registry was closed
     */
    @Override
    public WardenLock obtain(Object lockKey) {
        String key = key(lockKey);
        if (closed.get()) {
            throw new IllegalStateException("the lock registry '" + prefix + "' is closed: cannot obtain lock '" + key + "'");
        }
        return locks.computeIfAbsent(key, k -> new WardenLock(this, k, warden.lock(prefix + "/" + k)));
    }

    /** Starts the TTL of the current thread's grant of {@code lockKey} over at the registry's default TTL. */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, defaultTtl);
    }

    /**
     * Starts the TTL of the current thread's grant of {@code lockKey} over at {@code ttl} from now.
     *
     * @throws IllegalMonitorStateException when the current thread does not hold the lock
     * @throws IllegalStateException        when the grant has ended (its TTL ran out) or its hold is no longer valid
     *                                      (lost, or the session may have expired)
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        String key = key(lockKey);
        WardenLock lock = locks.get(key);
        if (lock == null) {
            throw new IllegalMonitorStateException("the current thread does not own lock '" + prefix + "/" + key + "'");
        }
        lock.renew(ttl);
    }

    /**
     * Renews every grant every third of its TTL on {@code renewalTaskScheduler}, from the next lock on, until it is
     * unlocked.
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        this.renewalScheduler = Objects.requireNonNull(renewalTaskScheduler, "renewalTaskScheduler");
    }

    /**
     * Drops the cached locks that no thread of this process holds and that were last locked or unlocked more than
     * {@code age} milliseconds ago; {@link #obtain} then makes new ones. A thread that obtained a dropped lock before
     * and locks it later puts it back.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long cutoff = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(Math.max(0, age));
        for (String key : locks.keySet()) {
            locks.computeIfPresent(key, (k, lock) -> lock.retireIfUnusedSince(cutoff) ? null : lock);
        }
    }

    /** Releases every grant still held (their owners' {@code unlock()} then throws) and stops the TTL timer. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (WardenLock lock : locks.values()) {
            lock.abandon();
        }
        locks.clear();
        timer.shutdownNow();
    }

    @Override
    public String toString() {
        return "WardenLockRegistry[" + prefix + ", " + locks.size() + " locks, TTL " + defaultTtl.toMillis() + " ms]";
    }

    /** How many locks are cached now. */
    int cached() {
        return locks.size();
    }

    Duration defaultTtl() {
        return defaultTtl;
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    TaskScheduler renewalScheduler() {
        return renewalScheduler;
    }

    void reinstate(String key, WardenLock lock) {
        locks.putIfAbsent(key, lock);
    }

    private static String key(Object lockKey) {
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException("lockKey must be a String, got "
                    + (lockKey == null ? "null" : lockKey.getClass().getName()));
        }
        return key;
    }

    static Duration checkTtl(Duration ttl, String field) {
        Objects.requireNonNull(ttl, field);
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException(field + " must be positive, got " + ttl);
        }
        return ttl;
    }
}
