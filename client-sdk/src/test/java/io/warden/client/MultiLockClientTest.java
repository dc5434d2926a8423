package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import io.warden.service.api.LockName;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link WardenClient#multiLock} against a real gateway on a real ZooKeeper. */
class MultiLockClientTest {
    private Cell cell;
    private Gateway gw;
    private WardenClient a;
    private WardenClient b;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
        gw = cell.gateway();
        a = cell.client("a", Cell.url(gw));
        b = cell.client("b", Cell.url(gw));
    }

    @AfterEach
    void tearDown() throws Exception {
        cell.close();
    }

    @Test
    void holdsEveryName_withATokenEach_andReleasesThemAll() {
        try (MultiHold hold = a.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ofSeconds(5))) {
            assertThat(hold.names()).containsExactly("bank/acct-1", "bank/acct-2");
            assertThat(hold.token("bank/acct-1")).isPositive();
            assertThat(hold.token("bank/acct-2")).isPositive();
            assertThat(hold.isValid()).isTrue();
            assertThat(b.lock("bank/acct-2").tryAcquire()).isEmpty();
        }
        assertThat(cell.holders(gw, "bank/acct-1")).isZero();
        assertThat(cell.holders(gw, "bank/acct-2")).isZero();
    }

    @Test
    void crossedOrders_bothComplete_andTokensGrowPerName() throws Exception {
        Hold blocker = a.lock("bank/acct-1").acquire(Duration.ofSeconds(5));
        long blockerToken = blocker.token();
        CompletableFuture<MultiHold> first = CompletableFuture.supplyAsync(() ->
                a.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ofSeconds(30)));
        CompletableFuture<MultiHold> second = CompletableFuture.supplyAsync(() ->
                b.multiLock("bank/acct-2", "bank/acct-1").acquire(Duration.ofSeconds(30)));
        Cell.await("both queued", () -> cell.lock(gw, "bank/acct-1").path("waiters").size() == 2);
        blocker.close();

        // One of them is granted (the one ahead on both names); the other waits for it, then is granted too.
        CompletableFuture.anyOf(first, second).get(30, TimeUnit.SECONDS);
        MultiHold one = first.isDone() ? first.join() : second.join();
        CompletableFuture<MultiHold> rest = first.isDone() ? second : first;
        assertThat(rest).isNotDone();
        long oneToken = one.token("bank/acct-1");
        assertThat(oneToken).isGreaterThan(blockerToken);
        one.close();
        MultiHold other = rest.get(30, TimeUnit.SECONDS);
        assertThat(other.token("bank/acct-1")).isGreaterThan(oneToken);
        other.close();
    }

    @Test
    void notGrantedInTime_timesOut_andLeavesNoEntry() {
        try (Hold held = b.lock("bank/acct-2").acquire(Duration.ofSeconds(5))) {
            assertThat(a.multiLock("bank/acct-1", "bank/acct-2").tryAcquire(Duration.ofMillis(300))).isEmpty();
            assertThat(cell.lock(gw, "bank/acct-1").path("holders")).isEmpty();
            assertThatThrownBy(() -> a.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ZERO))
                    .isInstanceOf(AcquireTimeoutException.class);
        }
    }

    @Test
    void badNames_areRefusedInTheClient() {
        assertThatThrownBy(() -> a.multiLock("bank/acct-1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.multiLock("bank/acct-1", "bank/acct-1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.multiLock(List.of("bank/a", "bank/b"), LockMode.SEMAPHORE))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void oneNameReleasedElsewhere_theMultiHoldIsLost_andItsReleaseStillFreesTheOthers() throws Exception {
        MultiHold hold = a.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ofSeconds(5));
        CompletableFuture<Void> lost = hold.lost().toCompletableFuture();
        Cell.holdsFor("nothing lost while every name is held", Duration.ofMillis(300), () -> !lost.isDone());

        // another process, with a's session id and the token, releases one name of the request (as a force-release does)
        assertThat(cell.release(gw, a.sessionId(), "bank/acct-2", hold.token("bank/acct-2")).path("released").asBoolean())
                .isTrue();

        lost.get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class)
                .hasMessageContaining("bank/acct-2").hasMessageContaining("RELEASED");
        assertThat(a.state()).as("the session lives on").isEqualTo(SessionState.CONNECTED);
        assertThat(b.lock("bank/acct-1").tryAcquire()).as("the other name is still held").isEmpty();

        assertThatThrownBy(hold::release).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining("bank/acct-2");
        assertThat(cell.holders(gw, "bank/acct-1")).as("the release freed the name still held").isZero();
        hold.release(); // once reported, later releases do nothing
    }

    @Test
    void ownRelease_isNotALoss() {
        MultiHold hold = a.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ofSeconds(5));
        // a name the session holds alone, so its watch runs on after the multi hold's release
        Hold other = a.lock("bank/other").acquire(Duration.ofSeconds(5));
        hold.release();
        Cell.holdsFor("the release's own RELEASED events are not taken for a loss", Duration.ofMillis(1000),
                () -> !hold.lost().toCompletableFuture().isDone());
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::checkValid).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> hold.token("bank/acct-1")).isInstanceOf(IllegalStateException.class);
        assertThat(other.isValid()).isTrue();
        other.close();
    }

    @Test
    void sessionGone_theMultiHoldIsLost() throws Exception {
        MultiHold hold = a.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ofSeconds(5));
        cell.deleteSession(gw, a.sessionId()); // closed by someone else: the next heartbeat learns it

        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::release).isInstanceOf(LockOwnershipLostException.class);
    }

    @Test
    void pastTheSessionsLocalDeadline_notValid_andValidAgainAfterAHeartbeat() {
        AtomicLong skew = new AtomicLong();
        WardenClient c = cell.track(WardenClient.builder().endpoints(Cell.url(gw)).clientId("c")
                .sessionTtl(Duration.ofSeconds(3)).ticker(() -> System.nanoTime() + skew.get()).build());
        MultiHold hold = c.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ofSeconds(5));
        assertThat(hold.isValid()).isTrue();

        skew.addAndGet(Duration.ofSeconds(3).toNanos()); // a 3 s pause, as the client's clock sees it

        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining("SUSPENDED");
        Cell.await("valid again after an acknowledged heartbeat", hold::isValid);
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
        hold.close();
    }

    @Test
    void revokeOfOneName_callsTheListenerOnce() throws Exception {
        MultiHold hold = a.multiLock("bank/acct-1", "bank/acct-2").acquire(Duration.ofSeconds(5));
        CompletableFuture<MultiHold> asked = new CompletableFuture<>();
        assertThat(hold.onRevokeRequested(asked::complete)).isSameAs(hold);

        gw.warden().revoke(LockName.parse("bank/acct-2"), hold.token("bank/acct-2"), 600_000, "test", "admin")
                .get(10, TimeUnit.SECONDS);

        assertThat(asked.get(10, TimeUnit.SECONDS)).isSameAs(hold);
        assertThat(hold.isValid()).as("asked, not yet released").isTrue();
        hold.release();
        assertThat(cell.holders(gw, "bank/acct-1")).isZero();
        assertThat(cell.holders(gw, "bank/acct-2")).isZero();
    }

    @Test
    void acquireAsync_completesWhenEveryNameIsFree() throws Exception {
        Hold blocker = b.lock("bank/acct-2").acquire(Duration.ofSeconds(5));
        CompletableFuture<MultiHold> waiting = a.multiLock("bank/acct-1", "bank/acct-2").acquireAsync(Duration.ofSeconds(30));
        Cell.await("queued on acct-2", () -> cell.waiters(gw, "bank/acct-2") == 1);
        assertThat(waiting).isNotDone();
        blocker.close();
        try (MultiHold hold = waiting.get(30, TimeUnit.SECONDS)) {
            assertThat(hold.tokens()).containsOnlyKeys("bank/acct-1", "bank/acct-2");
            assertThat(hold.isValid()).isTrue();
        }
    }

    @Test
    void acquireAsync_cancelled_endsTheRequestOnEveryName() throws Exception {
        try (Hold blocker = b.lock("bank/acct-2").acquire(Duration.ofSeconds(5))) {
            CompletableFuture<MultiHold> waiting = a.multiLock("bank/acct-1", "bank/acct-2").acquireAsync(Duration.ofSeconds(30));
            Cell.await("queued on acct-2", () -> cell.waiters(gw, "bank/acct-2") == 1);
            assertThat(cell.holders(gw, "bank/acct-1")).as("the free name is held while it waits").isEqualTo(1);

            assertThat(waiting.cancel(true)).isTrue();

            Cell.await("no entry left on acct-1", () -> cell.holders(gw, "bank/acct-1") == 0);
            Cell.await("no entry left on acct-2", () -> cell.waiters(gw, "bank/acct-2") == 0);
            assertThatThrownBy(waiting::join).isInstanceOf(CancellationException.class);
        }
    }

    @Test
    void acquireAsync_timesOut_withNothingLeft() {
        try (Hold blocker = b.lock("bank/acct-2").acquire(Duration.ofSeconds(5))) {
            CompletableFuture<MultiHold> waiting = a.multiLock("bank/acct-1", "bank/acct-2").acquireAsync(Duration.ofMillis(300));
            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(AcquireTimeoutException.class);
            assertThat(cell.holders(gw, "bank/acct-1")).isZero();
            assertThat(cell.waiters(gw, "bank/acct-2")).isZero();
        }
    }
}
