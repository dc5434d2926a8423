package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
}
