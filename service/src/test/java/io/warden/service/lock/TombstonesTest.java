package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request record deleted under a live queue node blocks the lock forever (release answers false,
 * close leaves the node). Pruning used to delete tombstones with version −1 after reading them: a prune working from an
 * old read could delete a record that a late duplicate had since made live again. Now tombstones are named by end
 * markers and deleted at their version, so a stale prune fails on a live record and leaves it alone.
 */
class TombstonesTest {
    private WardenFixture fx;
    private Warden w;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        Gateway gw = fx.gateway();
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private static AcquireRequest request(String session, String id) {
        return new AcquireRequest(session, LockName.parse("tomb/one"), Mode.EXCLUSIVE, 0, id, OnTimeout.CANCEL);
    }

    @Test
    void aPruneFromAStaleListing_neverDeletesARecordMadeLiveAgain_soCloseStillFreesTheLock() throws Exception {
        String s = session(w, "a", 60_000);
        for (int i = 0; i < Tombstones.KEPT + 10; i++) {
            AcquireResult r = join(w.acquire(request(s, "r" + i)));
            assertThat(w.release(s, LockName.parse("tomb/one"), r.token()).join()).isTrue();
        }
        List<String> stale = fx.curator.getChildren().forPath(CellPaths.session(s));
        Tombstones tombstones = new Tombstones(new Zk(fx.curator, WardenMetrics.noop()));
        tombstones.prune(s, stale).join(); // the oldest are gone now, r0's among them
        assertThat(fx.curator.checkExists().forPath(CellPaths.sessionRequest(s, CellPaths.requestUuid(s, "r0")))).isNull();

        AcquireResult late = join(w.acquire(request(s, "r0"))); // a late duplicate, older than the kept tombstones
        assertThat(late.status()).isEqualTo(Status.GRANTED);
        tombstones.prune(s, stale).join(); // a second prune, from the listing it read before

        assertThat(fx.curator.checkExists().forPath(CellPaths.sessionRequest(s, CellPaths.requestUuid(s, "r0"))))
                .as("the live record survives the stale prune").isNotNull();
        assertThat(w.closeSession(s).join().released()).containsExactly("tomb/one");
        assertThat(w.lock(LockName.parse("tomb/one")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }

    @Test
    void liveRequests_areCountedFromTheNamesAlone() {
        assertThat(Tombstones.live(List.of("a", "b", "~a_0000000003"))).isEqualTo(1);
        assertThat(Tombstones.live(List.of())).isZero();
        assertThat(Tombstones.uuidOf("~0f-aa_0000000012")).isEqualTo("0f-aa");
    }
}
