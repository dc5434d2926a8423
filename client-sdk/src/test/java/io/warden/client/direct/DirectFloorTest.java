package io.warden.client.direct;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.client.Hold;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.cell.FloorCommand;
import io.warden.service.config.ConfigLoader;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Direct grants add the cell's token floor as the gateway does: after a raise, a direct grant's token is its node's
 * czxid plus the floor, and direct and gateway grants of one name keep growing together (contract §1).
 */
class DirectFloorTest {
    private static final String NAME = "payments/invoice-42";
    private static final long FLOOR = 1L << 40;

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void aDirectGrant_addsTheFloor_andTokensOfBothModesKeepGrowing() throws Exception {
        Gateway gateway = fx.gateway();
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(fx.server.getConnectString())
                .retryPolicy(new RetryNTimes(10, 100)).build();
        curator.start();
        try (curator; DirectLocks direct = DirectLocks.of(curator)) {
            assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
            long first;
            try (Hold hold = direct.lock(NAME).acquire(Duration.ofSeconds(5))) {
                first = hold.token();
                assertThat(first).as("no raise yet: the czxid").isEqualTo(czxidOfTheOnlyNode());
            }
            var out = new ByteArrayOutputStream();
            assertThat(FloorCommand.run(List.of("raise", "--to", Long.toString(FLOOR), "--zk", fx.server.getConnectString()),
                    new ConfigLoader(Map.of()), new PrintStream(out, true), new PrintStream(out, true))).as(out.toString()).isZero();

            long second;
            try (Hold hold = direct.lock(NAME).acquire(Duration.ofSeconds(5))) {
                second = hold.token();
                assertThat(second).isEqualTo(czxidOfTheOnlyNode() + FLOOR);
            }
            WardenFixture.await("the gateway to know the raise", () -> gateway.cellGuard().tokens().current() == FLOOR);
            String session = WardenFixture.session(gateway.warden(), "http", 30_000);
            AcquireResult viaGateway = WardenFixture.join(gateway.warden().acquire(WardenFixture.exclusive(session, NAME, 0)));
            long third = viaGateway.token();
            assertThat(gateway.warden().release(session, io.warden.service.api.LockName.parse(NAME), third).join()).isTrue();
            long fourth;
            try (Hold hold = direct.lock(NAME).acquire(Duration.ofSeconds(5))) {
                fourth = hold.token();
            }
            assertThat(List.of(first, second, third, fourth)).isSorted().doesNotHaveDuplicates();
            assertThat(second).isGreaterThan(FLOOR);
        }
    }

    @Test
    void theSdksNamesOfRaises_areTheGateways() {
        Random random = new Random(20261203);
        for (int i = 0; i < 1_000; i++) {
            long floor = i < 3 ? new long[]{0, 1, 1L << 62}[i] : random.nextLong(1L << 62);
            assertThat(DirectFloor.nodeName(floor)).isEqualTo(CellPaths.floorNode(floor));
            assertThat(DirectFloor.floorOf(CellPaths.floorNode(floor))).isEqualTo(floor);
        }
        for (String name : List.of("floor-12", "floor-x000000000000000001", "floor-9999999999999999999", "other")) {
            assertThat(DirectFloor.floorOf(name)).isEqualTo(CellPaths.floorOf(name) < 0 ? -1 : CellPaths.floorOf(name));
        }
    }

    private long czxidOfTheOnlyNode() throws Exception {
        List<String> queue = fx.queue(NAME);
        assertThat(queue).hasSize(1);
        Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(NAME) + "/" + queue.get(0));
        return stat.getCzxid();
    }
}
