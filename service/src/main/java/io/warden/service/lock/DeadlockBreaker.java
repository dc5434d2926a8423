package io.warden.service.lock;

import io.warden.service.api.DeadlockAction;
import io.warden.service.api.DeadlockException;
import io.warden.service.api.LockName;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.RequestRecord;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Breaks a deadlock the watch mirror found (docs/decisions/0013-deadlock-detection.md) with one {@code multi}: a
 * {@code check} of every queue node on the cycle's edges (so it fails if any of them went: the cycle was re-read as
 * current), the delete of every entry of the victim's request, its record set from live (version 1) to a tombstone
 * that carries the cycle, and the end marker ({@link Tombstones}). Racing gateways are safe: once one has committed,
 * the victim's nodes are gone and every other {@code multi} fails. Then this gateway's held calls of the victim answer
 * 409 DEADLOCK from the reply, with no read, even when the mirror shows the removal first ({@link HeldCalls#breaking});
 * a call held elsewhere learns it through its gateway's mirror and the record ({@link HeldCalls}). A multi-lock
 * request's call here is answered from the reply too; one that the mirror shows gone first reads the record, which the
 * same transaction tombstoned with the cycle ({@link MultiLocks}).
 *
 * <p>Thread-safety: stateless; continuations run on ZooKeeper's event thread.
 */
final class DeadlockBreaker {
    private static final Logger log = LoggerFactory.getLogger(DeadlockBreaker.class);

    private final Zk zk;
    private final HeldCalls held;
    private final MultiLocks multis;
    private final Tombstones tombstones;

    DeadlockBreaker(Zk zk, HeldCalls held, MultiLocks multis, Tombstones tombstones) {
        this.zk = zk;
        this.held = held;
        this.multis = multis;
        this.tombstones = tombstones;
    }

    /** True when the victim was removed by this call; false when the cycle was no longer current (nothing written). */
    CompletableFuture<Boolean> breakCycle(DeadlockAction a) {
        if (a.victimNodes().isEmpty()) {
            return CompletableFuture.completedFuture(false);
        }
        List<CuratorOp> ops = new ArrayList<>();
        String record = CellPaths.sessionRequest(a.victimSession(), a.victimRequest());
        try {
            Set<String> victims = new HashSet<>();
            for (DeadlockAction.NodeRef n : a.victimNodes()) {
                victims.add(path(n));
            }
            for (DeadlockAction.NodeRef n : a.checks()) {
                if (!victims.contains(path(n))) {
                    ops.add(zk.ops().check().forPath(path(n)));
                }
            }
            for (String victim : victims) {
                ops.add(zk.ops().delete().forPath(victim));
            }
            ops.add(zk.ops().setData().withVersion(Tombstones.TOMBSTONE_VERSION - 1)
                    .forPath(record, Json.write(RequestRecord.deadlockVictim(a.cycle()))));
            ops.add(zk.ops().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(CellPaths.sessionRequest(a.victimSession(), Tombstones.MARKER + a.victimRequest() + "_")));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        held.breaking(a.victimSession(), a.victimRequest());
        return zk.multi(ops).handle((results, err) -> {
            if (err != null) {
                held.broken(a.victimSession(), a.victimRequest(), null);
                if (Zk.unwrap(err) instanceof Zk.MultiFailure) {
                    return false; // an edge changed, or another gateway broke it first
                }
                throw Zk.translate(err);
            }
            CuratorTransactionResult marker = results.get(results.size() - 1);
            log.info("deadlock broken: request {} of session {} removed ({} queue nodes checked)", a.victimRequest(),
                    a.victimSession(), a.checks().size());
            DeadlockException answer = new DeadlockException(a.cycle());
            held.broken(a.victimSession(), a.victimRequest(), answer);
            multis.deadlocked(a.victimSession(), a.victimRequest(), answer);
            tombstones.ended(a.victimSession(), marker.getResultPath());
            return true;
        });
    }

    private static String path(DeadlockAction.NodeRef n) {
        return CellPaths.lock(LockName.parse(n.name())) + "/" + n.node();
    }
}
