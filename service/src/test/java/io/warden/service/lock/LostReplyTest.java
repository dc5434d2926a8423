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

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        proxy = new ZkCutProxy(fx.server.getPort());
        Gateway gw = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
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
