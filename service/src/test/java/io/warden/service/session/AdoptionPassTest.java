package io.warden.service.session;

import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.SessionRecord;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HexFormat;
import java.util.Random;

import static io.warden.service.support.WardenFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The leader's periodic adoption pass reads every session record it does not track, so it runs only when it can find
 * something: when the set of gateways changed since its last clean pass (or every 10 minutes). Counted by the server:
 * with 2,000 sessions of a live gateway, three periodic ticks cost 6,990 ZooKeeper requests with the skip disabled, 16
 * with it.
 * When that gateway's registration vanishes, its sessions are adopted at once.
 */
class AdoptionPassTest {
    private static final int SESSIONS = 2_000;
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void periodicPasses_readNoRecordWhileNoGatewayCameOrWent_andAVanishedGatewaysSessionsAreAdoptedAtOnce() throws Exception {
        String other = CellPaths.GATEWAYS + "/gw-other";
        fx.curator.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(other);
        Random random = new Random(7);
        byte[] record = Json.write(new SessionRecord("c", 60_000, 0, "gw-other", "1"));
        for (int i = 0; i < SESSIONS; i++) {
            byte[] b = new byte[16];
            random.nextBytes(b);
            fx.curator.create().creatingParentsIfNeeded().forPath(CellPaths.session(HexFormat.of().formatHex(b)), record);
        }
        Gateway g = fx.gateway();
        await("leader", g::isLeader);
        Duration t = fx.config().zkSessionTimeout();
        // The new leader's full pass (2,000 reads), then the first periodic one, are awaited, not slept on: on a loaded
        // machine the full pass outlasted a 1 s sleep and its reads were counted in the window below.
        await("the new leader's pass done", () -> g.adoptionPasses() >= 1);
        long passes = g.adoptionPasses();
        fx.clock.advance(t);
        await("the first periodic pass done", () -> g.adoptionPasses() > passes);

        long before = fx.packetsReceived();
        for (int i = 0; i < 3; i++) {
            long done = g.adoptionPasses();
            fx.clock.advance(t);
            await("periodic pass " + i + " decided", () -> g.adoptionPasses() > done);
        }
        long used = fx.packetsReceived() - before;
        System.out.printf("ZooKeeper requests during 3 periodic adoption ticks with %d sessions of a live gateway: %d%n",
                SESSIONS, used);
        assertThat(used).as("requests in 3 periodic ticks (a full pass reads %d records)", SESSIONS).isLessThan(300);
        assertThat(g.trackedSessions()).isZero();

        fx.curator.delete().forPath(other); // gw-other vanishes: the /gateways watch starts a pass at once
        await("every session of the vanished gateway adopted", () -> g.trackedSessions() == SESSIONS);
    }
}
