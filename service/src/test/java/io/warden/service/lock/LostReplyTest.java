package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.CloseResult;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import io.warden.service.zk.CellPaths;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A write that ZooKeeper applied but whose reply was lost with the connection: Curator sends it again after
 * reconnecting, and the second attempt fails because the first one worked. Found by WholeSystemFaultIT, where a
 * release during a ZooKeeper leader kill answered {@code released:false} for a hold it had in fact released.
 */
class LostReplyTest {
    private WardenFixture fx;
    private ZkCutProxy proxy;
    private Warden w;
    private Gateway gw;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        proxy = new ZkCutProxy(fx.server.getPort());
        gw = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
        proxy.close();
    }

    @Test
    void release_whoseReplyIsLost_stillAnswersReleased() {
        String a = session(w, "a", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "lost/r", 0)));

        proxy.cutAfterNext(ZkCutProxy.MULTI);
        boolean released = w.release(a, LockName.parse("lost/r"), held.token()).orTimeout(20, TimeUnit.SECONDS).join();

        assertThat(proxy.hasCut()).as("the reply of the release was lost").isTrue();
        assertThat(released).isTrue();
        assertThat(w.lock(LockName.parse("lost/r")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }

    /**
     * Found by the proof suite (ProofSoakIT, 30 minutes, seed 7: a release answered {@code released:false} 3.7 s after
     * its first attempt had been applied). Whether a failed multi "may have been applied" was judged by a counter of
     * connection losses kept by a connection-state listener; Curator runs those on a thread of its own, so the retried
     * multi's NONODE could come back before the listener had counted the loss. Here that thread is held up (as a busy
     * machine holds it up) from before the loss on: the answer must not depend on it.
     */
    @Test
    void release_whoseReplyIsLost_answersReleased_evenWhileCuratorsStateThreadLags() throws Exception {
        String a = session(w, "a", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "lost/lag", 0)));
        java.util.concurrent.CountDownLatch stateThreadHeld = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch letGo = new java.util.concurrent.CountDownLatch(1);
        gw.curator().getConnectionStateListenable().addListener((client, state) -> {
            if (state == org.apache.curator.framework.state.ConnectionState.RECONNECTED && stateThreadHeld.getCount() > 0) {
                stateThreadHeld.countDown();
                try {
                    letGo.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        try {
            // One connection loss and reconnection: the listener above then holds Curator's state thread.
            proxy.partition();
            proxy.heal();
            assertThat(stateThreadHeld.await(20, TimeUnit.SECONDS)).as("Curator's state thread is held").isTrue();

            proxy.cutAfterNext(ZkCutProxy.MULTI);
            boolean released = w.release(a, LockName.parse("lost/lag"), held.token()).orTimeout(20, TimeUnit.SECONDS).join();

            assertThat(proxy.hasCut()).as("the reply of the release was lost").isTrue();
            assertThat(released).as("released, though the state listeners have not heard of the loss yet").isTrue();
        } finally {
            letGo.countDown();
        }
        assertThat(w.lock(LockName.parse("lost/lag")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }

    @Test
    void close_whoseReplyIsLost_stillReportsWhatItReleased() {
        String a = session(w, "a", 60_000);
        join(w.acquire(exclusive(a, "lost/c", 0)));

        proxy.cutAfterNext(ZkCutProxy.MULTI);
        CloseResult closed = w.closeSession(a).orTimeout(20, TimeUnit.SECONDS).join();

        assertThat(proxy.hasCut()).isTrue();
        assertThat(closed.released()).containsExactly("lost/c");
        assertThat(w.lock(LockName.parse("lost/c")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }

    @Test
    void acquire_whoseReplyIsLost_findsItsOwnNode_andQueuesOnce() throws Exception {
        String a = session(w, "a", 60_000);

        proxy.cutAfterNext(ZkCutProxy.MULTI);
        AcquireResult r = join(w.acquire(exclusive(a, "lost/a", 0)));

        assertThat(proxy.hasCut()).isTrue();
        assertThat(r.status()).isEqualTo(AcquireResult.Status.GRANTED);
        assertThat(fx.queue("lost/a")).hasSize(1);
    }

    @Test
    void openSession_whoseReplyIsLost_stillOpensOneSession() throws Exception {
        proxy.cutAfterNext(ZkCutProxy.CREATE2); // Curator creates with create2
        String a = w.openSession("a", 60_000, 0).orTimeout(20, TimeUnit.SECONDS).join().sessionId();

        assertThat(proxy.hasCut()).isTrue();
        String shard = CellPaths.session(a).substring(0, CellPaths.session(a).lastIndexOf('/'));
        assertThat(fx.curator.getChildren().forPath(shard)).as("one session, not two").containsExactly(a);
    }
}
