package io.warden.service.zk;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One ZooKeeper {@code sync} for every caller that asked before it was sent: a caller that finds no sync in flight
 * sends one at once; callers that come while one is in flight wait for the next, which is sent when that one is
 * answered and serves them all. So a burst of linearizable reads costs one {@code sync}, not one each, and each caller's
 * sync was still sent after its call began: a read sent once it is answered reflects every write committed before the
 * call (the contract's linearizable reads; docs/design.md, "Refused tries").
 *
 * <p>A failed sync fails every caller it served (the reads they would make could be stale); each decides what to answer.
 *
 * <p>Concurrency: {@link Batcher}'s queue, with one sync in flight at a time. Callers' futures complete on the ZooKeeper
 * event thread. Memory: the callers waiting for the next sync, each a call waiting for ZooKeeper.
 */
final class SharedSync extends Batcher<CompletableFuture<Void>> {
    private final Zk zk;
    private final String path;

    /** {@code path}: any node of the cell (a sync flushes the whole server's channel to the leader, whatever the path). */
    SharedSync(Zk zk, String path) {
        super(1);
        this.zk = zk;
        this.path = path;
    }

    /** Completes once a sync sent after this call has been answered. */
    CompletableFuture<Void> sync() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        submit(f);
        return f;
    }

    @Override
    List<CompletableFuture<Void>> take(ArrayDeque<CompletableFuture<Void>> queue) {
        List<CompletableFuture<Void>> all = new ArrayList<>(queue);
        queue.clear();
        return all;
    }

    @Override
    CompletableFuture<Void> send(List<CompletableFuture<Void>> batch) {
        CompletableFuture<Void> sent;
        try {
            sent = zk.sync(path);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return sent.handle((v, err) -> {
            for (CompletableFuture<Void> caller : batch) {
                if (err == null) {
                    caller.complete(null);
                } else {
                    caller.completeExceptionally(err);
                }
            }
            return null;
        });
    }
}
