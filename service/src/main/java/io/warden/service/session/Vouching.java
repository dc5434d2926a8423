package io.warden.service.session;

import io.warden.service.api.WardenException;
import io.warden.service.time.Clock;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The rule "acknowledge a keepalive only while this gateway can vouch for the session" (guarantee 3 of
 * docs/guarantees.md), gateway-wide half: how fresh this gateway's view of ZooKeeper is. The per-session half (the
 * record's watch is set in the current ZooKeeper session, so a takeover would have been heard) is
 * {@link TrackedSession#armedIn}.
 *
 * <h2>Why a sync, and what B bounds</h2>
 * A {@code sync} sent at time S that comes back proves: this gateway's ZooKeeper server had applied every write
 * committed before S reached the leader, and ZooKeeper delivered every notification of those writes to this client
 * before the sync's reply (one connection, in order; both on ZooKeeper's event thread). So when a tracked session's
 * record watch is set and has not fired by the time that reply is handled, no other gateway had taken the session over
 * before S. A gateway acknowledges a keepalive at time A only if {@code A - S <= B}; a gateway that takes a session
 * over (at T0, after its write committed, so after S) gives it TTL + B. Then every acknowledged keepalive's TTL ends by
 * {@code A + TTL <= S + B + TTL < T0 + TTL + B}: the new tracker never expires the session early. Only durations on
 * each gateway's monotonic clock are compared, never clock readings across machines.
 *
 * <p>B is half the gateway's ZooKeeper session timeout (5 s by default): a sync is sent every B/4, so a healthy gateway
 * is always fresh, and one cut off from ZooKeeper stops acknowledging within B, before its own ZooKeeper client
 * notices (2/3 of the session timeout). All gateways of a cell must use the same ZooKeeper session timeout.
 *
 * <h2>Refusals</h2>
 * While this gateway cannot vouch (disconnected, or a keepalive found it stale and its sync did not come back within
 * B/4) it answers 503 and records that it refused: no session it tracks expires meanwhile, and the first sync sent
 * after the refusal that comes back gives every tracked session a fresh TTL ({@code onRevouched}), so a ZooKeeper
 * election or a short partition never kills sessions whose keepalives were refused.
 *
 * <p>Concurrency: {@link #lastSyncSent} and {@link #refusedSince} are atomics written on ZooKeeper's event thread and
 * the clock's thread and read anywhere; {@link #inFlight} is guarded by {@code this}. Nothing blocks.
 */
final class Vouching {
    private static final Logger log = LoggerFactory.getLogger(Vouching.class);
    private static final long NONE = Long.MIN_VALUE;

    private final Zk zk;
    private final Clock clock;
    private final long boundNanos;
    private final Runnable onRevouched;
    /** Send time (on the clock) of the newest sync that came back; NONE before the first. */
    private final AtomicLong lastSyncSent = new AtomicLong(NONE);
    /** When this gateway first refused (or could not vouch) since it last could; NONE while it vouches. */
    private final AtomicLong refusedSince = new AtomicLong(NONE);
    /** The sync under way, if any, and when it was sent. Guarded by {@code this}. */
    private CompletableFuture<Void> inFlight;
    private long inFlightSent;
    private volatile Clock.Cancellable probe;
    private volatile boolean stopped;
    /** Whether the cell may be served (not rolled back); while not, nothing vouches. */
    private volatile java.util.function.BooleanSupplier cellServing = () -> true;

    Vouching(Zk zk, Clock clock, Duration bound, Runnable onRevouched) {
        this.zk = zk;
        this.clock = clock;
        this.boundNanos = bound.toNanos();
        this.onRevouched = onRevouched;
        zk.client().getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                refuse();
            } else if (state == ConnectionState.RECONNECTED) {
                sync(); // vouch again as soon as possible
            }
        });
    }

    /**
     * A cell that may have lost committed state cannot be vouched for, however fresh: while {@code serving} says no (the
     * gateway checks the cell after a reconnection, or found it rolled back) nothing vouches, a refusal recorded meanwhile
     * stands (so nothing expires), and the first sync that comes back once it says yes gives every session a fresh TTL,
     * as after any refusal.
     */
    void servingCell(java.util.function.BooleanSupplier serving) {
        cellServing = serving;
    }

    /** B: how old the ZooKeeper response behind an acknowledgement may be, and what a takeover adds to the TTL. */
    static Duration bound(Duration zkSessionTimeout) {
        return zkSessionTimeout.dividedBy(2);
    }

    long boundNanos() {
        return boundNanos;
    }

    void start() {
        sync();
        scheduleProbe();
    }

    void stop() {
        stopped = true;
        Clock.Cancellable p = probe;
        if (p != null) {
            p.cancel();
        }
    }

    private void scheduleProbe() {
        if (!stopped) {
            probe = clock.schedule(Duration.ofNanos(boundNanos / 4), () -> {
                sync();
                scheduleProbe();
            });
        }
    }

    /**
     * Whether this gateway can vouch at {@code now} as far as ZooKeeper goes. Callers read this before they read a
     * session's {@link TrackedSession#armedIn}: the event thread clears {@code armedIn} (a notification) before it moves
     * {@link #lastSyncSent} past that notification (a later sync's reply), so this order never pairs a fresh sync with
     * a watch that has already fired.
     */
    boolean freshAt(long now) {
        long last = lastSyncSent.get();
        return last != NONE && now - last <= boundNanos && refusedSince.get() == NONE && cellServing.getAsBoolean();
    }

    /** Whether keepalives were refused since this gateway last vouched: expiries wait until it vouches again. */
    boolean refusing() {
        return refusedSince.get() != NONE;
    }

    /** Records that this gateway cannot vouch now (a refused keepalive, a disconnection). */
    void refuse() {
        refuse("no ZooKeeper response within " + Duration.ofNanos(boundNanos).toMillis() + " ms");
    }

    void refuse(String why) {
        if (refusedSince.compareAndSet(NONE, clock.read())) {
            log.warn("this gateway cannot vouch for its sessions ({}): keepalives answer 503 and no session it tracks "
                    + "expires until it can again", why);
        }
    }

    /**
     * Completes when this gateway is fresh: at once when it is connected and a recent sync came back, else after a sync
     * sent now comes back. Fails with UNAVAILABLE (and records a refusal) when it is not connected or the sync takes
     * longer than B/4.
     */
    CompletableFuture<Void> awaitFresh() {
        // Disconnected first: the client knows at once, the state listener that calls refuse() hears of it later, and
        // a gateway that knows it is cut off acknowledges nothing even while its last sync is younger than B.
        if (!zk.connected()) {
            refuse();
            return CompletableFuture.failedFuture(cannotVouch());
        }
        long now = clock.read();
        if (freshAt(now)) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        Clock.Cancellable timeout = clock.schedule(Duration.ofNanos(boundNanos / 4), () -> {
            if (result.completeExceptionally(cannotVouch())) {
                refuse();
            }
        });
        sync().whenComplete((v, err) -> {
            timeout.cancel();
            if (err == null && freshAt(clock.read())) {
                result.complete(null);
            } else if (result.completeExceptionally(cannotVouch())) {
                refuse();
            }
        });
        return result;
    }

    /** Sends a sync, or joins the one under way when it was sent recently enough to make this gateway fresh. */
    private CompletableFuture<Void> sync() {
        long sent = clock.read();
        CompletableFuture<Void> f;
        synchronized (this) {
            if (inFlight != null && !inFlight.isDone() && sent - inFlightSent <= boundNanos / 4
                    && inFlightSent >= refusedSince.get()) {
                return inFlight;
            }
            f = new CompletableFuture<>();
            inFlight = f;
            inFlightSent = sent;
        }
        if (!zk.connected()) {
            f.completeExceptionally(cannotVouch());
            return f;
        }
        zk.sync("/").whenComplete((v, err) -> {
            if (err == null) {
                heard(sent);
                f.complete(null);
            } else {
                f.completeExceptionally(err);
            }
        });
        return f;
    }

    /**
     * A ZooKeeper write or sync sent at {@code sentNanos} came back: everything committed before then has been seen.
     * Called on ZooKeeper's event thread, after the notifications that came before that reply.
     */
    void heard(long sentNanos) {
        lastSyncSent.accumulateAndGet(sentNanos, Math::max);
        if (!cellServing.getAsBoolean()) {
            return; // the cell is being checked or was rolled back: a refusal stands until it is served again
        }
        long since = refusedSince.get();
        if (since != NONE && sentNanos >= since && refusedSince.compareAndSet(since, NONE)) {
            log.info("this gateway can vouch for its sessions again: each gets a fresh TTL");
            onRevouched.run();
        }
    }

    private WardenException cannotVouch() {
        return WardenException.unavailable("this gateway has not heard from ZooKeeper within "
                + Duration.ofNanos(boundNanos).toMillis() + " ms and cannot vouch for the session; send the keepalive to "
                + "another gateway", null);
    }
}
