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
import io.warden.service.api.WardenException;
import io.warden.service.support.WardenFixture;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Semaphores (contract §2.12) on a real ZooKeeper: at most N holders, FIFO, a token per grant, one kind per name. */
class SemaphoreTest {
    private WardenFixture fx;
    private Gateway gw;
    private Warden w;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gw = fx.gateway();
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    static AcquireRequest semaphore(String session, String name, int permits, long waitMs) {
        return semaphore(session, name, permits, waitMs, OnTimeout.CANCEL);
    }

    static AcquireRequest semaphore(String session, String name, int permits, long waitMs, OnTimeout onTimeout) {
        return new AcquireRequest(session, LockName.parse(name), Mode.SEMAPHORE, waitMs, UUID.randomUUID().toString(),
                onTimeout, true, permits);
    }

    @Test
    void threePermits_grantThreeWithRisingTokens_andTheFourthWaits() throws Exception {
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            AcquireResult r = join(w.acquire(semaphore(session(w, "c" + i, 10_000), "pay/pool", 3, 0)));
            assertThat(r.status()).isEqualTo(Status.GRANTED);
            tokens.add(r.token());
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        AcquireResult fourth = join(w.acquire(semaphore(session(w, "c3", 10_000), "pay/pool", 3, 0)));
        assertThat(fourth.status()).isEqualTo(Status.TIMED_OUT);
        assertThat(fourth.holders()).hasSize(3);
        assertThat(fx.queue("pay/pool")).hasSize(3).allMatch(n -> n.matches("_c_[0-9a-f-]{36}-sem3-__WRIT__\\d{10}"));

        LockView view = join2(w.lock(LockName.parse("pay/pool")));
        assertThat(view.mode()).isEqualTo(LockView.LockMode.SEMAPHORE);
        assertThat(view.holders()).hasSize(3).allSatisfy(h -> assertThat(h.mode()).isEqualTo(Mode.SEMAPHORE));
    }

    /**
     * A waiter behind N holders is let in by whichever holder goes first, not only by the one N places ahead of it: a
     * waiter that watched one node would miss this release (the middle holder's).
     */
    @Test
    void aWaiter_isGrantedWhenAnyHolderAheadReleases_theMiddleOneToo() throws Exception {
        List<String> sessions = new ArrayList<>();
        List<AcquireResult> holds = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            sessions.add(session(w, "c" + i, 10_000));
            holds.add(join(w.acquire(semaphore(sessions.get(i), "pay/pool", 3, 0))));
        }
        String s4 = session(w, "c4", 10_000);
        String s5 = session(w, "c5", 10_000);
        CompletableFuture<AcquireResult> fourth = w.acquire(semaphore(s4, "pay/pool", 3, 20_000));
        await("the fourth queued", () -> fx.queueSize("pay/pool") == 4);
        CompletableFuture<AcquireResult> fifth = w.acquire(semaphore(s5, "pay/pool", 3, 20_000));
        await("the fifth queued", () -> fx.queueSize("pay/pool") == 5);

        assertThat(w.release(sessions.get(1), LockName.parse("pay/pool"), holds.get(1).token()).join()).isTrue();
        AcquireResult granted = join(fourth);
        assertThat(granted.status()).isEqualTo(Status.GRANTED);
        assertThat(granted.token()).isGreaterThan(holds.get(2).token());
        assertThat(fifth).isNotDone();

        assertThat(w.release(sessions.get(2), LockName.parse("pay/pool"), holds.get(2).token()).join()).isTrue();
        assertThat(join(fifth).status()).isEqualTo(Status.GRANTED);
        assertThat(fx.queue("pay/pool")).hasSize(3);
    }

    /**
     * Waiters on one gateway share one children watch, and a change to the queue is read once for all of them: five
     * handoffs among twenty waiters cost a few reads each, not one per waiter (19, 18, ... with a read per waiter).
     */
    @Test
    void twentyWaiters_shareOneWatch_andEachHandoffReadsTheQueueAFewTimes_notOncePerWaiter() throws Exception {
        java.util.ArrayDeque<String[]> holders = new java.util.ArrayDeque<>(); // session, token
        List<String> opened = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            String h = session(w, "h" + i, 10_000);
            opened.add(h);
            holders.add(new String[]{h, Long.toString(join(w.acquire(semaphore(h, "pay/pool", 2, 0))).token())});
        }
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            sessions.add(session(w, "w" + i, 10_000));
        }
        opened.addAll(sessions);
        fx.awaitSessionWatches(opened.toArray(String[]::new)); // else a record watch set late counts as a waiter's
        int watchesBefore = fx.allWatches();
        List<CompletableFuture<AcquireResult>> waiters = new ArrayList<>();
        for (String s : sessions) {
            waiters.add(w.acquire(semaphore(s, "pay/pool", 2, 30_000)));
        }
        await("20 waiters watching", () -> fx.queueSize("pay/pool") == 22 && gw.pendingAcquires() == 20
                && fx.allWatches() > watchesBefore);
        assertThat(fx.allWatches() - watchesBefore).as("watches for 20 waiters").isEqualTo(1);
        double reads = fx.childReads(gw);

        int handoffs = 5;
        for (int k = 1; k <= handoffs; k++) {
            String[] oldest = holders.poll();
            assertThat(w.release(oldest[0], LockName.parse("pay/pool"), Long.parseLong(oldest[1])).join()).isTrue();
            int done = k;
            await("handoff " + k, () -> waiters.stream().filter(CompletableFuture::isDone).count() == done);
            for (int i = 0; i < waiters.size(); i++) {
                if (waiters.get(i).isDone() && granted.add(i)) { // the waiter this handoff let in now holds
                    holders.add(new String[]{sessions.get(i), Long.toString(waiters.get(i).join().token())});
                }
            }
        }
        assertThat(waiters.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join))
                .hasSize(handoffs).allMatch(r -> r.status() == Status.GRANTED);
        // Each handoff: the watch's read and its setting again, and at most one more for waiters that read before the
        // watch was set; with a read per waiter it would be 19 + 18 + 17 + 16 + 15. The gateway's metric also counts
        // its own background listings (the watch mirror's), hence the slack.
        assertThat(fx.childReads(gw) - reads).as("getChildren for %d handoffs among 20 waiters", handoffs)
                .isLessThanOrEqualTo(6.0 * handoffs);
    }

    /** The waiters of the handoff test seen granted so far, by index. */
    private final java.util.Set<Integer> granted = new java.util.HashSet<>();

    @Test
    void aRequestOfAnotherKind_is409Conflict_andChangesNothing() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        join(w.acquire(semaphore(a, "pay/pool", 3, 0)));
        long zxid = fx.lastZxid();

        for (AcquireRequest other : List.of(exclusive(b, "pay/pool", 0), shared(b, "pay/pool", 0),
                semaphore(b, "pay/pool", 4, 0))) {
            assertThatThrownBy(() -> join(w.acquire(other))).satisfies(t -> {
                assertThat(code(t)).isEqualTo(WardenException.ErrorCode.CONFLICT);
                assertThat(t).hasMessageContaining("pay/pool is a SEMAPHORE of 3 permits");
            });
        }
        // Waiting requests of another kind are withdrawn too.
        assertThatThrownBy(() -> join(w.acquire(exclusive(b, "pay/pool", 5_000))))
                .satisfies(t -> assertThat(code(t)).isEqualTo(WardenException.ErrorCode.CONFLICT));
        assertThat(fx.queue("pay/pool")).hasSize(1);

        String c = session(w, "c", 10_000);
        join(w.acquire(exclusive(c, "pay/lock", 0)));
        assertThatThrownBy(() -> join(w.acquire(semaphore(b, "pay/lock", 2, 5_000)))).satisfies(t -> {
            assertThat(code(t)).isEqualTo(WardenException.ErrorCode.CONFLICT);
            assertThat(t).hasMessageContaining("pay/lock is a lock (EXCLUSIVE and SHARED requests)");
        });
        assertThat(fx.queue("pay/lock")).hasSize(1);
        assertThat(zxid).isPositive();
    }

    /** Requests of two kinds made at once on a free name: the first in the queue stays, the others are withdrawn. */
    @Test
    void racingKinds_leaveOneKind_neverHoldersOfTwo() throws Exception {
        for (int round = 0; round < 10; round++) {
            String name = "pay/race-" + round;
            List<CompletableFuture<AcquireResult>> calls = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String s = session(w, "r" + round + "-" + i, 10_000);
                calls.add(w.acquire(i % 2 == 0 ? semaphore(s, name, 3, 0) : exclusive(s, name, 0)));
            }
            int granted = 0;
            int conflicts = 0;
            List<Mode> grantedModes = new ArrayList<>();
            for (int i = 0; i < calls.size(); i++) {
                try {
                    AcquireResult r = calls.get(i).get(20, TimeUnit.SECONDS);
                    if (r.status() == Status.GRANTED) {
                        granted++;
                        grantedModes.add(i % 2 == 0 ? Mode.SEMAPHORE : Mode.EXCLUSIVE);
                    }
                } catch (java.util.concurrent.ExecutionException e) {
                    assertThat(code(e.getCause())).isEqualTo(WardenException.ErrorCode.CONFLICT);
                    conflicts++;
                }
            }
            assertThat(grantedModes).as("round %d", round).hasSizeGreaterThan(0).allMatch(m -> m == grantedModes.get(0));
            assertThat(granted + conflicts).isLessThanOrEqualTo(6);
            LockView view = join2(w.lock(LockName.parse(name)));
            assertThat(view.holders().size()).isLessThanOrEqualTo(grantedModes.get(0) == Mode.SEMAPHORE ? 3 : 1);
        }
    }

    @Test
    void aWaitThatRunsOut_cancelRemovesIt_keepLeavesItQueued() throws Exception {
        for (int i = 0; i < 2; i++) {
            join(w.acquire(semaphore(session(w, "h" + i, 10_000), "pay/pool", 2, 0)));
        }
        String s = session(w, "s", 10_000);
        CompletableFuture<AcquireResult> cancel = w.acquire(semaphore(s, "pay/pool", 2, 300));
        await("queued and watching", () -> gw.pendingAcquires() == 1 && fx.queueSize("pay/pool") == 3);
        assertThat(cancel).isNotDone();
        fx.clock.advance(java.time.Duration.ofMillis(300));
        assertThat(join(cancel).status()).isEqualTo(Status.TIMED_OUT);
        assertThat(fx.queue("pay/pool")).hasSize(2);

        CompletableFuture<AcquireResult> keep = w.acquire(semaphore(s, "pay/pool", 2, 300, OnTimeout.KEEP));
        await("queued and watching", () -> gw.pendingAcquires() == 1 && fx.queueSize("pay/pool") == 3);
        fx.clock.advance(java.time.Duration.ofMillis(300));
        AcquireResult kept = join(keep);
        assertThat(kept.status()).isEqualTo(Status.QUEUED);
        assertThat(kept.position()).isEqualTo(2);
        assertThat(fx.queue("pay/pool")).hasSize(3);
    }

    /** A plain Curator read-write lock on the same path sees a semaphore entry as a writer, and excludes it likewise. */
    @Test
    void curatorReadersAndWriters_andSemaphoreHolders_excludeEachOther() throws Exception {
        String a = session(w, "a", 10_000);
        AcquireResult held = join(w.acquire(semaphore(a, "pay/pool", 2, 0)));
        InterProcessReadWriteLock curator = new InterProcessReadWriteLock(fx.curator, WardenFixture.lockPath("pay/pool"));
        assertThat(curator.writeLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(curator.readLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(w.release(a, LockName.parse("pay/pool"), held.token()).join()).isTrue();
        assertThat(curator.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
        try {
            assertThatThrownBy(() -> join(w.acquire(semaphore(a, "pay/pool", 2, 0))))
                    .satisfies(t -> assertThat(code(t)).isEqualTo(WardenException.ErrorCode.CONFLICT));
        } finally {
            curator.writeLock().release();
        }
        await("curator's node gone", () -> fx.queueSize("pay/pool") == 0);
    }

    /**
     * What docs/api.md says of Curator's own semaphore: it keeps its leases in nodes of its own under the path, so it
     * and a Warden semaphore on the same name do not see each other (here 1 + 2 holders of "2 permits"), and Warden
     * ignores its nodes.
     */
    @Test
    void curatorsSemaphoreV2_onTheSamePath_doesNotSeeWardensHolders() throws Exception {
        var curator = new org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2(fx.curator,
                WardenFixture.lockPath("pay/pool"), 2);
        var lease = curator.acquire(5, TimeUnit.SECONDS);
        assertThat(lease).isNotNull();
        try {
            for (int i = 0; i < 2; i++) {
                assertThat(join(w.acquire(semaphore(session(w, "c" + i, 10_000), "pay/pool", 2, 0))).status())
                        .isEqualTo(Status.GRANTED);
            }
            assertThat(curator.getParticipantNodes()).hasSize(1);
            LockView view = join2(w.lock(LockName.parse("pay/pool")));
            assertThat(view.holders()).hasSize(2);
        } finally {
            curator.returnLease(lease);
        }
    }

    @Test
    void aFullSemaphore_refusesTriesFromARead_withoutWriting() throws Exception {
        for (int i = 0; i < 2; i++) {
            join(w.acquire(semaphore(session(w, "h" + i, 10_000), "pay/pool", 2, 0)));
        }
        String s = session(w, "s", 10_000);
        assertThat(join(w.acquire(semaphore(s, "pay/pool", 2, 0))).status()).isEqualTo(Status.TIMED_OUT); // marks it busy
        long zxid = fx.lastZxid();
        for (int i = 0; i < 5; i++) {
            AcquireRequest tryNoId = new AcquireRequest(s, LockName.parse("pay/pool"), Mode.SEMAPHORE, 0,
                    UUID.randomUUID().toString(), OnTimeout.CANCEL, false, 2);
            assertThat(join(w.acquire(tryNoId)).status()).isEqualTo(Status.TIMED_OUT);
        }
        assertThat(fx.lastZxid()).as("no write for refused tries").isEqualTo(zxid);
    }

    /** On a lock seen busy a try is decided from a read: one of another kind is a 409 there too, and writes nothing. */
    @Test
    void aTryOfAnotherKind_onASemaphoreSeenBusy_is409FromTheRead_withoutWriting() throws Exception {
        for (int i = 0; i < 2; i++) {
            join(w.acquire(semaphore(session(w, "h" + i, 10_000), "pay/pool", 2, 0)));
        }
        String s = session(w, "s", 10_000);
        assertThat(join(w.acquire(semaphore(s, "pay/pool", 2, 0))).status()).isEqualTo(Status.TIMED_OUT); // marks it busy
        long zxid = fx.lastZxid();
        assertThatThrownBy(() -> join(w.acquire(exclusive(s, "pay/pool", 0)))).satisfies(t -> {
            assertThat(code(t)).isEqualTo(WardenException.ErrorCode.CONFLICT);
            assertThat(t).hasMessageContaining("SEMAPHORE of 2 permits");
        });
        assertThatThrownBy(() -> join(w.acquire(semaphore(s, "pay/pool", 3, 0))))
                .satisfies(t -> assertThat(code(t)).isEqualTo(WardenException.ErrorCode.CONFLICT));
        assertThat(fx.lastZxid()).as("nothing written").isEqualTo(zxid);
    }

    @Test
    void aRetry_withOtherPermits_is400() throws Exception {
        String s = session(w, "s", 10_000);
        AcquireRequest first = semaphore(s, "pay/pool", 3, 0);
        assertThat(join(w.acquire(first)).status()).isEqualTo(Status.GRANTED);
        AcquireRequest retry = new AcquireRequest(s, first.name(), Mode.SEMAPHORE, 0, first.requestId(), OnTimeout.CANCEL,
                true, 3);
        assertThat(join(w.acquire(retry)).status()).isEqualTo(Status.GRANTED);
        AcquireRequest other = new AcquireRequest(s, first.name(), Mode.SEMAPHORE, 0, first.requestId(), OnTimeout.CANCEL,
                true, 4);
        assertThatThrownBy(() -> join(w.acquire(other))).satisfies(t -> {
            assertThat(code(t)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT);
            assertThat(t).hasMessageContaining("3 permits");
        });
    }

    @Test
    void permits_areChecked() {
        assertThatThrownBy(() -> semaphore("s", "pay/pool", 1, 0)).hasMessageContaining("permits");
        assertThatThrownBy(() -> semaphore("s", "pay/pool", 1025, 0)).hasMessageContaining("permits");
        assertThatThrownBy(() -> new AcquireRequest("s", LockName.parse("pay/x"), Mode.EXCLUSIVE, 0, "r", OnTimeout.CANCEL,
                true, 3)).hasMessageContaining("permits");
    }

    @Test
    void expiry_releasesSemaphoreHolds_andLetsWaitersIn() throws Exception {
        String a = session(w, "a", 10_000);
        String b = session(w, "b", 10_000);
        join(w.acquire(semaphore(a, "pay/pool", 2, 0)));
        join(w.acquire(semaphore(b, "pay/pool", 2, 0)));
        String c = session(w, "c", 10_000);
        CompletableFuture<AcquireResult> waiting = w.acquire(semaphore(c, "pay/pool", 2, 20_000));
        await("queued", () -> fx.queueSize("pay/pool") == 3);
        w.closeSession(a).join();
        assertThat(join(waiting).status()).isEqualTo(Status.GRANTED);
    }

    private static LockView join2(CompletableFuture<LockView> f) {
        return f.orTimeout(20, TimeUnit.SECONDS).join();
    }
}
