package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A held call whose wait runs out removes its request (on_timeout CANCEL) only while the entry that blocked it is still
 * there. Found by the proof suite (JepsenIT, a random seed, during ZK_NO_MAJORITY): a client's acquire waited on one
 * gateway, the client retried it with the same request id on the other, the first call's wait ran out and its cancel
 * was held up with the lost quorum; the blocker was released, the retry was told GRANTED, and then the late cancel
 * deleted the granted request: the client held nothing while it believed it held the lock, and the next client was
 * granted it. Here the cancel is held in a proxy between the first gateway and ZooKeeper at exactly that moment.
 */
class LateCancelTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void aCancelThatArrivesAfterItsBlockerWent_removesNothing_andTheCallIsGranted() throws Exception {
        try (ZkCutProxy proxy = new ZkCutProxy(fx.server.getPort())) {
            // gw1 reaches ZooKeeper through the proxy, with a session long enough for a held request not to cost it
            Gateway gw1 = fx.gateway(fx.config().withZkConnect(proxy.connectString())
                    .withZkSessionTimeout(Duration.ofSeconds(15)));
            Gateway gw2 = fx.gateway(fx.config().toBuilder()
                    .dataDir(Files.createTempDirectory("warden-late-cancel-")).build());
            Warden w1 = gw1.warden();
            Warden w2 = gw2.warden();
            String holder = session(w2, "holder", 60_000);
            String client = session(w1, "client", 60_000);
            AcquireResult held = join(w2.acquire(exclusive(holder, "late/one", 0)));
            assertThat(held.status()).isEqualTo(Status.GRANTED);

            AcquireRequest first = new AcquireRequest(client, LockName.parse("late/one"), Mode.EXCLUSIVE, 1_000, "r-1",
                    OnTimeout.CANCEL);
            CompletableFuture<AcquireResult> onGw1 = w1.acquire(first);
            WardenFixture.await("the client's request queued behind the holder", () -> fx.queueSize("late/one") == 2);
            // and held by gw1 with its timer set: its node is in ZooKeeper before gw1 has the multi's reply, and a timer
            // set after the advance below would fall due only at the next advance
            WardenFixture.await("gw1 holding the call", () -> gw1.pendingAcquires() == 1);

            // Its wait runs out: gw1 reads the queue (still blocked) and sends the cancel, which the proxy holds.
            proxy.holdNext(ZkCutProxy.MULTI, client);
            fx.clock.advance(Duration.ofMillis(1_000));
            WardenFixture.await("gw1's cancel held on its way to ZooKeeper", proxy::holding);

            // Meanwhile the holder lets go, and the client's retry (same request id) at gw2 is granted.
            assertThat(w2.release(holder, LockName.parse("late/one"), held.token()).join()).isTrue();
            AcquireResult retry = join(w2.acquire(new AcquireRequest(client, LockName.parse("late/one"), Mode.EXCLUSIVE,
                    5_000, "r-1", OnTimeout.CANCEL)));
            assertThat(retry.status()).as("the retry at gw2").isEqualTo(Status.GRANTED);

            // The late cancel reaches ZooKeeper: it must not remove the request the retry was granted.
            proxy.releaseHeld();
            AcquireResult late = onGw1.get(30, TimeUnit.SECONDS);
            assertThat(fx.queueSize("late/one")).as("the granted request is still queued").isEqualTo(1);
            assertThat(late.status()).as("the first call, answered after its blocker went").isEqualTo(Status.GRANTED);
            assertThat(late.token()).isEqualTo(retry.token());
            assertThat(w2.release(client, LockName.parse("late/one"), retry.token()).join())
                    .as("the client's release of what it was granted").isTrue();
        }
    }
}
