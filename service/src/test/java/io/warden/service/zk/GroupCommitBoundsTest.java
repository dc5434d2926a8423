package io.warden.service.zk;

import io.warden.service.metrics.WardenMetrics;
import io.warden.service.support.OneBatch;
import io.warden.service.support.WardenFixture;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bounds of a write batch (docs/design.md, "Group commit"): at most {@code maxOps} operations and {@code maxBytes}
 * bytes as ZooKeeper serialises them, a call larger than that alone, and calls never split. Seen from ZooKeeper: nodes
 * made in one transaction share its zxid, their czxid.
 */
class GroupCommitBoundsTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void aBatchHoldsAtMostMaxOpsOperations_andALargerCallGoesAlone_whole() throws Exception {
        Zk zk = new Zk(fx.curator, WardenMetrics.noop(), new Batching(true, 10, 256 * 1024, 64, 256 * 1024, 1_000, 1));
        fx.curator.create().forPath("/bounds");
        List<Supplier<CompletableFuture<List<CuratorTransactionResult>>>> calls = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            calls.add(creates(zk, "c" + i, 3, 0)); // 3 operations: 3 calls fit in a batch of 10
        }
        calls.add(creates(zk, "big", 25, 0)); // over the bound on its own
        calls.add(creates(zk, "after", 3, 0));

        List<CompletableFuture<List<CuratorTransactionResult>>> answers = OneBatch.afterWrite(fx.curator, zk, calls);
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);

        Map<Long, List<String>> byTransaction = transactions();
        assertThat(byTransaction.values()).allSatisfy(nodes -> assertThat(nodes.size()).as("operations of %s", nodes)
                .isLessThanOrEqualTo(nodes.stream().anyMatch(n -> n.startsWith("big-")) ? 25 : 10));
        assertThat(byTransaction.values()).filteredOn(nodes -> nodes.stream().anyMatch(n -> n.startsWith("big-")))
                .singleElement().satisfies(nodes -> assertThat(nodes).as("the large call, whole and alone").hasSize(25));
        assertThat(byTransaction.values()).as("calls are never split").allSatisfy(nodes -> {
            for (String n : nodes) {
                String call = n.substring(0, n.indexOf('-'));
                assertThat(nodes.stream().filter(m -> m.startsWith(call + "-")).count())
                        .isEqualTo(call.equals("big") ? 25 : 3);
            }
        });
        assertThat(byTransaction.values()).as("batches were made").anySatisfy(nodes -> assertThat(nodes).hasSize(9));
    }

    @Test
    void aBatchHoldsAtMostMaxBytes() throws Exception {
        // About 1,100 bytes a call (two creates of 500 bytes of data): at most 3 in 4 KiB.
        Zk zk = new Zk(fx.curator, WardenMetrics.noop(), new Batching(true, 1_000, 4 * 1024, 64, 256 * 1024, 1_000, 1));
        fx.curator.create().forPath("/bounds");
        List<Supplier<CompletableFuture<List<CuratorTransactionResult>>>> calls = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            calls.add(creates(zk, "c" + i, 2, 500));
        }

        List<CompletableFuture<List<CuratorTransactionResult>>> answers = OneBatch.afterWrite(fx.curator, zk, calls);
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);

        Map<Long, List<String>> byTransaction = transactions();
        assertThat(byTransaction.values()).allSatisfy(nodes -> assertThat(nodes.size()).isLessThanOrEqualTo(6));
        assertThat(byTransaction.values()).as("batches were made").anySatisfy(nodes -> assertThat(nodes).hasSize(6));
    }

    /** A call that creates {@code n} children of /bounds named {@code call-i}, each with {@code bytes} of data. */
    private static Supplier<CompletableFuture<List<CuratorTransactionResult>>> creates(Zk zk, String call, int n, int bytes) {
        return () -> {
            List<CuratorOp> ops = new ArrayList<>();
            try {
                for (int i = 0; i < n; i++) {
                    ops.add(zk.ops().create().forPath("/bounds/" + call + "-" + i, new byte[bytes]));
                }
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
            return zk.multi(ops);
        };
    }

    /** The children of /bounds by the transaction that made them. */
    private Map<Long, List<String>> transactions() throws Exception {
        Map<Long, List<String>> out = new TreeMap<>();
        for (String child : fx.curator.getChildren().forPath("/bounds")) {
            long czxid = fx.curator.checkExists().forPath("/bounds/" + child).getCzxid();
            out.computeIfAbsent(czxid, k -> new ArrayList<>()).add(child);
        }
        return out;
    }
}
