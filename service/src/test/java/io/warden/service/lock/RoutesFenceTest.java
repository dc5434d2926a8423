package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.NotServedException;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.cell.CellRouting;
import io.warden.service.cell.Fence;
import io.warden.service.cell.Tokens;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.QueueListing;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.PacketLimit;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A gateway whose view of a cell's routes is behind (it has not heard of a move's freeze yet) writes nothing of the
 * frozen namespace there: every transaction that makes a queue entry checks the version of the cell's routes, so the
 * stale one fails whole. The staleness is built, not waited for: the engine is given the check as it was read before
 * another client froze the namespace, on a real ZooKeeper and a real session.
 */
class RoutesFenceTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();
    private String session;
    private Zk zk;
    private CuratorOp staleCheck;
    private LockEngine engine;

    @BeforeEach
    void setUp() throws Exception {
        fx.curator.create().creatingParentsIfNeeded().forPath(CellPaths.ROUTING, "{}".getBytes(StandardCharsets.UTF_8));
        Gateway gw = fx.gateway();
        session = gw.warden().openSession("alice", 60_000, 0).orTimeout(30, TimeUnit.SECONDS).join().sessionId();
        zk = new Zk(gw.curator(), WardenMetrics.noop());
        CellRouting routing = new CellRouting(zk, fx.clock, "default", true);
        routing.load().get(10, TimeUnit.SECONDS);
        staleCheck = routing.checkFor("pay");
        Fence stale = namespace -> staleCheck;
        engine = new LockEngine(zk, fx.clock, WardenMetrics.noop(),
                new QueueListing(zk, new PacketLimit(PacketLimit.ZOOKEEPER_DEFAULT), WardenMetrics.noop()),
                10, 100, 100, 10, Tokens.CZXID, stale, GrantRules.CONTRACT);
        engine.sessionOpened(session, "alice", null, "alice");
    }

    private static <T> T join(CompletableFuture<T> f) {
        return f.orTimeout(30, TimeUnit.SECONDS).join();
    }

    private void freezePay() throws Exception {
        fx.curator.setData().forPath(CellPaths.ROUTING, "{\"moving\":{\"pay\":\"b\"}}".getBytes(StandardCharsets.UTF_8));
    }

    private int requestRecords() throws Exception {
        return fx.curator.getChildren().forPath(CellPaths.session(session)).size();
    }

    @Test
    void withTheRoutesAsRead_theEntryIsMade() {
        AcquireRequest r = new AcquireRequest(session, LockName.parse("pay/x"), Mode.EXCLUSIVE, 0, "r1", OnTimeout.CANCEL);
        assertThat(join(engine.acquire(r)).status()).isEqualTo(Status.GRANTED);
    }

    @Test
    void afterAFreezeThisGatewayHasNotHeardOf_nothingIsWritten() throws Exception {
        freezePay();
        AcquireRequest r = new AcquireRequest(session, LockName.parse("pay/x"), Mode.EXCLUSIVE, 0, "r1", OnTimeout.CANCEL);
        Throwable refused = catchThrowable(() -> join(engine.acquire(r)));
        assertThat(refused).hasRootCauseInstanceOf(NotServedException.class);
        assertThat(fx.queueSize("pay/x")).as("no queue entry").isZero();
        assertThat(requestRecords()).as("no request record").isZero();

        MultiAcquireRequest m = new MultiAcquireRequest(session, List.of(LockName.parse("pay/a"), LockName.parse("pay/b")),
                Mode.EXCLUSIVE, 0, "r2", OnTimeout.CANCEL);
        assertThat(catchThrowable(() -> join(engine.acquireAll(m)))).hasRootCauseInstanceOf(NotServedException.class);
        assertThat(fx.queueSize("pay/a") + fx.queueSize("pay/b")).isZero();
        assertThat(requestRecords()).isZero();
    }

    @Test
    void theGatewaysOwnView_hearsTheFreeze_andRefusesAtOnce() throws Exception {
        Gateway gw = fx.gateway();
        freezePay();
        WardenFixture.await("the gateway refuses pay", () -> WardenFixture.code(catchThrowable(() -> join(gw.warden()
                .acquire(new AcquireRequest(session, LockName.parse("pay/y"), Mode.EXCLUSIVE, 0, "r3",
                        OnTimeout.CANCEL))))) == io.warden.service.api.WardenException.ErrorCode.UNAVAILABLE);
        assertThat(fx.queueSize("pay/y")).isZero();
        assertThat(join(gw.warden().acquire(new AcquireRequest(session, LockName.parse("web/y"), Mode.EXCLUSIVE, 0, "r4",
                OnTimeout.CANCEL))).status()).as("other namespaces are served").isEqualTo(Status.GRANTED);
    }
}
