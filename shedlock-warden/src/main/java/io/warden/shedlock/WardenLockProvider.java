package io.warden.shedlock;

import io.warden.client.Hold;
import io.warden.client.LockNames;
import io.warden.client.SessionLostException;
import io.warden.client.SessionState;
import io.warden.client.WardenClient;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's {@link ExtensibleLockProvider} on Warden: a ShedLock lock {@code name} is the EXCLUSIVE Warden lock
 * {@code namespace/name} (namespace {@value #DEFAULT_NAMESPACE} unless given), held by the session of a
 * {@link WardenClient}, and every run of a job gets a fencing token.
 * <pre>{@code
 * WardenClient warden = WardenClient.builder().endpoints("http://gw1:7070", "http://gw2:7070")
 *         .clientId("reports-app").sessionTtl(Duration.ofSeconds(10)).build();
 * LockProvider provider = new WardenLockProvider(warden);          // "nightly-report" is the lock shedlock/nightly-report
 * new DefaultLockingTaskExecutor(provider).executeWithLock((Runnable) () -> {
 *     store.write(report, WardenShedLock.currentToken());           // the store refuses tokens lower than the last
 * }, new LockConfiguration(Instant.now(), "nightly-report", Duration.ofMinutes(10), Duration.ofSeconds(30)));
 * }</pre>
 *
 * <h2>What a lock here does</h2>
 * <ol>
 *   <li>{@link #lock} tries once and does not wait: empty when any session (another node, or this client for a job
 *   still running or kept for {@code lockAtLeastFor}) holds the name. It throws, and the job does not run, when no
 *   gateway answers within the client's request timeout (the SDK's {@code WardenClientException}) or the client's
 *   session is lost ({@code SessionLostException}; a provider made with a client supplier opens a new session at its
 *   next call instead, see {@link #WardenLockProvider(Supplier, String)}).</li>
 *   <li>{@code lockAtMostFor} bounds the hold: when it has passed (counted from the call of {@code lock}), a timer
 *   releases the hold by its token, even if the job still runs (logged as a warning), and the next node gets a larger
 *   token. A node that dies, hangs or is paused past its session's TTL loses its locks sooner, when its session
 *   expires: Warden notices dead nodes, so {@code lockAtMostFor} needs no margin for them.</li>
 *   <li>{@code lockAtLeastFor}: an unlock before it has passed keeps the hold until then (not zero, as ShedLock
 *   promises), released by the timer. If the node's session ends first (the process exits, or closes its client), the
 *   hold ends with it.</li>
 *   <li>{@code extend(lockAtMostFor, lockAtLeastFor)} (ShedLock's {@code LockExtender}, {@code KeepAliveLockProvider})
 *   moves both deadlines, counted from now, on the same hold and token. It returns empty when the hold has ended or
 *   cannot be trusted: its {@code lockAtMostFor} passed (even if the timer has not released it yet), it was lost, or
 *   its session may have expired.</li>
 *   <li>A stale lock cannot do harm: every release names the grant's token, so an unlock (or the timer) of a hold whose
 *   {@code lockAtMostFor} passed, or that was lost, never releases the next holder's grant. Such an unlock does not
 *   throw (ShedLock unlocks in a {@code finally} block); it logs a warning that the job may not have run alone. Used
 *   twice, or after {@code extend}, a lock throws {@link IllegalStateException}, as ShedLock's locks do.</li>
 *   <li>The job reads its token and hold on its own thread with {@link WardenShedLock}, or from any thread with
 *   {@link #holdOf(String)}. A hold lost while the job runs (its session expired, or an admin force-released it) is
 *   {@code hold.isValid() == false}, and {@code hold.lost()} completes.</li>
 * </ol>
 * Not promised: that a job never runs twice at once. A paused node can wake up after its hold passed to another and
 * write with its old token; only a resource that refuses lower tokens stops that write (see the SDK's {@code Hold} and
 * {@code FencedWrite}).
 *
 * <p>ShedLock names become path segments of the Warden name: 1-128 characters of {@code [A-Za-z0-9._:-]}, not starting
 * with {@code '.'} or {@code '_'}, and {@code '/'} separates segments (at most 8). Another name is refused with an
 * {@link IllegalArgumentException} that names it.
 *
 * <p>Threads: one timer thread of its own (daemon) for the releases at the deadlines, which run on it. {@link #close()}
 * stops it and releases every hold the provider still has; a client the caller gave is the caller's to close (closing it
 * ends the session, which releases every hold at once).
 *
 * <p>Thread-safety: safe for use by any number of threads. Concurrency: {@code grants} is a concurrent map, written by
 * {@link #lock} and by each grant when it ends; {@code closed} goes false to true once; {@code warden} is guarded by
 * {@code this}; the rest is final.
 */
public final class WardenLockProvider implements ExtensibleLockProvider, AutoCloseable {
    /** The Warden namespace of ShedLock's locks unless another is given. */
    public static final String DEFAULT_NAMESPACE = "shedlock";

    private static final System.Logger log = System.getLogger(WardenLockProvider.class.getName());
    private static final AtomicInteger PROVIDERS = new AtomicInteger();

    /** Makes a client when the last one's session was lost; null when the caller gave the one client to use. */
    private final Supplier<WardenClient> clients;
    /** The client whose session holds the locks; replaced (under {@code this}) only when {@code clients} is set. */
    private WardenClient warden;
    private final String namespace;
    private final LongSupplier ticker;
    private final ScheduledExecutorService scheduler;
    /** The grants not yet ended, by Warden lock name (one per name: a session cannot hold a name twice). */
    private final ConcurrentHashMap<String, Grant> grants = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** ShedLock's locks in the namespace {@value #DEFAULT_NAMESPACE}, held by {@code warden}'s session. */
    public WardenLockProvider(WardenClient warden) {
        this(warden, DEFAULT_NAMESPACE);
    }

    /**
     * ShedLock's locks in {@code namespace}, held by {@code warden}'s session.
     *
     * @throws IllegalArgumentException when {@code namespace} is not a Warden namespace ({@code [a-z][a-z0-9-]{0,62}})
     */
    public WardenLockProvider(WardenClient warden, String namespace) {
        this(warden, namespace, System::nanoTime, timer());
    }

    /**
     * ShedLock's locks in {@code namespace}, held by the session of a client from {@code clients}, which this provider
     * owns: it asks for a new one whenever the session of the last one is lost (after a pause or a partition longer
     * than the session's TTL, which a client does not survive), closes the old one, and closes the last one in
     * {@link #close()}. The first is made here.
     * <pre>{@code
     * new WardenLockProvider(() -> WardenClient.builder().endpoints("http://gw1:7070", "http://gw2:7070")
     *         .clientId("reports-app").sessionTtl(Duration.ofSeconds(10)).build(), "shedlock");
     * }</pre>
     *
     * @throws IllegalArgumentException when {@code namespace} is not a Warden namespace
     */
    public WardenLockProvider(Supplier<WardenClient> clients, String namespace) {
        this(null, Objects.requireNonNull(clients, "clients"), namespace, System::nanoTime, timer());
    }

    /** With the ticker (nanoseconds, as {@link System#nanoTime()}) and the scheduler the deadlines run on. */
    WardenLockProvider(WardenClient warden, String namespace, LongSupplier ticker, ScheduledExecutorService scheduler) {
        this(Objects.requireNonNull(warden, "warden"), null, namespace, ticker, scheduler);
    }

    private WardenLockProvider(WardenClient warden, Supplier<WardenClient> clients, String namespace, LongSupplier ticker,
                               ScheduledExecutorService scheduler) {
        this.namespace = checkNamespace(namespace);
        this.clients = clients;
        this.ticker = ticker;
        this.scheduler = scheduler;
        this.warden = warden != null ? warden : Objects.requireNonNull(clients.get(), "the client supplier returned null");
    }

    private static String checkNamespace(String namespace) {
        Objects.requireNonNull(namespace, "namespace");
        try {
            LockNames.check(namespace + "/x");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("namespace '" + namespace + "' is not a Warden namespace: it must match"
                    + " [a-z][a-z0-9-]{0,62}", e);
        }
        return namespace;
    }

    private static ScheduledExecutorService timer() {
        int n = PROVIDERS.incrementAndGet();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "warden-shedlock-" + n + "-timer");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /**
     * Takes the Warden lock of {@code configuration}'s name if it is free now (no waiting).
     *
     * @return the lock, or empty when it is held
     * @throws IllegalArgumentException when the name cannot be a Warden lock name (the message names it)
     * @throws IllegalStateException    when this provider or its client was closed
     * @throws io.warden.client.WardenClientException when no gateway answered in time, one refused the request, or
     *                                  the session is lost
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Objects.requireNonNull(configuration, "configuration");
        if (closed.get()) {
            throw new IllegalStateException("this WardenLockProvider (namespace " + namespace + ") is closed");
        }
        String name = wardenName(configuration.getName());
        long start = ticker.getAsLong();
        Optional<Hold> hold;
        try {
            hold = client().lock(name).tryAcquire();
        } catch (SessionLostException e) {
            if (clients == null) {
                throw e;
            }
            hold = client().lock(name).tryAcquire(); // the call found the session gone: once more on a new one
        }
        if (hold.isEmpty()) {
            log.log(System.Logger.Level.DEBUG, "ShedLock lock ''{0}'' (Warden lock {1}) is held elsewhere", configuration.getName(), name);
            return Optional.empty();
        }
        Grant grant = new Grant(hold.get(), configuration.getName(), ticker, scheduler, g -> grants.remove(name, g));
        grants.put(name, grant);
        grant.start(start, configuration.getLockAtMostFor(), configuration.getLockAtLeastFor());
        WardenShedLock.started(grant);
        if (closed.get()) {
            grant.releaseNow(); // closed meanwhile: close() may not have seen this grant
        }
        log.log(System.Logger.Level.DEBUG, "ShedLock lock ''{0}'' (Warden lock {1}) taken with token {2}, for at most {3}",
                configuration.getName(), name, grant.token(), configuration.getLockAtMostFor());
        return Optional.of(new WardenLock(configuration, grant));
    }

    /** The client to lock with: with a supplier, a new one when the last one's session is lost for good. */
    private synchronized WardenClient client() {
        if (clients != null && warden.state() == SessionState.LOST) {
            WardenClient lost = warden;
            warden = Objects.requireNonNull(clients.get(), "the client supplier returned null");
            log.log(System.Logger.Level.WARNING, "the Warden session {0} of the ShedLock provider was lost; continuing with"
                    + " the new session {1}", lost.sessionId(), warden.sessionId());
            lost.close();
        }
        return warden;
    }

    /**
     * The hold of the ShedLock lock {@code shedLockName} this provider has now, from any thread: while its job runs,
     * and after its unlock while it is kept for {@code lockAtLeastFor}. Empty once the hold has ended.
     */
    public Optional<Hold> holdOf(String shedLockName) {
        Grant g = grants.get(wardenName(shedLockName));
        return g == null ? Optional.empty() : Optional.of(g.hold());
    }

    /** The Warden lock name of the ShedLock lock {@code shedLockName}: {@code namespace/shedLockName}. */
    public String wardenName(String shedLockName) {
        Objects.requireNonNull(shedLockName, "shedLockName");
        try {
            return LockNames.check(namespace + "/" + shedLockName);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("ShedLock lock name '" + shedLockName + "' cannot be a Warden lock name: "
                    + e.getMessage(), e);
        }
    }

    /** The Warden namespace of this provider's locks. */
    public String namespace() {
        return namespace;
    }

    /**
     * Stops the timer thread and releases every hold this provider still has, also those kept for
     * {@code lockAtLeastFor}. Closes the client only when the provider made it (from a supplier). Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        scheduler.shutdownNow();
        grants.values().forEach(Grant::releaseNow);
        if (clients != null) {
            synchronized (this) {
                warden.close();
            }
        }
    }

    @Override
    public synchronized String toString() {
        return "WardenLockProvider[" + namespace + ", " + warden + "]";
    }
}
