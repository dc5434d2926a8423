package io.warden.service.lock;

import io.warden.service.api.Deadlock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.RequestRecord;
import io.warden.service.zk.Zk;

import java.util.concurrent.CompletableFuture;

/**
 * Why a held call's request lost its queue entry while the call waited, as its answer must say: removed as a
 * deadlock's victim (by any gateway: its record, tombstoned in that same transaction, names the cycle), ended some
 * other way while its session lives (released or cancelled: the wait is over, TIMED_OUT), or its session is gone (404).
 * Shared by the one-name held calls ({@link HeldCalls}) and the multi-lock ones ({@link MultiLocks}).
 *
 * <p>Reads the request's record, and the session's node when the record is gone; never fails (a read that fails is
 * taken as the session still living: TIMED_OUT, which the client may repeat).
 */
final class Vanished {
    /** What ended the request. */
    enum Why { DEADLOCK_VICTIM, ENDED, SESSION_GONE }

    /** The answer's cause, and the cycle for a deadlock's victim. */
    record Cause(Why why, Deadlock deadlock) {
    }

    private Vanished() {
    }

    static CompletableFuture<Cause> why(Zk zk, String sessionId, String uuid) {
        return zk.data(CellPaths.sessionRequest(sessionId, uuid)).handle((ds, readErr) -> {
            RequestRecord rec = ds == null ? null : Json.readOrNull(ds.data(), RequestRecord.class);
            if (rec != null && rec.deadlock() != null) {
                return CompletableFuture.completedFuture(new Cause(Why.DEADLOCK_VICTIM, rec.deadlock()));
            }
            if (rec != null) {
                return CompletableFuture.completedFuture(new Cause(Why.ENDED, null)); // its session still is
            }
            return zk.exists(CellPaths.session(sessionId)).handle((stat, err) ->
                    new Cause(err == null && stat == null ? Why.SESSION_GONE : Why.ENDED, null));
        }).thenCompose(f -> f);
    }
}
