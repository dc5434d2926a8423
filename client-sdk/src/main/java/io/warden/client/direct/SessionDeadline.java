package io.warden.client.direct;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * Direct mode's own bound on the ZooKeeper session's life, as HTTP mode has one on its Warden session. Curator tells
 * of a dead connection only through its asynchronous state events, a while after the fact: relying on those alone, a
 * client JVM stopped past its session timeout (SIGSTOP, a long GC pause, a frozen VM) still believed it held for
 * 205 ms after it resumed, while another client held the lock.
 *
 * <p>A ZooKeeper server expires a session no earlier than the negotiated session timeout after it last heard from
 * the client, and it heard from the client after the client sent any request the server answered. So every answered
 * request sent at time {@code s} proves the session alive until {@code s + timeout}, on the server's clock. This class
 * keeps the latest such bound, minus a margin (500 ppm of the timeout for clock drift, plus 100 ms): before it, the
 * session cannot have expired; after it, it may have. Curator exposes the connection's own heartbeats (ZooKeeper's
 * pings) only indirectly, so the bound is fed by answers this client can see: the read of every grant's node, and a
 * cheap probe ({@code exists("/")} on the raw ZooKeeper handle, one attempt, no retries) every third of the session
 * timeout while any hold lives. ZooKeeper sends its pings only when the connection is idle, so the probes mostly take
 * their place rather than adding requests.
 *
 * <p>The bound belongs to one ZooKeeper session: a hold is judged against the bound of the session its node was made
 * in, so answers in a new session (after a LOST, perhaps before Curator's LOST event arrived) never vouch for a hold
 * of the old one.
 *
 * <p>Concurrency: the bound is an immutable {@link Bound} in an {@link AtomicReference}, moved on by compare-and-set
 * from any thread (the acquiring thread, ZooKeeper's event thread for probe answers). Probes are sent from one daemon
 * timer thread; {@link #close()} stops it.
 */
final class SessionDeadline implements AutoCloseable {
    /** Assumed worst relative rate difference of the two clocks, in parts per million (as in HTTP mode). */
    static final long DRIFT_PPM = 500;
    /** The fixed part of the margin, for scheduling hiccups (HTTP mode's default safety margin). */
    static final long SAFETY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MIN_PROBE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final AtomicInteger TIMERS = new AtomicInteger();

    /** The session {@code sessionId} cannot have expired before {@code deadlineNanos}. Immutable. */
    record Bound(long sessionId, long deadlineNanos) {
    }

    private final CuratorFramework client;
    private final BooleanSupplier wanted;
    private final LongSupplier ticker;
    private final AtomicReference<Bound> bound = new AtomicReference<>(new Bound(0, 0));
    private final ScheduledExecutorService timer;

    /**
     * @param wanted whether probes are worth sending now (any hold lives)
     */
    SessionDeadline(CuratorFramework client, BooleanSupplier wanted, LongSupplier ticker) {
        this.client = client;
        this.wanted = wanted;
        this.ticker = ticker;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warden-direct-deadline-" + TIMERS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        schedule(MIN_PROBE_NANOS);
    }

    long now() {
        return ticker.getAsLong();
    }

    /** The current ZooKeeper handle, or null while there is none. */
    ZooKeeper zooKeeper() {
        try {
            return client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * A request of session {@code sessionId}, sent at {@code sentNanos}, was answered: the session lives until
     * {@code sentNanos} plus its timeout (minus the margin) at least.
     */
    void heard(long sessionId, long sentNanos, int sessionTimeoutMs) {
        if (sessionId == 0 || sessionTimeoutMs <= 0) {
            return;
        }
        long timeout = TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs);
        long margin = (timeout * DRIFT_PPM + 999_999) / 1_000_000 + SAFETY_NANOS;
        long deadline = sentNanos + Math.max(0, timeout - margin);
        bound.updateAndGet(b -> b.sessionId() != sessionId || deadline - b.deadlineNanos() > 0
                ? new Bound(sessionId, deadline) : b);
    }

    /** Whether session {@code sessionId} cannot have expired yet, as far as the answers seen so far show. */
    boolean alive(long sessionId) {
        Bound b = bound.get();
        return b.sessionId() == sessionId && ticker.getAsLong() - b.deadlineNanos() < 0;
    }

    /** Sends a probe now (e.g. on RECONNECTED: the bound may have run out while the connection was down). */
    void probeSoon() {
        try {
            timer.execute(this::probe);
        } catch (RejectedExecutionException closed) {
            // closing
        }
    }

    private void probe() {
        ZooKeeper zk = zooKeeper();
        if (zk == null || !wanted.getAsBoolean()) {
            return;
        }
        long session = zk.getSessionId();
        int timeoutMs = zk.getSessionTimeout();
        long sent = ticker.getAsLong();
        try {
            zk.exists("/", false, (rc, path, ctx, stat) -> {
                if (rc == KeeperException.Code.OK.intValue()) {
                    heard(session, sent, timeoutMs);
                }
            }, null);
        } catch (RuntimeException e) {
            // the handle is closing: the next probe uses the next one
        }
    }

    private void tick() {
        long period = MIN_PROBE_NANOS;
        try {
            probe();
            ZooKeeper zk = zooKeeper();
            if (zk != null && zk.getSessionTimeout() > 0) {
                period = Math.max(MIN_PROBE_NANOS, TimeUnit.MILLISECONDS.toNanos(zk.getSessionTimeout()) / 3);
            }
        } finally {
            schedule(period);
        }
    }

    private void schedule(long delayNanos) {
        try {
            timer.schedule(this::tick, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // closing
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
