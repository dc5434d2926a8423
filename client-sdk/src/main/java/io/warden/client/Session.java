package io.warden.client;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * One Warden session of a {@link WardenClient}: its id, the local deadline, the heartbeat loop, the state machine
 * CONNECTED ⇄ SUSPENDED → LOST | CLOSED, and the holds and acquires that die with it.
 *
 * <p>Heartbeats go every {@code keepalive_interval_ms} (the gateway's answer when the session was opened) counted
 * from the send time of the last acknowledged one; a failed heartbeat is retried after a short backoff, at the next
 * endpoint. Each acknowledgement <em>sets</em> the {@link LocalDeadline} to its send time plus the
 * {@code ttl_ms_remaining} it reports (minus the margin), earlier or later than before: the service, not this client,
 * knows the session's TTL, and another caller may have changed it (a keepalive with {@code ttl_ms}, a lease renew).
 * The heartbeat interval is re-derived from that TTL as the gateway derives {@code keepalive_interval_ms} (a third),
 * so a shortened TTL is kept alive (a heartbeat at the old interval would let it lapse) and is noticed within one
 * interval. The state is computed from the deadline when asked ({@link #state()}), so it is exact at any moment; a
 * timer at the deadline announces SUSPENDED to listeners.
 *
 * <p>Concurrency: {@code deadlineNanos}, {@code intervalNanos} and {@code terminal} are volatile, written only while
 * holding {@code this}; {@code announced}, {@code heartbeatTask} and {@code deadlineTask} are guarded by {@code this}.
 * At most one heartbeat is in flight: the next is scheduled only from the completion of the previous one, so the
 * latest acknowledgement is always that of the latest heartbeat sent. Listener calls, the {@link #lost()} future and
 * holds' loss futures run on the single {@code events} executor, in order.
 */
final class Session {
    private static final System.Logger log = System.getLogger(Session.class.getName());

    private final String id;
    /** The shortest heartbeat interval, however short a TTL the service reports. */
    static final long MIN_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final long ttlNanos;
    private final long safetyNanos;
    private final Duration requestTimeout;
    private final KeepaliveTransport transport;
    private final ScheduledExecutorService scheduler;
    private final Executor events;
    private final LongSupplier ticker;
    private final List<SessionListener> listeners = new CopyOnWriteArrayList<>();
    private final Set<HttpHold> holds = ConcurrentHashMap.newKeySet();
    private final Set<PendingAcquire> acquires = ConcurrentHashMap.newKeySet();
    /** How holds learn that their grant ended elsewhere (thread-safe; closed with the session). */
    private final HoldWatches holdWatch;
    private final CompletableFuture<Void> lost = new CompletableFuture<>();

    private volatile long deadlineNanos;
    /** From the open reply, then re-derived from every acknowledgement's TTL. */
    private volatile long intervalNanos;
    /** Null while the session lives; LOST or CLOSED once, never changed after. */
    private volatile SessionState terminal;
    private SessionState announced = SessionState.CONNECTED;
    private ScheduledFuture<?> heartbeatTask;
    private ScheduledFuture<?> deadlineTask;
    /** Consecutive failed heartbeats; touched only by the heartbeat chain (one at a time). */
    private int failures;

    /**
     * @param safetyNanos the fixed part of the margin taken off every TTL the service reports (see
     *                    {@link LocalDeadline#marginNanos})
     */
    Session(String id, long ttlNanos, long intervalNanos, long safetyNanos, Duration requestTimeout,
            KeepaliveTransport transport, HoldWatches holdWatch, ScheduledExecutorService scheduler, Executor events,
            LongSupplier ticker) {
        this.id = id;
        this.holdWatch = holdWatch;
        this.ttlNanos = ttlNanos;
        this.intervalNanos = Math.max(MIN_INTERVAL_NANOS, intervalNanos);
        this.safetyNanos = safetyNanos;
        this.requestTimeout = requestTimeout;
        this.transport = transport;
        this.scheduler = scheduler;
        this.events = events;
        this.ticker = ticker;
    }

    String id() {
        return id;
    }

    Duration ttl() {
        return Duration.ofNanos(ttlNanos);
    }

    /** The heartbeat interval now: from the open reply, then a third of the TTL the last acknowledgement reported. */
    Duration heartbeatInterval() {
        return Duration.ofNanos(intervalNanos);
    }

    /** Starts the heartbeats; {@code openedSentNanos} is when the request that opened the session was sent. */
    synchronized void start(long openedSentNanos) {
        deadlineNanos = LocalDeadline.after(openedSentNanos, ttlNanos, LocalDeadline.marginNanos(ttlNanos, safetyNanos));
        armDeadlineTimer();
        scheduleHeartbeat(openedSentNanos + intervalNanos - ticker.getAsLong());
    }

    SessionState state() {
        SessionState t = terminal;
        if (t != null) {
            return t;
        }
        return ticker.getAsLong() - deadlineNanos < 0 ? SessionState.CONNECTED : SessionState.SUSPENDED;
    }

    /**
     * The local deadline now, on the client's ticker: until then the service cannot have expired the session. Moves
     * with every acknowledged heartbeat (also backwards, for a TTL shortened elsewhere).
     */
    long deadlineNanos() {
        return deadlineNanos;
    }

    /** Whether holds of this session can be trusted now. */
    boolean connected() {
        return state() == SessionState.CONNECTED;
    }

    boolean ended() {
        return terminal != null;
    }

    CompletableFuture<Void> lost() {
        return lost;
    }

    void addListener(SessionListener listener) {
        listeners.add(listener);
    }

    void removeListener(SessionListener listener) {
        listeners.remove(listener);
    }

    /** Registers a new hold so the session's loss reaches it; a hold granted after the loss is lost at once. */
    void track(HttpHold hold) {
        holds.add(hold);
        if (terminal == SessionState.LOST) {
            // Note on concurrency: markLost may have iterated `holds` before the add; telling the hold twice is harmless.
            hold.sessionLost();
            return;
        }
        holdWatch.add(hold);
    }

    void untrack(HttpHold hold) {
        holds.remove(hold);
        holdWatch.remove(hold);
    }

    /** Registers a running acquire; false when the session has already ended (the caller fails it). */
    boolean track(PendingAcquire call) {
        acquires.add(call);
        if (terminal != null) {
            acquires.remove(call);
            return false;
        }
        return true;
    }

    void untrack(PendingAcquire call) {
        acquires.remove(call);
    }

    /** A gateway said the session is gone: every hold is lost, every acquire fails. Idempotent. */
    void markLost(String why) {
        synchronized (this) {
            if (terminal != null) {
                return;
            }
            terminal = SessionState.LOST;
            cancelTimers();
            announce();
        }
        holdWatch.close();
        log.log(System.Logger.Level.WARNING, "warden session {0} is lost ({1}): {2} holds lost", id, why, holds.size());
        SessionLostException failure = new SessionLostException("session " + id + " is lost: " + why, null, 0, null);
        holds.forEach(HttpHold::sessionLost);
        acquires.forEach(call -> call.sessionEnded(failure));
        runEvent(() -> lost.complete(null));
    }

    /**
     * Ends the session from this side: stops heartbeats and fails running acquires. The caller then deletes the
     * session at the gateway, which releases every hold and queued request. Returns the holds that were live,
     * or null when the session had already ended.
     */
    List<HttpHold> markClosed() {
        synchronized (this) {
            if (terminal != null) {
                return null;
            }
            terminal = SessionState.CLOSED;
            cancelTimers();
            announce();
        }
        holdWatch.close();
        SessionLostException failure = new SessionLostException("session " + id + " was closed by the client", null, 0, null);
        acquires.forEach(call -> call.sessionEnded(failure));
        List<HttpHold> live = List.copyOf(holds);
        holds.clear();
        return live;
    }

    // --- heartbeats ----------------------------------------------------------------------------------------

    private void heartbeat() {
        if (terminal != null) {
            return;
        }
        long sent = ticker.getAsLong();
        // A heartbeat that takes longer than an interval is as good as lost; the next one goes to the next gateway.
        Duration timeout = Duration.ofNanos(Math.min(requestTimeout.toNanos(),
                Math.max(intervalNanos, TimeUnit.MILLISECONDS.toNanos(250))));
        CompletableFuture<Long> reply;
        try {
            reply = transport.heartbeat(id, timeout);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((remainingMs, error) -> afterHeartbeat(sent, remainingMs, error));
    }

    private void afterHeartbeat(long sent, Long remainingMs, Throwable error) {
        if (terminal != null) {
            return;
        }
        if (error == null) {
            failures = 0;
            acknowledged(sent, remainingMs);
            scheduleHeartbeat(sent + intervalNanos - ticker.getAsLong());
            return;
        }
        if (Failures.sessionGone(error)) {
            markLost(Failures.unwrap(error).getMessage());
            return;
        }
        failures++;
        log.log(System.Logger.Level.DEBUG, "warden session {0}: heartbeat {1} failed: {2}", id, failures,
                Failures.unwrap(error).toString());
        long retryNanos = Math.min(TimeUnit.MILLISECONDS.toNanos(Backoff.delayMs(failures)), intervalNanos / 2);
        scheduleHeartbeat(retryNanos);
    }

    /**
     * The gateway acknowledged the heartbeat sent at {@code sent} with {@code remainingMs} to live: that is the
     * session's TTL now, whoever set it. The deadline follows it, also backwards (a TTL shortened elsewhere), and the
     * interval is re-derived from it.
     */
    private synchronized void acknowledged(long sent, long remainingMs) {
        if (terminal != null) {
            return;
        }
        long remaining = TimeUnit.MILLISECONDS.toNanos(Math.max(0, remainingMs));
        deadlineNanos = LocalDeadline.after(sent, remaining, LocalDeadline.marginNanos(remaining, safetyNanos));
        intervalNanos = intervalFor(remaining);
        armDeadlineTimer();
        announce();
    }

    /** As the gateway derives {@code keepalive_interval_ms} from a TTL: a third of it (at least 10 ms). */
    static long intervalFor(long ttlNanos) {
        return Math.max(MIN_INTERVAL_NANOS, ttlNanos / 3);
    }

    private synchronized void scheduleHeartbeat(long delayNanos) {
        if (terminal != null) {
            return;
        }
        try {
            heartbeatTask = scheduler.schedule(this::heartbeat, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            // the client is closing
        }
    }

    /** Guarded by this. Announces SUSPENDED when the deadline passes without a newer acknowledgement. */
    private void armDeadlineTimer() {
        if (deadlineTask != null) {
            deadlineTask.cancel(false);
        }
        long delay = deadlineNanos - ticker.getAsLong();
        try {
            deadlineTask = scheduler.schedule(this::deadlineReached, Math.max(0, delay), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            deadlineTask = null;
        }
    }

    private synchronized void deadlineReached() {
        announce();
        if (terminal == null && state() == SessionState.CONNECTED) {
            // woke up early (timer granularity, or the ticker is not the system clock): look again later
            armDeadlineTimer();
        } else if (terminal == null) {
            log.log(System.Logger.Level.WARNING, "warden session {0} is SUSPENDED: no keepalive acknowledged in time; "
                    + "holds are not valid until one is", id);
        }
    }

    /** Guarded by this. */
    private void cancelTimers() {
        if (heartbeatTask != null) {
            heartbeatTask.cancel(false);
        }
        if (deadlineTask != null) {
            deadlineTask.cancel(false);
        }
    }

    /** Guarded by this: tells listeners about a state change, in order, on the event thread. */
    private void announce() {
        SessionState now = state();
        if (now == announced) {
            return;
        }
        announced = now;
        runEvent(() -> {
            for (SessionListener l : listeners) {
                try {
                    l.stateChanged(now);
                } catch (RuntimeException e) {
                    log.log(System.Logger.Level.WARNING, "session listener " + l + " failed on " + now, e);
                }
            }
        });
    }

    void runEvent(Runnable event) {
        try {
            events.execute(event);
        } catch (RejectedExecutionException closed) {
            event.run();
        }
    }
}
