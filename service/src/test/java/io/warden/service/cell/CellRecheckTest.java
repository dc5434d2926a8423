package io.warden.service.cell;

import io.warden.service.Gateway;
import io.warden.service.api.LockName;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import io.warden.service.zk.CellPaths;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A check of the cell made while the gateway serves (one asked for while another ran, after a reconnection, or after a
 * raise) compares the probe's zxid with what the gateway had seen when the probe's reply came. What it sees after that
 * reply and before the check decides — replies and notifications of other gateways' writes made after the probe, and
 * folded into its mark meanwhile — is newer than the probe, not evidence that the cell went back. A 30-minute soak saw
 * a gateway refuse its healthy cell as rolled back, for good, that way: the check's last read came back half a second
 * after its probe, with other gateways' grants in between.
 */
class CellRecheckTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    private static double highWaterToken(Gateway g) {
        return g.metrics().registry().find("warden.high.water.token").gauge().value();
    }

    @Test
    void zxidsSeenAfterTheProbe_beforeTheCheckDecides_areNotARollback() throws Exception {
        try (ZkCutProxy proxy = new ZkCutProxy(fx.server.getPort())) {
            Gateway g = fx.gateway(fx.config().withZkConnect(proxy.connectString())
                    .withZkSessionTimeout(Duration.ofSeconds(30)));
            CellGuard cell = g.cellGuard();
            assertThat(cell.serving()).isTrue();

            proxy.holdNext(ZkCutProxy.EXISTS, CellPaths.CELL); // the check's last read, after its probe
            cell.check();
            WardenFixture.await("the check's last read held", proxy::holding);

            // Another client writes after the probe; the gateway sees the newest of those zxids before the check
            // decides (as a reply or a notification that came between the probe's reply and the check's last read
            // would show it), and, serving, folds it into its mark.
            fx.curator.create().orSetData().forPath("/scratch");
            long later = 0;
            for (int i = 0; i < 20; i++) {
                later = fx.curator.setData().forPath("/scratch", new byte[0]).getMzxid();
            }
            cell.observe(later);
            long seen = later;
            WardenFixture.await("the mark to include the later zxid", () -> highWaterToken(g) >= seen);

            proxy.releaseHeld();
            // A read sent now is answered after the held one, and the check decides as that one's answer comes.
            g.warden().lock(LockName.parse("recheck/x")).get(30, TimeUnit.SECONDS);
            assertThat(cell.state()).as("the cell after the check: %s", cell.refusal()).isEqualTo(CellGuard.State.SERVING);
            assertThat(g.metrics().registry().find("warden.zookeeper.rollbacks.detected").functionCounter().count())
                    .isZero();
        }
    }
}
