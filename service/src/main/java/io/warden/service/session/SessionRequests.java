package io.warden.service.session;

import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueListing;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.RequestRecord;
import io.warden.service.zk.SessionListing;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Reads a session's requests from ZooKeeper: its request records, and for each the queue node and whether it
 * holds. Any gateway can rebuild a session's state this way, which is what adoption and takeover rely on.
 *
 * <p>A lock too large to list ({@link QueueListing}) cannot be searched for the session's node: the load fails with
 * {@link io.warden.service.api.LockTooLargeException}, so a close or a view of such a session answers 429 and its
 * expiry is tried again later (late, never early) until the lock has shrunk. A session with more children than the
 * gateway lists ({@link SessionListing}) is not read either: 429 as well, and its expiry is tried again later.
 */
final class SessionRequests {
    /** The name prefix of an ended request's end marker (see the lock engine's Tombstones). */
    static final String END_MARKER = "~";
    /**
     * One request of a session. {@code node} is null when the request has ended (its record is a tombstone; then
     * {@code name}, {@code mode} and {@code requestId} are null too) or when its queue node is gone otherwise (deleted
     * by hand); {@code holds} says whether it holds the lock now. {@code czxid} is its queue node's (and record's) czxid:
     * the token is that plus the cell's token floor. A multi-lock request is one Request per name, all with its
     * {@code uuid} (its one record).
     */
    record Request(String uuid, LockName name, Mode mode, String requestId, long czxid, String node, boolean holds) {
        String nodePath() {
            return CellPaths.lock(name) + "/" + node;
        }
    }

    private final Zk zk;
    private final QueueListing queues;
    private final SessionListing listing;

    SessionRequests(Zk zk, QueueListing queues) {
        this.zk = zk;
        this.queues = queues;
        this.listing = new SessionListing(zk, queues.limit());
    }

    /**
     * The session's requests; fails with NONODE (KeeperException) when the session record is gone, and with
     * RESOURCE_EXHAUSTED when it has more children than this gateway lists ({@link SessionListing}).
     */
    CompletableFuture<List<Request>> load(String sessionId) {
        return listing.children(sessionId, "its requests cannot be found (to show, close or expire it)")
                .thenCompose(sessionChildren -> {
            // End markers ("~{uuid}_{seq}") name the tombstones: those need no read, and are deleted like the markers.
            Set<String> endedUuids = new HashSet<>();
            List<Request> markersAndTombstones = new ArrayList<>();
            for (String child : sessionChildren) {
                if (child.startsWith(END_MARKER)) {
                    endedUuids.add(child.substring(END_MARKER.length(), child.lastIndexOf('_')));
                    markersAndTombstones.add(new Request(child, null, null, null, 0, null, false));
                }
            }
            List<String> uuids = new ArrayList<>();
            for (String child : sessionChildren) {
                if (child.startsWith(END_MARKER)) {
                    continue;
                }
                if (endedUuids.contains(child)) {
                    markersAndTombstones.add(new Request(child, null, null, null, 0, null, false));
                } else {
                    uuids.add(child);
                }
            }
            List<CompletableFuture<Optional<Record>>> reads = new ArrayList<>();
            for (String uuid : uuids) {
                reads.add(zk.data(CellPaths.sessionRequest(sessionId, uuid)).handle((ds, err) -> {
                    if (err != null) {
                        if (Zk.code(err) == Code.NONODE) {
                            return Optional.empty(); // released meanwhile
                        }
                        throw Zk.translate(err);
                    }
                    RequestRecord r = Json.readOrNull(ds.data(), RequestRecord.class);
                    // Unreadable data counts as ended: it must still be deleted with the session.
                    return Optional.of(new Record(uuid, r == null ? RequestRecord.TOMBSTONE : r, ds.stat().getCzxid()));
                }));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                Map<String, List<Record>> byName = new HashMap<>();
                List<Request> ended = new ArrayList<>(markersAndTombstones);
                for (CompletableFuture<Optional<Record>> r : reads) {
                    r.join().ifPresent(rec -> {
                        if (rec.record.done()) {
                            ended.add(new Request(rec.uuid, null, null, null, rec.czxid, null, false));
                        } else {
                            // A multi-lock request's record is listed under each of its names: one Request per entry.
                            for (String name : rec.record.lockNames()) {
                                byName.computeIfAbsent(name, k -> new ArrayList<>()).add(rec);
                            }
                        }
                    });
                }
                List<CompletableFuture<List<Request>>> perLock = new ArrayList<>();
                for (Map.Entry<String, List<Record>> e : byName.entrySet()) {
                    LockName name = LockName.parse(e.getKey());
                    perLock.add(queues.children(CellPaths.lock(name), "the session's requests on it cannot be found "
                            + "(to show, close or expire it)").handle((children, err) -> {
                        if (err != null && Zk.code(err) != Code.NONODE) {
                            throw Zk.translate(err);
                        }
                        LockQueue q = LockQueue.of(children == null ? List.of() : children);
                        List<Request> out = new ArrayList<>();
                        for (Record rec : e.getValue()) {
                            Optional<QueueEntry> entry = q.byId(rec.uuid);
                            String node = entry.map(QueueEntry::node).orElse(null);
                            boolean holds = entry.isPresent() && q.holds(q.indexOf(node));
                            out.add(new Request(rec.uuid, name, rec.record.mode(), rec.record.requestId(), rec.czxid, node, holds));
                        }
                        return out;
                    }));
                }
                return CompletableFuture.allOf(perLock.toArray(CompletableFuture[]::new)).thenApply(x -> {
                    List<Request> all = new ArrayList<>(ended);
                    perLock.forEach(f -> all.addAll(f.join()));
                    all.sort((a, b) -> Long.compare(a.czxid(), b.czxid()));
                    return all;
                });
            });
        });
    }

    private record Record(String uuid, RequestRecord record, long czxid) {
    }
}
