package io.warden.service.session;

import io.warden.service.time.Clock;
import org.apache.zookeeper.Watcher;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * A session whose TTL this gateway tracks: its deadline, and the two facts an acknowledgement needs.
 *
 * <p>States: LIVE ({@link #expiring} null, {@link #gone} false) → EXPIRING (an expiry's {@code multi} is under way) →
 * LIVE again when it fails, or gone. A keepalive is acknowledged only in LIVE, and an expiry starts only from LIVE
 * with the deadline passed, each under this object's monitor: acknowledging and expiring exclude each other.
 *
 * <p>Concurrency: every mutable field is guarded by {@code this} (the volatile ones are written under it and read
 * anywhere without it); the final ones are set at construction. Nothing that holds the monitor does I/O or waits.
 */
final class TrackedSession {
    final String id;
    final String clientId;
    /** The principal that owns the session (docs/api.md, authorization), or null for a session opened in open mode. */
    final String principal;
    /** Whose quota the session counts against ({@link SessionQuotas#owner}). */
    final String quotaOwner;
    final long lockDelayMs;
    /** The record watch; one object per tracked session, so re-arming it never adds another. */
    final Watcher watcher;

    /** The TTL in ms: what a keepalive resets the deadline to. */
    long ttlMs;
    /** When this gateway may expire the session, on its clock (ns). */
    long deadline;
    /** The newest version of the record this gateway has seen; the expiry's multi deletes at this version. */
    int version = -1;
    /**
     * The other cells the session has records in ({@link io.warden.service.zk.SessionRecord#cells}), as of the newest
     * version of the record seen here ({@link #version}): where a keepalive of this session also goes. An immutable
     * list; empty for a session opened here, or one whose record was made by joining this cell. Written under the
     * monitor, read without it.
     */
    volatile List<String> cells = List.of();
    /**
     * The ZooKeeper session in which the record's watch is set, or 0 when it is not (it fired, or setting it failed).
     * Only while this equals the client's current ZooKeeper session would a takeover elsewhere have been heard.
     */
    long armedIn;
    /** The deadline check scheduled on the clock, if any; it runs at {@link #timerAt} (clock ns). */
    Clock.Cancellable timer;
    long timerAt;
    /** Counts scheduled checks: a check runs only if it is still the latest one (a cancel may come too late). */
    long timerGeneration;
    /** Completes true when the expiry under way removed the session, false when it did not; null when none is. */
    CompletableFuture<Boolean> expiring;
    /** A re-arm of the watch is scheduled on the clock. */
    boolean rearmScheduled;
    /** No longer tracked here (taken over elsewhere, closed, expired, or the gateway stopped). Written under the monitor. */
    volatile boolean gone;

    TrackedSession(String id, String clientId, String principal, String quotaOwner, long lockDelayMs,
                   Function<TrackedSession, Watcher> watcherFor) {
        this.id = id;
        this.clientId = clientId;
        this.principal = principal;
        this.quotaOwner = quotaOwner;
        this.lockDelayMs = lockDelayMs;
        this.watcher = watcherFor.apply(this);
    }
}
