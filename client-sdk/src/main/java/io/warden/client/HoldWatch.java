package io.warden.client;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * How a session's holds learn that their grant ended elsewhere: an admin's force-release, a release by token from
 * another process, anything but this client's own release. Over HTTP a hold otherwise looks only at its session, so
 * such a hold would stay {@link Hold#isValid() valid} (and {@link Hold#lost()} would never complete) while another
 * client held the lock.
 *
 * <p>The same watch tells a hold that it is asked to let go: a REVOKE_REQUESTED event for its token
 * ({@link HttpHold#revokeRequested}); such events are remembered like ends, for holds registered after them.
 *
 * <p>One per cell the session's holds are in ({@link HoldWatches}: a gateway that serves several cells names a grant's
 * cell, and each cell's revisions are its own). While the session has holds, one watch of the session's own events runs
 * ({@code GET /v1/watch?session_id=}, with {@code &cell=} for a cell other than the default, an
 * {@link SseWatch} that resumes without gaps on any gateway). A RELEASED, EXPIRED or CANCELLED event for a hold's
 * token ends that hold: it is lost unless this client released it. A RESYNC (sent instead of history a gateway no
 * longer has) ends every hold whose grant it covers (its revision is at or past the revision of the hold's GRANTED
 * answer: a RESYNC from a gateway whose mirror lags says nothing about a later grant) and that it does not list as a
 * holder with the hold's token; to be safe it also leaves alone a hold whose lock the RESYNC shows this session
 * waiting on (a mirror's waiters carry no token), and a hold whose lock it shows as too large for the gateway to follow
 * (its holders are not known). The watch starts from just before the first hold's token, so nothing after the grant is missed; it stops a
 * while ({@link #LINGER}) after the last hold is gone, so a client that takes and releases locks all the time keeps
 * one stream. Events that arrive before their hold is registered here (the reply of the grant can come after the
 * event of its end) are remembered, a bounded number of them, and applied when it is.
 *
 * <p>What remains: a hold learns of its end only as fast as the event travels, gateway to client (measured in
 * {@code ForceReleaseTest}); while no gateway can be reached, not before the stream resumes (then, from the gateway's
 * history or a RESYNC). A gateway whose pool of session watches is full answers 429: not for good, the watch tries the
 * next gateway, waiting 1 s doubling to 30 s ({@link SseWatch}); meanwhile a hold notices only the loss of its session.
 * A gateway that does not know {@code session_id} (an older version) refuses the watch: that is
 * logged once, and holds then notice only the loss of their session, as before.
 *
 * <p>Concurrency: every field below is guarded by {@code this}; the watch's listener ({@link #onEvent}) runs on the
 * watch's own thread and takes the same lock, so registration and events are serialised. Holds are told
 * ({@link HttpHold#endedElsewhere}) outside the lock.
 */
final class HoldWatch implements AutoCloseable {
    private static final System.Logger log = System.getLogger(HoldWatch.class.getName());
    /** How long the watch stays open after the last hold is gone. */
    static final Duration LINGER = Duration.ofSeconds(30);
    /** How many ended requests (token, why) are remembered for holds that register after their end was seen. */
    static final int REMEMBERED = 4096;

    private final HttpGateway gateway;
    private final String sessionId;
    /** The cell whose events this watch follows (a gateway that serves several), or null for the default. */
    private final String cell;
    private final ScheduledExecutorService scheduler;
    private final Duration requestTimeout;

    /** The live holds by {@link #key} (lock name and token). */
    private final Map<String, HttpHold> holds = new LinkedHashMap<>();
    /** Requests of the session seen ending, by {@link #key}, with why; the oldest go first. */
    private final Map<String, String> ended = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > REMEMBERED;
        }
    };
    /** Requests of the session asked to let go, by {@link #key}; the oldest go first. */
    private final Map<String, Boolean> revoked = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED;
        }
    };
    /** The last RESYNC seen: its revision, the holds (by {@link #key}) it listed for this session, and the locks it showed the session waiting on. */
    private long resyncRevision = -1;
    private Set<String> resyncTokens = Set.of();
    private Set<String> resyncWaiting = Set.of();
    /** Locks the last RESYNC showed as too large to follow: it says nothing of their holds. */
    private Set<String> resyncUnknown = Set.of();
    private SseWatch watch;
    private ScheduledFuture<?> stopTask;
    private boolean refused;
    private boolean closed;

    HoldWatch(HttpGateway gateway, String sessionId, ScheduledExecutorService scheduler, Duration requestTimeout) {
        this(gateway, sessionId, null, scheduler, requestTimeout);
    }

    /** The watch of the session's holds in cell {@code cell} (null: the default cell, or a one-cell gateway's only one). */
    HoldWatch(HttpGateway gateway, String sessionId, String cell, ScheduledExecutorService scheduler, Duration requestTimeout) {
        this.gateway = gateway;
        this.sessionId = sessionId;
        this.cell = cell;
        this.scheduler = scheduler;
        this.requestTimeout = requestTimeout;
    }

    /** A new hold of the session: watched from now on; told at once if its end was seen already. */
    void add(HttpHold hold) {
        String why;
        boolean revoke;
        synchronized (this) {
            if (closed) {
                return;
            }
            holds.put(key(hold.name(), hold.tokenValue()), hold);
            if (stopTask != null) {
                stopTask.cancel(false);
                stopTask = null;
            }
            if (watch == null && !refused) {
                start(hold.tokenValue() - 1);
            }
            why = endedBefore(hold);
            revoke = revoked.containsKey(key(hold.name(), hold.tokenValue()));
        }
        if (why != null) {
            hold.endedElsewhere(why);
        } else if (revoke) {
            hold.revokeRequested();
        }
    }

    /** The hold was released (or lost): no longer watched; the watch stops after {@link #LINGER} without holds. */
    void remove(HttpHold hold) {
        synchronized (this) {
            holds.remove(key(hold.name(), hold.tokenValue()), hold);
            if (holds.isEmpty() && watch != null && stopTask == null && !closed) {
                try {
                    stopTask = scheduler.schedule(this::stopIfIdle, LINGER.toMillis(), TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException closing) {
                    // the client is closing: close() stops the watch
                }
            }
        }
    }

    /** Whether a watch stream is running (tests, diagnostics). */
    synchronized boolean watching() {
        return watch != null;
    }

    @Override
    public void close() {
        SseWatch w;
        synchronized (this) {
            closed = true;
            w = watch;
            watch = null;
            holds.clear();
            if (stopTask != null) {
                stopTask.cancel(false);
            }
        }
        if (w != null) {
            w.close();
        }
    }

    /** Guarded by this. */
    private void start(long since) {
        SseWatch[] self = new SseWatch[1];
        SseWatch w = new SseWatch(gateway, WatchOptions.session(sessionId, cell), Math.max(0, since), this::onEvent, scheduler,
                requestTimeout, () -> watchEnded(self[0]), true);
        self[0] = w;
        watch = w;
        w.done().whenComplete((v, error) -> {
            if (error != null) {
                refusedBy(w, error);
            }
        });
        w.startInBackground();
    }

    private void stopIfIdle() {
        SseWatch w;
        synchronized (this) {
            stopTask = null;
            if (!holds.isEmpty() || watch == null) {
                return;
            }
            w = watch;
            watch = null;
        }
        w.close();
    }

    private synchronized void watchEnded(SseWatch w) {
        if (watch == w) {
            watch = null;
        }
    }

    private void refusedBy(SseWatch w, Throwable error) {
        synchronized (this) {
            if (watch == w) {
                watch = null;
            }
            if (refused || closed) {
                return;
            }
            refused = true;
        }
        log.log(System.Logger.Level.WARNING, "warden session {0}: a gateway refused the watch of the session''s own "
                + "holds ({1}); a hold released elsewhere (e.g. force-released) is noticed only when the session ends",
                sessionId, Failures.unwrap(error).getMessage());
    }

    /** A request of this session, as events and RESYNCs name it: its lock and its token. */
    private static String key(String name, long token) {
        return name + " " + token;
    }

    /** Guarded by this: why {@code hold} ended, if that was seen before it was registered. */
    private String endedBefore(HttpHold hold) {
        long token = hold.tokenValue();
        String key = key(hold.name(), token);
        String why = ended.get(key);
        if (why != null) {
            return why;
        }
        if (resyncRevision >= hold.grantRevision() && !resyncTokens.contains(key) && !resyncWaiting.contains(hold.name())
                && !resyncUnknown.contains(hold.name())) {
            return "a RESYNC at revision " + resyncRevision + " no longer lists it";
        }
        return null;
    }

    /** The watch's listener: on the watch's thread, one event at a time, in revision order. */
    private void onEvent(LockEvent e) {
        Map<HttpHold, String> over = new LinkedHashMap<>();
        HttpHold asked = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            switch (e.type()) {
                case RELEASED, EXPIRED, CANCELLED -> {
                    if (e.token() != null && e.name() != null && sessionId.equals(e.sessionId())) {
                        String key = key(e.name(), e.token());
                        String why = e.type() + " at revision " + e.revision() + " (not by this client)";
                        ended.put(key, why);
                        HttpHold hold = holds.get(key);
                        if (hold != null) {
                            over.put(hold, why);
                        }
                    }
                }
                case RESYNC -> {
                    Set<String> tokens = new HashSet<>();
                    Set<String> waiting = new HashSet<>();
                    Set<String> unknown = new HashSet<>();
                    for (LockState lock : e.locks()) {
                        if (lock.tooLarge()) {
                            unknown.add(lock.name());
                            continue;
                        }
                        lock.holders().stream().filter(h -> sessionId.equals(h.sessionId()))
                                .forEach(h -> tokens.add(key(lock.name(), h.token())));
                        if (lock.waiters().stream().anyMatch(w -> sessionId.equals(w.sessionId()))) {
                            waiting.add(lock.name());
                        }
                    }
                    resyncRevision = e.revision();
                    resyncTokens = tokens;
                    resyncWaiting = waiting;
                    resyncUnknown = unknown;
                    for (HttpHold hold : holds.values()) {
                        String why = endedBefore(hold);
                        if (why != null) {
                            over.put(hold, why);
                        }
                    }
                }
                case REVOKE_REQUESTED -> {
                    if (e.token() != null && e.name() != null && sessionId.equals(e.sessionId())) {
                        String key = key(e.name(), e.token());
                        revoked.put(key, Boolean.TRUE);
                        asked = holds.get(key);
                    }
                }
                default -> {
                    // QUEUED, GRANTED: nothing ends
                }
            }
        }
        over.forEach(HttpHold::endedElsewhere);
        if (asked != null) {
            asked.revokeRequested();
        }
    }
}
