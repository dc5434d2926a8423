package io.warden.service.console;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.warden.console.model.AuditEntry;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The cell's audit log of admin actions: one PERSISTENT_SEQUENTIAL node per entry under {@code /audit} (so every
 * gateway's console shows every gateway's actions), the newest {@link #KEEP} kept; and one line per entry on the
 * {@code warden.audit} logger, written even when ZooKeeper cannot take the entry.
 *
 * <p>Thread-safety: stateless apart from the {@link Zk} adapter; safe from any thread.
 */
final class AuditLog {
    static final int KEEP = 1000;
    private static final String PREFIX = "entry-";
    private static final Logger audit = LoggerFactory.getLogger("warden.audit");

    /** The stored form: plain fields, epoch millis. */
    record Stored(@JsonProperty("at_ms") long atMs, String actor, String action, String target, String reason,
                  String source, String gateway, String outcome) {
        static Stored of(AuditEntry e) {
            return new Stored(e.at().toEpochMilli(), e.actor(), e.action(), e.target(), e.reason(), e.source(),
                    e.gateway(), e.outcome());
        }

        AuditEntry entry() {
            return new AuditEntry(Instant.ofEpochMilli(atMs), actor, action, target, reason, source, gateway, outcome);
        }
    }

    private final Zk zk;

    AuditLog(Zk zk) {
        this.zk = zk;
    }

    /** Logs the entry, stores it, then trims the log; completes when stored (exceptionally when it could not be). */
    CompletableFuture<Void> append(AuditEntry e) {
        audit.info("{} by {} from {} on {}: target {}, reason \"{}\" -> {}", e.action(), e.actor(), e.source(), e.gateway(),
                e.target(), e.reason(), e.outcome());
        return zk.create(CellPaths.AUDIT + "/" + PREFIX, Json.write(Stored.of(e)), CreateMode.PERSISTENT_SEQUENTIAL, false)
                .handle((path, err) -> {
                    if (err != null) {
                        audit.error("could not store the audit entry above in ZooKeeper: {}", Zk.unwrap(err).toString());
                        throw Zk.translate(err);
                    }
                    trim();
                    return null;
                });
    }

    /** The newest {@code limit} entries, newest first. */
    CompletableFuture<List<AuditEntry>> newest(int limit) {
        return zk.childrenOrEmpty(CellPaths.AUDIT).thenCompose(children -> {
            List<String> names = new ArrayList<>(children);
            Collections.sort(names, Collections.reverseOrder()); // sequence numbers are zero-padded
            List<CompletableFuture<AuditEntry>> reads = new ArrayList<>();
            for (String name : names.subList(0, Math.min(limit, names.size()))) {
                reads.add(zk.data(CellPaths.AUDIT + "/" + name).handle((ds, err) -> {
                    Stored s = err == null ? Json.readOrNull(ds.data(), Stored.class) : null;
                    return s == null ? null : s.entry(); // trimmed meanwhile, or not ours
                }));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<AuditEntry> out = new ArrayList<>();
                for (CompletableFuture<AuditEntry> r : reads) {
                    if (r.join() != null) {
                        out.add(r.join());
                    }
                }
                return out;
            });
        });
    }

    private void trim() {
        zk.childrenOrEmpty(CellPaths.AUDIT).thenAccept(children -> {
            if (children.size() <= KEEP) {
                return;
            }
            List<String> names = new ArrayList<>(children);
            Collections.sort(names);
            for (String old : names.subList(0, names.size() - KEEP)) {
                zk.delete(CellPaths.AUDIT + "/" + old, -1); // a concurrent trim may have deleted it: fine
            }
        });
    }
}
