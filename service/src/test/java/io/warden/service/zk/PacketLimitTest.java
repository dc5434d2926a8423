package io.warden.service.zk;

import io.warden.service.Gateway;
import io.warden.service.api.LockPage;
import io.warden.service.api.NamespaceStats;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.SessionRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * ZooKeeper's packet limit, at small scale: the gateway's ZooKeeper client refuses any reply over {@code jute.maxbuffer}
 * (here 40,000 bytes instead of 1 MiB) and treats it as a lost connection. Before the fix {@code getChildren(/sessions)}
 * failed this way at about 29,000 sessions (here: 2,000), so the leader's adoption pass, the cell counts and the
 * console failed and the gateway dropped its connection on every pass; a namespace with many locks did the same to
 * listings. With sessions, lock-delays and lock nodes sharded, every call stays small.
 */
class PacketLimitTest {
    private static final int SESSIONS = 2_000;
    private static final int LOCKS = 1_500;
    private WardenFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void twoThousandSessionsOfAVanishedGateway_andManyLocksInOneNamespace_stayBelowThePacketLimit() throws Exception {
        Random random = new Random(42);
        List<String> ids = new ArrayList<>();
        byte[] record = Json.write(new SessionRecord("c", 60_000, 0, "gw-gone", "0"));
        for (int i = 0; i < SESSIONS; i++) {
            byte[] b = new byte[16];
            random.nextBytes(b);
            String id = HexFormat.of().formatHex(b);
            ids.add(id);
            fx.curator.create().creatingParentsIfNeeded().forPath(CellPaths.session(id), record);
        }

        // The gateway's client takes replies of at most 40,000 bytes (zk-max-packet-bytes, its jute.maxbuffer).
        Gateway g = fx.gateway(fx.config().withZkMaxPacketBytes(40_000).withMaxEntriesPerLock(300));
        await("every orphan adopted", () -> g.trackedSessions() == SESSIONS);

        List<String> holders = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            if (i % 500 == 0) { // a session may hold 1000 (max-requests-per-session)
                holders.add(g.warden().openSession("lister", 60_000, 0).join().sessionId());
            }
            join(g.warden().acquire(exclusive(holders.get(holders.size() - 1), "big/" + "x".repeat(40) + "-" + i, 0)));
        }
        LockPage page = g.warden().locks("big", null, 1000, null).join();
        assertThat(page.locks()).hasSize(1000);
        assertThat(page.nextAfter()).isNotNull();
        assertThat(g.warden().locks("big", null, 1000, page.nextAfter()).join().locks()).hasSize(LOCKS - 1000);
        // A page reads the namespace's shards (names only) and about one queue per lock it shows, not every queue.
        int shards = fx.curator.getChildren().forPath(CellPaths.LOCKS + "/big").size();
        long before = fx.packetsReceived();
        assertThat(g.warden().locks("big", null, 10, null).join().locks()).hasSize(10);
        long used = fx.packetsReceived() - before;
        System.out.printf("a page of 10 among %d locks in %d shards: %d requests%n", LOCKS, shards, used);
        assertThat(used).as("requests for a page of 10 among %d locks in %d shards", LOCKS, shards).isLessThan(shards + 100);
        List<NamespaceStats> spaces = g.warden().namespaces().join();
        assertThat(spaces).singleElement().satisfies(ns -> assertThat(ns.locks()).isEqualTo(LOCKS));

        fx.clock.advance(Duration.ofSeconds(30)); // the cell counts are refreshed every 30 s
        await("cell counts", () -> g.metrics().registry().find("warden.cell.sessions").gauge() != null
                && g.metrics().registry().find("warden.cell.sessions").gauge().value() == SESSIONS + holders.size());
        assertThat(g.metrics().registry().find("warden.cell.locks").gauge().value()).isEqualTo(LOCKS);
        assertThat(g.metrics().registry().find("warden.cell.holds").gauge().value()).isEqualTo(LOCKS);
        assertThat(g.consoleBackend().snapshot().join().sessions()).hasSize(SESSIONS + holders.size());
        assertThat(g.warden().ready()).isTrue();
    }
}
