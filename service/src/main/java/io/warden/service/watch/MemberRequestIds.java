package io.warden.service.watch;

import io.warden.service.api.Deadlock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.RequestRecord;
import io.warden.service.zk.Zk;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fills in the client's request id of each member of the listed deadlocks. The watch mirror knows a request by the
 * uuid that names its queue nodes, not by the client's request id (it keeps no node data), so the id is read from the
 * request's record ({@code /sessions/{sh}/{sid}/{uuid}}) — only when deadlocks are listed ({@code GET /v1/deadlocks},
 * the console), once per member per gateway: the graph itself still costs no ZooKeeper request. A record that cannot be
 * read (the request just ended) leaves the id null.
 *
 * <p>Concurrency: safe from any thread; {@link #known} is a concurrent map, trimmed after each listing to the members
 * of that listing, so it is bounded by the members of the current deadlocks (plus those of listings under way).
 */
public final class MemberRequestIds {
    private final Zk zk;
    /** "session/uuid" to the request id, for members of the last listing. */
    private final Map<String, String> known = new ConcurrentHashMap<>();

    public MemberRequestIds(Zk zk) {
        this.zk = zk;
    }

    /** {@code report} with each member's request id, where its record says it. */
    public CompletableFuture<WatchHub.DeadlockReport> named(WatchHub.DeadlockReport report) {
        Set<String> keys = new HashSet<>();
        List<CompletableFuture<?>> reads = new ArrayList<>();
        for (Deadlock d : report.deadlocks()) {
            for (Deadlock.Member m : d.members()) {
                String key = m.sessionId() + "/" + m.request();
                if (keys.add(key) && m.requestId() == null && !known.containsKey(key)) {
                    reads.add(zk.data(CellPaths.sessionRequest(m.sessionId(), m.request())).handle((ds, err) -> {
                        RequestRecord rec = ds == null ? null : Json.readOrNull(ds.data(), RequestRecord.class);
                        if (rec != null && rec.requestId() != null) {
                            known.put(key, rec.requestId());
                        }
                        return null;
                    }));
                }
            }
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<Deadlock> out = new ArrayList<>(report.deadlocks().size());
            for (Deadlock d : report.deadlocks()) {
                List<Deadlock.Member> members = new ArrayList<>(d.members().size());
                for (Deadlock.Member m : d.members()) {
                    members.add(m.requestId() != null ? m : m.withRequestId(known.get(m.sessionId() + "/" + m.request())));
                }
                out.add(new Deadlock(members, d.sinceRevision(), d.ageMs()));
            }
            known.keySet().retainAll(keys);
            return new WatchHub.DeadlockReport(out, report.edges(), report.edgeCount(), report.revision(),
                    report.ageMs(), report.stale());
        });
    }
}
