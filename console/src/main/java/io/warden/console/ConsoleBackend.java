package io.warden.console;

import io.warden.console.model.AdminResult;
import io.warden.console.model.AuditEntry;
import io.warden.console.model.CellInfo;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.Health;
import io.warden.console.model.LockDetail;
import io.warden.console.model.WaitFor;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What the console needs from a gateway: a few reads and two audited admin actions. The console declares it and the
 * gateway implements it, so the console needs no ZooKeeper code and can be rendered against any state.
 *
 * <p>Every method is asynchronous and never blocks the calling thread; failures complete the future exceptionally
 * (the console shows them as a stale or failed page, never as a stack trace).
 *
 * <p>Thread-safety: implementations must allow calls from any thread, concurrently.
 */
public interface ConsoleBackend {
    /**
     * Every lock (with its whole queue) and every session of the cell; on a gateway that serves several cells, of the
     * default one (the namespace page says so of a namespace routed to another). An implementation may serve a
     * copy up to about a second old to bound the cost of many open consoles; {@link CellSnapshot#takenAt()} says when
     * it was read.
     */
    CompletableFuture<CellSnapshot> snapshot();

    /**
     * The gateway's wait-for graph and its deadlocks, as its watch mirror shows them (no ZooKeeper read). The default
     * cannot: a gateway without a mirror keeps no graph.
     */
    default CompletableFuture<WaitFor> waitFor() {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("this gateway keeps no wait-for graph"));
    }

    /**
     * The cells this gateway serves, the default one first, each with whether it serves now and the namespaces routed
     * to it (as {@code GET /v1/cells}). The default cannot: the cells page then says it cannot read them, and the
     * overview and namespace pages leave the cells out.
     */
    default CompletableFuture<List<CellInfo>> cells() {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("this gateway lists no cells"));
    }

    /** One lock read fresh from ZooKeeper, with the recent events this gateway saw on it; empty when it has no queue. */
    CompletableFuture<Optional<LockDetail>> lock(String name);

    /** This gateway, the other live gateways, and what each ZooKeeper server of the connect string says of itself. */
    CompletableFuture<Health> health();

    /**
     * Releases the hold with {@code token} on {@code name} on behalf of the session that holds it, as if that session
     * had released it (waiters are promoted at once), and appends {@code audit} (with the outcome) to the audit log.
     * A token that no longer holds is a no-op reported as not done, not a failure.
     */
    CompletableFuture<AdminResult> forceRelease(String name, long token, AuditEntry audit);

    /**
     * Asks the holder of {@code token} on {@code name} to let go, and force-releases it if it still holds after
     * {@code graceMs} (a revoke, as {@code POST /v1/revoke}); the request and its end are written to the audit log. A
     * token that does not hold is a no-op reported as not done. The default cannot.
     */
    default CompletableFuture<AdminResult> askToRelease(String name, long token, long graceMs, AuditEntry audit) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("this gateway cannot ask holders to let go"));
    }

    /**
     * Expires the session now, as if its TTL had run out (its holds are released, after its lock-delay if it has one;
     * its waits are cancelled; watchers see EXPIRED), and appends {@code audit} to the audit log.
     */
    CompletableFuture<AdminResult> expireSession(String sessionId, AuditEntry audit);

    /** The newest {@code limit} audit entries of the cell, newest first. */
    CompletableFuture<List<AuditEntry>> auditLog(int limit);
}
