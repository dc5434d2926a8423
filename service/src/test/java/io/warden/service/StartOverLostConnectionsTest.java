package io.warden.service;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.api.AcquireResult;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A gateway that starts while its connection to ZooKeeper keeps dropping (a loaded or restarting ensemble) waits it out
 * within its start's wait, instead of exiting when Curator's few retries give up: the first start of a cell makes
 * /sessions' 256 shards in one transaction, and here the connection is cut after that transaction (and after each
 * repeat of it) reaches the server, more times than Curator retries.
 */
class StartOverLostConnectionsTest {
    private WardenFixture fx;
    private ZkCutProxy proxy;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        proxy = new ZkCutProxy(fx.server.getPort());
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
        proxy.close();
    }

    @Test
    void theShardsTransactionLosingItsReplyMoreTimesThanCuratorRetries_theGatewayStillStartsAndServes() {
        proxy.cutAfterNext(ZkCutProxy.MULTI, 6, "/sessions/");
        Gateway gw = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
        boolean cut = proxy.hasCut();
        proxy.cutAfterNext(ZkCutProxy.MULTI, 0); // the session's writes below go through

        assertThat(cut).as("the shards' transaction lost its reply").isTrue();
        assertThat(sessionShards()).hasSize(256);
        String s = session(gw.warden(), "a", 10_000);
        assertThat(join(gw.warden().acquire(exclusive(s, "start/x", 0))).status()).isEqualTo(AcquireResult.Status.GRANTED);
    }

    private java.util.List<String> sessionShards() {
        try {
            return fx.curator.getChildren().forPath(io.warden.service.zk.CellPaths.SESSIONS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
