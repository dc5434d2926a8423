package io.warden.service.zk;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.support.OneBatch;
import io.warden.service.support.WardenFixture;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Reads after a batch (docs/design.md, "Group commit"): the lock reads ({@link Zk#childrenAndStat}) that arrive while
 * one is in flight go to ZooKeeper together, as one read-only {@code multi}, and each is answered as if read alone: the
 * same children and stat, and NONODE for a lock that is gone without failing the others.
 */
class GroupReadTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void readsMadeTogether_goAsOneRequest_andEachIsAnsweredAsAlone() throws Exception {
        WardenMetrics metrics = new WardenMetrics(new SimpleMeterRegistry());
        // Size hints kept long: on a loaded machine the set-up may outlast the default second, and the reads would go alone.
        Zk zk = new Zk(fx.curator, metrics, Batching.DEFAULT.withSizeHintMs(600_000));
        for (String p : List.of("/t/plug", "/t/one", "/t/gone", "/t/two")) {
            fx.curator.create().creatingParentsIfNeeded().forPath(p);
        }
        fx.curator.create().forPath("/t/one/x");
        fx.curator.create().forPath("/t/one/y");
        fx.curator.create().forPath("/t/two/z");
        for (String p : List.of("/t/plug", "/t/one", "/t/gone", "/t/two")) {
            zk.childrenAndStat(p).get(20, TimeUnit.SECONDS); // read once: their sizes are known
        }
        fx.curator.delete().forPath("/t/gone");
        long packetsBefore = fx.packetsReceived();

        List<Supplier<CompletableFuture<Zk.ChildrenAndStat>>> reads = List.of(
                () -> zk.childrenAndStat("/t/one"), () -> zk.childrenAndStat("/t/gone"), () -> zk.childrenAndStat("/t/two"),
                () -> zk.childrenAndStat("/t/one"));
        List<CompletableFuture<Zk.ChildrenAndStat>> answers = OneBatch.afterRead(fx.curator, zk, "/t/plug", reads);
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).handle((v, e) -> null).get(20, TimeUnit.SECONDS);
        assertThat(fx.packetsReceived() - packetsBefore).as("requests the server got: the helper's "
                + "trigger (an exists), the plug, one for the four reads, and the first mntr itself").isEqualTo(4);

        Zk.ChildrenAndStat one = answers.get(0).get(20, TimeUnit.SECONDS);
        assertThat(one.children()).containsExactlyInAnyOrder("x", "y");
        Stat alone = fx.curator.checkExists().forPath("/t/one");
        assertThat(one.stat()).as("the stat a read alone gets").isEqualTo(alone);
        Throwable gone = catchThrowable(() -> answers.get(1).get(20, TimeUnit.SECONDS));
        assertThat(Zk.code(gone)).isEqualTo(KeeperException.Code.NONODE);
        Zk.ChildrenAndStat two = answers.get(2).get(20, TimeUnit.SECONDS);
        assertThat(two.children()).containsExactly("z");
        assertThat(two.stat()).isEqualTo(fx.curator.checkExists().forPath("/t/two"));
        assertThat(answers.get(3).get(20, TimeUnit.SECONDS).children()).containsExactlyInAnyOrder("x", "y");

        DistributionSummary batches = metrics.registry().find("warden.zk.batch.calls").tag("kind", "read").summary();
        assertThat(batches).as("read batches are measured").isNotNull();
        assertThat(batches.max()).as("the four reads were one request").isGreaterThanOrEqualTo(4);
    }

    /**
     * A lock whose names took more than about 63 KiB when last read (here 1,200 entries, about 80 KB) is read alone, at
     * once, also while a read is in flight: a batch of several such locks could pass the client's packet limit and cost
     * the gateway its connection. The small locks read with it still go together.
     */
    @Test
    void aLargeLock_isReadAlone_theSmallOnesTogether() throws Exception {
        WardenMetrics metrics = new WardenMetrics(new SimpleMeterRegistry());
        Zk zk = new Zk(fx.curator, metrics, Batching.DEFAULT.withSizeHintMs(600_000));
        for (String p : List.of("/t/plug", "/t/big", "/t/small-1", "/t/small-2")) {
            fx.curator.create().creatingParentsIfNeeded().forPath(p);
        }
        List<org.apache.curator.framework.api.transaction.CuratorOp> ops = new java.util.ArrayList<>();
        for (int i = 0; i < 1_200; i++) {
            ops.add(fx.curator.transactionOp().create().forPath("/t/big/_c_" + java.util.UUID.randomUUID() + "-__WRIT__" + i));
        }
        fx.curator.transaction().forOperations(ops);
        for (String p : List.of("/t/plug", "/t/big", "/t/small-1", "/t/small-2")) {
            zk.childrenAndStat(p).get(20, TimeUnit.SECONDS);
        }
        long packetsBefore = fx.packetsReceived();

        List<CompletableFuture<Zk.ChildrenAndStat>> answers = OneBatch.afterRead(fx.curator, zk, "/t/plug", List.of(
                () -> zk.childrenAndStat("/t/small-1"), () -> zk.childrenAndStat("/t/big"),
                () -> zk.childrenAndStat("/t/small-2")));
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);

        assertThat(fx.packetsReceived() - packetsBefore).as("the trigger, the plug, the large lock alone, one for the two "
                + "small ones, and the first mntr itself").isEqualTo(5);
        assertThat(answers.get(1).get().children()).hasSize(1_200);
        assertThat(answers.get(0).get().children()).isEmpty();
        assertThat(answers.get(2).get().children()).isEmpty();
        DistributionSummary batches = metrics.registry().find("warden.zk.batch.calls").tag("kind", "read").summary();
        assertThat(batches.max()).as("the two small locks in one request, not the large one").isEqualTo(2);
    }
}
