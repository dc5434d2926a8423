package io.warden.service.session;

import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
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
 * Lock-delay (contract §2.9): the holds of an expired session keep blocking for the session's {@code lock_delay_ms}.
 * Expiry leaves the granted queue nodes in place and writes {@code /lockdelay/{session_id}} naming them; after the
 * delay this gateway deletes them and the record in one {@code multi}. If this gateway dies first, the leader adopts
 * the record and starts a fresh full delay (late, never early).
 *
 * <p>Concurrency: {@link #mine} is a concurrent set; work runs on the clock's and Curator's threads and never blocks.
 */
final class LockDelays {
    private static final Logger log = LoggerFactory.getLogger(LockDelays.class);
    private static final Duration RETRY_DELAY = Duration.ofMillis(500);
    private static final int MAX_ATTEMPTS = 20;

    private final Zk zk;
    private final Clock clock;
    private final String gatewayId;
    /** Lock-delays this gateway will finish, by session id. */
    private final Set<String> mine = ConcurrentHashMap.newKeySet();

    LockDelays(Zk zk, Clock clock, String gatewayId) {
        this.zk = zk;
        this.clock = clock;
        this.gatewayId = gatewayId;
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

    /** Adopts the lock-delays whose gateway is {@code orphaned}; answers how many. */
    CompletableFuture<Integer> adoptOrphans(Predicate<String> orphaned) {
        return zk.children(CellPaths.LOCK_DELAY).thenCompose(ids -> {
            List<CompletableFuture<Integer>> adopted = new ArrayList<>();
            for (String id : ids) {
                if (mine.contains(id)) {
                    continue;
                }
                adopted.add(zk.data(CellPaths.lockDelay(id)).thenCompose(ds -> {
                    LockDelayRecord rec = Json.readOrNull(ds.data(), LockDelayRecord.class);
                    if (rec == null || !orphaned.test(rec.gateway())) {
                        return CompletableFuture.completedFuture(0);
                    }
                    LockDelayRecord taken = new LockDelayRecord(rec.sessionId(), rec.delayMs(), rec.nodes(), gatewayId);
                    return zk.setData(CellPaths.lockDelay(id), Json.write(taken), ds.stat().getVersion()).thenApply(s -> {
                        schedule(id, rec.delayMs());
                        return 1;
                    });
                }).exceptionally(e -> 0));
            }
            return CompletableFuture.allOf(adopted.toArray(CompletableFuture[]::new))
                    .thenApply(v -> adopted.stream().mapToInt(CompletableFuture::join).sum());
        });
    }
}
