package io.warden.service.console;

import io.warden.console.model.LockEvent;
import io.warden.console.model.Mode;
import io.warden.service.watch.EventBatch;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import io.warden.service.watch.WatchFilter;
import io.warden.service.watch.WatchSink;
import io.warden.service.watch.WatchSource;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The console's memory of the watch stream: for each lock, its newest {@link #PER_LOCK} events with the wall-clock
 * time this gateway saw them, and the time each current holder was seen granted (so "held for" counts from the
 * grant, not from the request). Fed by one watch on every lock of this gateway's {@link WatchSource}.
 *
 * <p>What it cannot know: events before this gateway started watching (a grant older than that is shown from its
 * request time, marked as such by the console).
 *
 * <p>Concurrency: the watch calls {@link #events} on the hub's single thread; the console reads from request threads.
 * Both maps are guarded by {@code this}. Bounded: at most {@link #MAX_LOCKS} locks (least recently changed dropped).
 */
final class EventLog implements WatchSink {
    static final int PER_LOCK = 50;
    static final int MAX_LOCKS = 10_000;

    private final Clock wallClock;
    /** Guarded by this; access order = change order, so the eldest is the least recently changed lock. */
    private final LinkedHashMap<String, Deque<LockEvent>> byLock = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Deque<LockEvent>> eldest) {
            return size() > MAX_LOCKS;
        }
    };
    /** "name#token" of current holders to when their grant was seen. Guarded by this. */
    private final LinkedHashMap<String, Instant> grants = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
            return size() > MAX_LOCKS * 4;
        }
    };
    private volatile WatchSource.Subscription subscription;

    EventLog(Clock wallClock) {
        this.wallClock = wallClock;
    }

    void start(WatchSource source) {
        subscription = source.subscribe(WatchFilter.everything(), null, this);
    }

    void stop() {
        WatchSource.Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }

    @Override
    public boolean events(EventBatch batch, int[] selected) {
        Instant now = wallClock.instant();
        List<WatchEvent> all = batch.events();
        int count = selected == null ? all.size() : selected.length;
        synchronized (this) {
            for (int i = 0; i < count; i++) {
                WatchEvent e = all.get(selected == null ? i : selected[i]);
                Deque<LockEvent> q = byLock.computeIfAbsent(e.name(), n -> new ArrayDeque<>());
                q.addFirst(new LockEvent(e.revision(), e.type().name(), e.sessionId(), Mode.valueOf(e.mode().name()),
                        e.token(), now));
                while (q.size() > PER_LOCK) {
                    q.removeLast();
                }
                String key = e.name() + "#" + e.token();
                switch (e.type()) {
                    case GRANTED -> grants.put(key, now);
                    case RELEASED, CANCELLED, EXPIRED -> grants.remove(key);
                    default -> { }
                }
            }
        }
        return true;
    }

    @Override
    public boolean resync(Resync resync) {
        return true; // events were missed (a rebuild): the lists simply have a gap; grant times of holders still hold
    }

    @Override
    public void heartbeat() {
    }

    @Override
    public void close(String reason) {
        subscription = null;
    }

    /** The lock's newest events, newest first. */
    synchronized List<LockEvent> recent(String name) {
        Deque<LockEvent> q = byLock.get(name);
        return q == null ? List.of() : new ArrayList<>(q);
    }

    /** When this gateway saw the grant of {@code token} on {@code name}; null when it did not see it. */
    synchronized Instant grantedAt(String name, long token) {
        return grants.get(name + "#" + token);
    }

    /** Locks with events kept (tests). */
    synchronized int lockCount() {
        return byLock.size();
    }

    /** Forgets grant times of holders no longer in the given set (called after a full scan). */
    synchronized void retainGrants(java.util.Set<String> liveKeys) {
        for (Iterator<String> it = grants.keySet().iterator(); it.hasNext(); ) {
            if (!liveKeys.contains(it.next())) {
                it.remove();
            }
        }
    }
}
