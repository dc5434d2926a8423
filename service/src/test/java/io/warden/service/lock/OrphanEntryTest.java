package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A queue node whose request record is gone (only a hand in ZooKeeper does that) is found by the calls waiting for it
 * and removed, so its lock cannot stick: before, release answered false, close left the node and every waiter timed out.
 */
class OrphanEntryTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void aHoldWhoseRequestRecordWasDeletedByHand_isRemoved_andItsWaiterGranted() throws Exception {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        String a = session(w, "a", 120_000);
        String b = session(w, "b", 120_000);
        AcquireResult held = join(w.acquire(exclusive(a, "orph/x", 0)));
        CompletableFuture<AcquireResult> waiter = w.acquire(exclusive(b, "orph/x", 100_000));
        await("waiting", () -> gw.pendingAcquires() == 1);

        List<String> records = fx.curator.getChildren().forPath(CellPaths.session(a));
        assertThat(records).hasSize(1);
        fx.curator.delete().forPath(CellPaths.session(a) + "/" + records.get(0));
        assertThat(w.release(a, LockName.parse("orph/x"), held.token()).join())
                .as("a release cannot find a request without its record").isFalse();

        fx.clock.advance(BlockerWatches.ORPHAN_CHECK_INTERVAL.minusMillis(1));
        assertThat(fx.queueSize("orph/x")).as("looked at only after the interval").isEqualTo(2);
        fx.clock.advance(Duration.ofMillis(1));
        AcquireResult granted = join(waiter);
        assertThat(granted.status()).isEqualTo(Status.GRANTED);
        assertThat(granted.token()).isGreaterThan(held.token());
        assertThat(fx.queueSize("orph/x")).isEqualTo(1);
        assertThat(gw.metrics().registry().get("warden.orphan.entries.removed").counter().count()).isEqualTo(1.0);
    }

    @Test
    void aPlainCuratorHolder_hasNoRecordToLookFor_andIsLeftAlone() throws Exception {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        InterProcessReadWriteLock curatorLock = new InterProcessReadWriteLock(fx.curator, WardenFixture.lockPath("orph/c"));
        assertThat(curatorLock.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
        try {
            String b = session(w, "b", 120_000);
            CompletableFuture<AcquireResult> waiter = w.acquire(exclusive(b, "orph/c", 100_000));
            await("waiting", () -> gw.pendingAcquires() == 1);
            fx.clock.advance(BlockerWatches.ORPHAN_CHECK_INTERVAL.multipliedBy(3));
            assertThat(waiter).isNotDone();
            assertThat(fx.queueSize("orph/c")).isEqualTo(2);
        } finally {
            curatorLock.writeLock().release();
        }
    }
}
