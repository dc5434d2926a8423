package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Contract §3, {@code wait_ms} 0: a try-lock that cannot be granted (a conflicting holder, or a request queued ahead, in
 * a linearizable read) is refused without writing to ZooKeeper; with a request id its caller gave, a repeat still
 * finds it refused. Whether anything was written is read from the server's last zxid, which every write advances.
 */
class TryRefusalTest {
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

    /** A try whose request id the gateway picked (as for a call without {@code request_id}). */
    private static AcquireRequest tryLock(String session, String name, Mode mode) {
        return new AcquireRequest(session, LockName.parse(name), mode, 0, "auto-" + UUID.randomUUID(), OnTimeout.CANCEL,
                false);
    }

    @Test
    void triesOnAHeldLock_areRefusedWithTheHolder_andWriteNothing() throws Exception {
        String a = session(w, "holder", 60_000);
        String b = session(w, "trier", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "try/held", 0)));
        assertThat(held.status()).isEqualTo(Status.GRANTED);
        // The first refused try of a lock may take the usual path (made, then taken back): the gateway has not seen
        // the lock busy yet. Every try after it reads first.
        assertThat(join(w.acquire(tryLock(b, "try/held", Mode.EXCLUSIVE))).status()).isEqualTo(Status.TIMED_OUT);

        long zxid = fx.lastZxid();
        for (int i = 0; i < 50; i++) {
            AcquireResult r = join(w.acquire(tryLock(b, "try/held", i % 2 == 0 ? Mode.EXCLUSIVE : Mode.SHARED)));
            assertThat(r.status()).isEqualTo(Status.TIMED_OUT);
            assertThat(r.holders()).singleElement().satisfies(h -> {
                assertThat(h.token()).isEqualTo(held.token());
                assertThat(h.sessionId()).isEqualTo(a);
            });
            assertThat(r.revision()).isPositive();
        }
        assertThat(fx.lastZxid()).as("the cell's last zxid after 50 refused tries").isEqualTo(zxid);
        assertThat(fx.queue("try/held")).hasSize(1);
        assertThat(w.session(b).join().waiting()).isEmpty();
    }

    @Test
    void aTryBehindAQueuedRequest_isRefused_thoughNobodyConflictsWithItsMode() throws Exception {
        String a = session(w, "reader", 60_000);
        String c = session(w, "writer", 60_000);
        String b = session(w, "late-reader", 60_000);
        assertThat(join(w.acquire(shared(a, "try/queue", 0))).status()).isEqualTo(Status.GRANTED);
        CompletableFuture<AcquireResult> writer = w.acquire(exclusive(c, "try/queue", 60_000)); // queued behind the reader
        WardenFixture.await("the writer queued", () -> fx.queueSize("try/queue") == 2);
        assertThat(join(w.acquire(tryLock(b, "try/queue", Mode.SHARED))).status()).isEqualTo(Status.TIMED_OUT);

        long zxid = fx.lastZxid();
        AcquireResult r = join(w.acquire(tryLock(b, "try/queue", Mode.SHARED)));
        assertThat(r.status()).as("a SHARED try never overtakes a queued EXCLUSIVE request").isEqualTo(Status.TIMED_OUT);
        assertThat(fx.lastZxid()).isEqualTo(zxid);
        assertThat(writer).isNotDone();
    }

    @Test
    void aTryOnALockThatWasBusy_isGrantedOnceItIsFree_andSharedTriesJoinSharedHolders() throws Exception {
        String a = session(w, "holder", 60_000);
        String b = session(w, "trier", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "try/freed", 0)));
        assertThat(join(w.acquire(tryLock(b, "try/freed", Mode.EXCLUSIVE))).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(join(w.acquire(tryLock(b, "try/freed", Mode.EXCLUSIVE))).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(w.release(a, LockName.parse("try/freed"), held.token()).join()).isTrue();

        // The release was acknowledged before the try began: the try's read comes after it, and it is granted.
        AcquireResult shared = join(w.acquire(tryLock(b, "try/freed", Mode.SHARED)));
        assertThat(shared.status()).isEqualTo(Status.GRANTED);
        AcquireResult second = join(w.acquire(tryLock(a, "try/freed", Mode.SHARED)));
        assertThat(second.status()).as("a SHARED try joins SHARED holders").isEqualTo(Status.GRANTED);
        assertThat(join(w.acquire(tryLock(a, "try/freed", Mode.EXCLUSIVE))).status()).isEqualTo(Status.TIMED_OUT);
    }

    @Test
    void aRefusedTry_withTheCallersRequestId_leavesOnlyATombstone_soItsRepeatIsNeverGranted() throws Exception {
        String a = session(w, "holder", 60_000);
        String b = session(w, "trier", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "try/named", 0)));
        assertThat(join(w.acquire(tryLock(b, "try/named", Mode.EXCLUSIVE))).status()).isEqualTo(Status.TIMED_OUT);

        AcquireRequest named = new AcquireRequest(b, LockName.parse("try/named"), Mode.EXCLUSIVE, 0, "job-7",
                OnTimeout.CANCEL);
        long zxid = fx.lastZxid();
        assertThat(join(w.acquire(named)).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(fx.lastZxid()).as("one write: the tombstone's multi").isEqualTo(zxid + 1);
        assertThat(fx.queue("try/named")).hasSize(1);
        String record = CellPaths.sessionRequest(b, CellPaths.requestUuid(b, "job-7"));
        assertThat(fx.curator.checkExists().forPath(record)).as("the request's tombstone").isNotNull();

        // The lock is free now, and the repeat (a lost reply resent) still does not take it.
        assertThat(w.release(a, LockName.parse("try/named"), held.token()).join()).isTrue();
        assertThatThrownBy(() -> join(w.acquire(named)))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("already ended");
        assertThat(fx.queue("try/named")).isEmpty();
    }

    @Test
    void aRepeatedTry_ofARequestThatHolds_isAnsweredGranted_notRefused() throws Exception {
        String a = session(w, "holder", 60_000);
        String b = session(w, "other", 60_000);
        AcquireRequest first = new AcquireRequest(a, LockName.parse("try/mine"), Mode.EXCLUSIVE, 0, "mine-1",
                OnTimeout.CANCEL);
        AcquireResult granted = join(w.acquire(first));
        assertThat(granted.status()).isEqualTo(Status.GRANTED);
        assertThat(join(w.acquire(tryLock(b, "try/mine", Mode.EXCLUSIVE))).status()).isEqualTo(Status.TIMED_OUT);

        // The lock reads busy (its own hold), yet the repeat of the granted request learns its grant.
        AcquireResult repeat = join(w.acquire(first));
        assertThat(repeat.status()).isEqualTo(Status.GRANTED);
        assertThat(repeat.token()).isEqualTo(granted.token());
    }

    @Test
    void aRefusedTry_ofASessionThatIsGone_isNotFound() throws Exception {
        String a = session(w, "holder", 60_000);
        join(w.acquire(exclusive(a, "try/gone", 0)));
        assertThatThrownBy(() -> join(w.acquire(tryLock("0".repeat(32), "try/gone", Mode.EXCLUSIVE))))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
    }

    @Test
    void tryRefusal_readsWithoutWriting_forTheLeaseApi() throws Exception {
        String a = session(w, "holder", 60_000);
        assertThat(w.tryRefusal(LockName.parse("try/lease"), Mode.EXCLUSIVE).get(10, TimeUnit.SECONDS)).isEmpty();
        AcquireResult held = join(w.acquire(exclusive(a, "try/lease", 0)));
        long zxid = fx.lastZxid();
        var refusal = w.tryRefusal(LockName.parse("try/lease"), Mode.EXCLUSIVE).get(10, TimeUnit.SECONDS);
        assertThat(refusal).hasValueSatisfying(r -> {
            assertThat(r.status()).isEqualTo(Status.TIMED_OUT);
            assertThat(r.holders()).singleElement().satisfies(h -> assertThat(h.token()).isEqualTo(held.token()));
        });
        assertThat(fx.lastZxid()).isEqualTo(zxid);
    }
}
