package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;

/** A plain Curator {@link InterProcessReadWriteLock} on the lock's path and Warden exclude each other (contract §4). */
class CuratorInteropTest {
    private WardenFixture fx;
    private Warden w;
    private InterProcessReadWriteLock curatorLock;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        Gateway gw = fx.gateway();
        w = gw.warden();
        curatorLock = new InterProcessReadWriteLock(fx.curator, WardenFixture.lockPath("shared/res"));
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void curatorWriter_blocksWarden_andWardenIsGrantedAfterItsRelease() throws Exception {
        assertThat(curatorLock.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
        String s = session(w, "app", 60_000);

        assertThat(join(w.acquire(exclusive(s, "shared/res", 0))).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(join(w.acquire(shared(s, "shared/res", 0))).status()).isEqualTo(Status.TIMED_OUT);
        LockView view = w.lock(LockName.parse("shared/res")).join();
        assertThat(view.holders()).singleElement().satisfies(h -> assertThat(h.sessionId()).isNull());

        CompletableFuture<AcquireResult> waiting = w.acquire(exclusive(s, "shared/res", 60_000));
        await("queued behind Curator", () -> fx.queueSize("shared/res") == 2);
        curatorLock.writeLock().release();
        assertThat(join(waiting).status()).isEqualTo(Status.GRANTED);
    }

    @Test
    void wardenWriter_blocksCurator_untilReleased() throws Exception {
        String s = session(w, "app", 60_000);
        AcquireResult held = join(w.acquire(exclusive(s, "shared/res", 0)));

        assertThat(curatorLock.writeLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(curatorLock.readLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();

        w.release(s, LockName.parse("shared/res"), held.token()).join();
        assertThat(curatorLock.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
        curatorLock.writeLock().release();
    }

    @Test
    void readersOfBothKinds_shareTheLock() throws Exception {
        String s = session(w, "app", 60_000);
        assertThat(join(w.acquire(shared(s, "shared/res", 0))).status()).isEqualTo(Status.GRANTED);
        assertThat(curatorLock.readLock().acquire(5, TimeUnit.SECONDS)).isTrue();
        assertThat(w.lock(LockName.parse("shared/res")).join().holders()).hasSize(2);
        curatorLock.readLock().release();
    }
}
