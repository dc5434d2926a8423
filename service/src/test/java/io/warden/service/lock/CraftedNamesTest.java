package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * No lock name may create a znode that Warden's or Curator's lock rules read as a queue
 * entry of another lock. Before the fix a lock's node was {@code /locks/{namespace}/{path...}}, so the name
 * {@code pay/job/0-__WRIT__0000000000} made a child of {@code pay/job}'s node that parsed as an EXCLUSIVE entry with
 * sequence 0: a phantom holder of {@code pay/job} that nobody could release, also on names never used before; and
 * children such as {@code a/b/0} made a plain Curator {@link InterProcessReadWriteLock} on {@code a/b} wait forever.
 * Now every lock node sits alone at {@code /locks/{namespace}/{shard}/{path joined by '~'}}: a lock's children are
 * its queue and nothing else.
 */
class CraftedNamesTest {
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

    @Test
    void aNameThatLooksLikeAQueueEntry_cannotHijackAHeldLock() {
        String alice = session(w, "alice", 60_000);
        String mallory = session(w, "mallory", 60_000);
        AcquireResult held = join(w.acquire(exclusive(alice, "pay/job", 0)));
        assertThat(held.status()).isEqualTo(Status.GRANTED);

        AcquireResult crafted = join(w.acquire(exclusive(mallory, "pay/job/0-__WRIT__0000000000", 0)));
        assertThat(crafted.status()).as("a lock of its own, nothing more").isEqualTo(Status.GRANTED);

        LockView view = w.lock(LockName.parse("pay/job")).join();
        assertThat(view.holders()).singleElement().satisfies(h -> assertThat(h.sessionId()).isEqualTo(alice));
        assertThat(view.waiters()).isEmpty();
        assertThat(w.check(LockName.parse("pay/job"), held.token()).join().current()).isTrue();
        assertThat(w.release(alice, LockName.parse("pay/job"), held.token()).join()).isTrue();
        assertThat(join(w.acquire(exclusive(mallory, "pay/job", 0))).status()).isEqualTo(Status.GRANTED);
    }

    @Test
    void aNameThatLooksLikeAQueueEntry_cannotBlockANameNeverUsedBefore() {
        String mallory = session(w, "mallory", 60_000);
        String bob = session(w, "bob", 60_000);
        for (String crafted : List.of("pay/fresh/0-__WRIT__0000000000", "pay/fresh/x__READ__", "pay/fresh/x-__WRIT__")) {
            assertThat(join(w.acquire(exclusive(mallory, crafted, 0))).status()).isEqualTo(Status.GRANTED);
        }
        assertThat(w.lock(LockName.parse("pay/fresh")).join().mode()).isEqualTo(LockView.LockMode.FREE);
        assertThat(join(w.acquire(exclusive(bob, "pay/fresh", 0))).status()).isEqualTo(Status.GRANTED);
    }

    @Test
    void longerNamesBelowALock_neverBlockAPlainCuratorLockOnIt() throws Exception {
        String s = session(w, "app", 60_000);
        for (String below : List.of("a/b/0", "a/b/x__READ__", "a/b/x-__WRIT__", "a/b/c/d")) {
            assertThat(join(w.acquire(exclusive(s, below, 0))).status()).isEqualTo(Status.GRANTED);
        }
        InterProcessReadWriteLock curator = new InterProcessReadWriteLock(fx.curator, CellPaths.lock(LockName.parse("a/b")));
        assertThat(curator.writeLock().acquire(5, TimeUnit.SECONDS)).as("Curator's writer on a/b").isTrue();
        curator.writeLock().release();
        assertThat(curator.readLock().acquire(5, TimeUnit.SECONDS)).as("Curator's reader on a/b").isTrue();
        curator.readLock().release();
        assertThat(w.lock(LockName.parse("a/b")).join().mode()).isEqualTo(LockView.LockMode.FREE);
    }
}
