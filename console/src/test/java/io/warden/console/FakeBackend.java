package io.warden.console;

import io.warden.console.model.AdminResult;
import io.warden.console.model.AuditEntry;
import io.warden.console.model.CellInfo;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.Health;
import io.warden.console.model.LockDetail;
import io.warden.console.model.WaitFor;
import io.warden.console.model.LockState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An in-memory {@link ConsoleBackend} for tests: serves a fixed snapshot, details and health, records admin calls and
 * audit entries, and fails every read while {@link #failing} is set.
 *
 * <p>Concurrency: fields are volatile or concurrent; tests set them between requests.
 */
public final class FakeBackend implements ConsoleBackend {
    public volatile CellSnapshot snapshot = Fixtures.cell();
    public volatile Health health = Fixtures.health();
    public volatile WaitFor waitFor = Fixtures.waitFor();
    /** The gateway's cells; null for a backend that lists none (the interface's default). */
    public volatile List<CellInfo> cells = Fixtures.oneCell();
    public final Map<String, LockDetail> details = new ConcurrentHashMap<>(Map.of("payments/invoice-42", Fixtures.invoice42Detail()));
    public final List<AuditEntry> audit = Collections.synchronizedList(new ArrayList<>());
    public volatile String failing;
    /** When set, {@link #snapshot()} and {@link #waitFor()} throw instead of returning a failed future (a misbehaving implementation). */
    public volatile boolean throwing;

    @Override
    public CompletableFuture<CellSnapshot> snapshot() {
        if (throwing) {
            throw new IllegalStateException("snapshot exploded");
        }
        return failing != null ? CompletableFuture.failedFuture(new IllegalStateException(failing))
                : CompletableFuture.supplyAsync(() -> snapshot);
    }

    @Override
    public CompletableFuture<WaitFor> waitFor() {
        if (throwing) {
            throw new IllegalStateException("wait-for graph exploded");
        }
        return failing != null ? CompletableFuture.failedFuture(new IllegalStateException(failing))
                : CompletableFuture.supplyAsync(() -> waitFor);
    }

    @Override
    public CompletableFuture<List<CellInfo>> cells() {
        if (failing != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(failing));
        }
        List<CellInfo> c = cells;
        return c == null ? ConsoleBackend.super.cells() : CompletableFuture.supplyAsync(() -> c);
    }

    @Override
    public CompletableFuture<Optional<LockDetail>> lock(String name) {
        if (failing != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(failing));
        }
        LockDetail d = details.get(name);
        if (d == null) {
            Optional<LockState> fromSnapshot = snapshot.locks().stream().filter(l -> l.name().equals(name)).findFirst();
            d = fromSnapshot.map(l -> new LockDetail(l, snapshot.revision(), List.of())).orElse(null);
        }
        return CompletableFuture.completedFuture(Optional.ofNullable(d));
    }

    @Override
    public CompletableFuture<Health> health() {
        return failing != null ? CompletableFuture.failedFuture(new IllegalStateException(failing))
                : CompletableFuture.completedFuture(health);
    }

    @Override
    public CompletableFuture<AdminResult> forceRelease(String name, long token, AuditEntry entry) {
        boolean holds = snapshot.locks().stream().anyMatch(l -> l.name().equals(name)
                && l.holders().stream().anyMatch(h -> h.token() == token));
        AdminResult result = holds ? new AdminResult(true, "released " + name + " token " + token)
                : new AdminResult(false, "token " + token + " does not hold " + name);
        audit.add(0, entry.withOutcome("gw-1", holds ? "done" : "no-op: " + result.message()));
        return CompletableFuture.completedFuture(result);
    }

    /** Grace of each ask-to-release, in the order asked. */
    public final List<Long> asked = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public CompletableFuture<AdminResult> askToRelease(String name, long token, long graceMs, AuditEntry entry) {
        asked.add(graceMs);
        audit.add(0, entry.withOutcome("gw-1", "done"));
        return CompletableFuture.completedFuture(new AdminResult(true, "asked the holder of " + name + " token " + token
                + " to let go within " + graceMs + " ms"));
    }

    @Override
    public CompletableFuture<AdminResult> expireSession(String sessionId, AuditEntry entry) {
        audit.add(0, entry.withOutcome("gw-1", "done"));
        return CompletableFuture.completedFuture(new AdminResult(true, "expired session " + sessionId));
    }

    @Override
    public CompletableFuture<List<AuditEntry>> auditLog(int limit) {
        if (failing != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(failing));
        }
        synchronized (audit) {
            return CompletableFuture.completedFuture(List.copyOf(audit.subList(0, Math.min(limit, audit.size()))));
        }
    }
}
