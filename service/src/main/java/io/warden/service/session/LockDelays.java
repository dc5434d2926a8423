package io.warden.service.session;

import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.LockDelayRecord;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Lock-delay (guarantee 9 of docs/guarantees.md): the holds of an expired session keep blocking for the session's
 * {@code lock_delay_ms}. Expiry leaves the granted queue nodes in place and writes {@code /lockdelay/{session_id}}
 * naming them; after the delay this gateway deletes them and the record in one {@code multi}. If this gateway dies
 * first, the leader adopts the record and starts a fresh full delay (late, never early).
 *
 * <p>Concurrency: {@link #mine} is a concurrent set; work runs on the clock's and Curator's threads and never blocks.
 */
final class LockDelays {
    private static final Logger log = LoggerFactory.getLogger(LockDelays.class);
    private static final Duration RETRY_DELAY = Duration.ofMillis(500);
    private static final int MAX_ATTEMPTS = 20;

    private final Zk zk;
    private final Clock clock;
    private final Owner owner;
    /** Lock-delays this gateway will finish, by session id (bounded by the sessions that expired with holds here). */
    private final Set<String> mine = ConcurrentHashMap.newKeySet();

    LockDelays(Zk zk, Clock clock, Owner owner) {
        this.zk = zk;
        this.clock = clock;
        this.owner = owner;
    }

    /** Finishes the lock-delay of {@code sessionId} after {@code delayMs}, measured on this gateway's clock. */
    void schedule(String sessionId, long delayMs) {
        if (mine.add(sessionId)) {
            clock.schedule(Duration.ofMillis(delayMs), () -> finish(sessionId, 0));
        }
    }

    private void finish(String sessionId, int attempt) {
        String path = CellPaths.lockDelay(sessionId);
        zk.data(path).thenCompose(ds -> {
            LockDelayRecord rec = Json.readOrNull(ds.data(), LockDelayRecord.class);
            List<CompletableFuture<String>> present = new ArrayList<>();
            for (String node : rec == null ? List.<String>of() : rec.nodes()) {
                present.add(zk.exists(node).thenApply(stat -> stat == null ? null : node));
            }
            return CompletableFuture.allOf(present.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                List<CuratorOp> ops = new ArrayList<>();
                try {
                    for (CompletableFuture<String> p : present) {
                        if (p.join() != null) {
                            ops.add(zk.ops().delete().forPath(p.join()));
                        }
                    }
                    ops.add(zk.ops().delete().withVersion(ds.stat().getVersion()).forPath(path));
                } catch (Exception e) {
                    return CompletableFuture.failedFuture(e);
                }
                return zk.multi(ops);
            });
        }).whenComplete((r, err) -> {
            if (err == null || Zk.code(err) == Code.NONODE && attempt >= MAX_ATTEMPTS) {
                mine.remove(sessionId);
                if (err == null) {
                    log.info("lock-delay of expired session {} is over; its holds are released", sessionId);
                }
            } else if (Zk.code(err) == Code.NONODE && Zk.unwrap(err) instanceof org.apache.zookeeper.KeeperException) {
                mine.remove(sessionId); // the record is gone: finished elsewhere
            } else {
                clock.schedule(RETRY_DELAY, () -> finish(sessionId, attempt + 1));
            }
        });
    }

    /**
     * Adopts the lock-delays whose owner is {@code orphaned}; answers how many. Idempotent: a compare-and-set whose
     * reply was lost (Curator sends it again and gets BADVERSION) is followed by a read, and a record that names this
     * gateway run is finished here whoever wrote it (adoptions are rare: one read each is cheap).
     */
    CompletableFuture<AdoptionTally> adoptOrphans(Predicate<LockDelayRecord> orphaned) {
        return zk.shardedChildren(CellPaths.LOCK_DELAY).thenCompose(ids -> {
            List<String> others = new ArrayList<>(ids.size());
            for (String id : ids) {
                if (!mine.contains(id)) {
                    others.add(id);
                }
            }
            return Adoption.inChunks(others, id -> adoptOne(id, orphaned));
        });
    }

    private CompletableFuture<Integer> adoptOne(String id, Predicate<LockDelayRecord> orphaned) {
        String path = CellPaths.lockDelay(id);
        return zk.data(path).thenCompose(ds -> {
            LockDelayRecord rec = Json.readOrNull(ds.data(), LockDelayRecord.class);
            if (owner.owns(rec)) {
                schedule(id, rec.delayMs()); // ours already (an earlier pass whose reply was lost)
                return CompletableFuture.completedFuture(Adoption.ADOPTED);
            }
            if (rec == null || !orphaned.test(rec)) {
                return CompletableFuture.completedFuture(Adoption.LEFT);
            }
            byte[] mine = Json.write(rec.withOwner(owner.gatewayId(), owner.incarnation()));
            return zk.setData(path, mine, ds.stat().getVersion()).handle((s, err) -> {
                if (err == null) {
                    schedule(id, rec.delayMs());
                    return CompletableFuture.completedFuture(Adoption.ADOPTED);
                }
                return zk.data(path).thenApply(again -> {
                    LockDelayRecord now = Json.readOrNull(again.data(), LockDelayRecord.class);
                    if (owner.owns(now)) {
                        schedule(id, now.delayMs());
                        return Adoption.ADOPTED;
                    }
                    return Adoption.LEFT;
                });
            }).thenCompose(f -> f);
        }).exceptionally(e -> {
            if (Zk.code(e) == org.apache.zookeeper.KeeperException.Code.NONODE) {
                return Adoption.LEFT; // the delay ended meanwhile
            }
            log.debug("could not adopt the lock-delay of session {}: {}", id, Zk.unwrap(e).toString());
            return Adoption.FAILED;
        });
    }
}
