package io.warden.service;

import io.warden.service.api.LockName;
import io.warden.service.lock.LockEngine;
import io.warden.service.watch.EventBatch;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import io.warden.service.watch.WatchSink;

import java.util.List;

/**
 * Tells the engine of every queue node the mirror saw cancelled, so that a call held here whose request another gateway
 * removed (a deadlock's victim, docs/decisions/0013) is answered now, from its request record, instead of when its
 * blocker next changes. A node with no held call here costs one look-up in the session's calls.
 */
final class RemovedRequests implements WatchSink {
    private final LockEngine engine;

    RemovedRequests(LockEngine engine) {
        this.engine = engine;
    }

    @Override
    public boolean events(EventBatch batch, int[] selected) {
        List<WatchEvent> all = batch.events();
        int count = selected == null ? all.size() : selected.length;
        for (int i = 0; i < count; i++) {
            WatchEvent e = all.get(selected == null ? i : selected[i]);
            if (e.type() == WatchEvent.Type.CANCELLED && e.sessionId() != null) {
                engine.removedElsewhere(e.sessionId(), LockName.parse(e.name()), e.token());
            }
        }
        return true;
    }

    @Override
    public boolean resync(Resync resync) {
        return true; // a call whose request went in a gap is answered when its blocker changes, or by its timer
    }

    @Override
    public void heartbeat() {
    }

    @Override
    public void close(String reason) {
    }
}
