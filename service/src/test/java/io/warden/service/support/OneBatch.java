package io.warden.service.support;

import io.warden.service.zk.Zk;
import org.apache.curator.framework.CuratorFramework;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Puts calls into one group-commit batch of a {@link Zk}, whatever the machine's timing (docs/design.md, "Group
 * commit"). A batch is what arrives while the one before it is in flight, and the stage answers a batch's callers
 * before it sends the next one. So the calls are made while a plug (a write, or a read) is being answered: from the
 * plug's own completion, on the ZooKeeper event thread. The plug itself is sent from that thread too (from a Curator
 * background callback), so its reply cannot be handled before the completion is attached.
 *
 * <p>Each call must reach the {@link Zk} without waiting for ZooKeeper first (an acquire of a session the gateway
 * has a hint for, a release of a hold made through it); the calls then queue, in order, for the next batch.
 */
public final class OneBatch {
    private OneBatch() {
    }

    /** Makes {@code calls} while a write of {@code zk} (a create and delete of a scratch node) is being answered. */
    public static <T> List<CompletableFuture<T>> afterWrite(CuratorFramework curator, Zk zk,
                                                           List<Supplier<CompletableFuture<T>>> calls) {
        return onEventThread(curator, () -> {
            String scratch = "/group-commit-plug-" + UUID.randomUUID();
            try {
                return zk.multi(List.of(zk.ops().create().forPath(scratch), zk.ops().delete().forPath(scratch)));
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        }, calls);
    }

    /**
     * Makes {@code calls} while a read of {@code plugPath} by {@code zk} is being answered. The plug is batched only when
     * {@code zk} has read that path lately (its size is known), so read it once before.
     */
    public static <T> List<CompletableFuture<T>> afterRead(CuratorFramework curator, Zk zk, String plugPath,
                                                          List<Supplier<CompletableFuture<T>>> calls) {
        return onEventThread(curator, () -> zk.childrenAndStat(plugPath), calls);
    }

    private static <T> List<CompletableFuture<T>> onEventThread(CuratorFramework curator,
                                                               Supplier<CompletableFuture<?>> plug,
                                                               List<Supplier<CompletableFuture<T>>> calls) {
        CompletableFuture<List<CompletableFuture<T>>> made = new CompletableFuture<>();
        try {
            curator.checkExists().inBackground((client, event) -> {
                try {
                    plug.get().whenComplete((r, err) -> {
                        if (err != null) {
                            made.completeExceptionally(err);
                            return;
                        }
                        List<CompletableFuture<T>> out = new ArrayList<>(calls.size());
                        try {
                            for (Supplier<CompletableFuture<T>> call : calls) {
                                out.add(call.get());
                            }
                            made.complete(out);
                        } catch (RuntimeException e) {
                            made.completeExceptionally(e);
                        }
                    });
                } catch (RuntimeException e) {
                    made.completeExceptionally(e);
                }
            }).forPath("/");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return made.orTimeout(20, TimeUnit.SECONDS).join();
    }
}
