package io.warden.service;

import io.warden.service.http.HttpApi;
import io.warden.service.lock.Revocations;
import io.warden.service.watch.EventBatch;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import io.warden.service.watch.WatchSink;

import java.util.List;

/**
 * The watch hub's whole-cell events, for what revocations need of them: a REVOKE_REQUESTED goes to the holder's
 * keepalive sockets on this gateway ({@link HttpApi#revokeRequested}); the end of a hold (RELEASED, EXPIRED, CANCELLED)
 * lets a revocation this gateway runs finish at once instead of at its deadline ({@link Revocations#holdEnded}).
 * Neither depends on it: a missed event (a RESYNC) only makes a revocation finish at its deadline, and a client also
 * learns of a revoke from its watch.
 *
 * <p>Concurrency: called on the hub's thread only; keeps nothing.
 */
final class RevocationEvents implements WatchSink {
    private final Revocations revocations;
    private final HttpApi http;

    RevocationEvents(Revocations revocations, HttpApi http) {
        this.revocations = revocations;
        this.http = http;
    }

    @Override
    public boolean events(EventBatch batch, int[] selected) {
        List<WatchEvent> all = batch.events();
        int count = selected == null ? all.size() : selected.length;
        for (int i = 0; i < count; i++) {
            WatchEvent e = all.get(selected == null ? i : selected[i]);
            switch (e.type()) {
                case REVOKE_REQUESTED -> {
                    if (e.sessionId() != null) {
                        http.revokeRequested(e.sessionId(), e.name(), e.token(), e.revision());
                    }
                }
                case RELEASED, EXPIRED, CANCELLED -> revocations.holdEnded(e.name(), e.token());
                default -> { }
            }
        }
        return true;
    }

    @Override
    public boolean resync(Resync resync) {
        return true; // see the class comment: nothing depends on an event
    }

    @Override
    public void heartbeat() {
    }

    @Override
    public void close(String reason) {
    }
}
