package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link FencedLock#failingOnDeadlock} against a real gateway: the victim's acquire throws the cycle; WAIT waits on. */
class DeadlockClientTest {
    private Cell cell;
    private Gateway gw;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
        gw = cell.gateway();
    }

    @AfterEach
    void tearDown() {
        cell.close();
    }

    @Test
    void twoClientsInOppositeOrder_theFailAcquireThrowsTheCycle_andTheOtherIsGrantedOnceItsHolderLetsGo() throws Exception {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Hold aliceX = alice.lock("dl/x").acquire(Duration.ofSeconds(5));
        Hold bobY = bob.lock("dl/y").acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> aliceWaits = alice.lock("dl/y").acquireAsync(Duration.ofSeconds(30)); // WAIT
        Cell.await("alice queued on dl/y", () -> cell.waiters(gw, "dl/y") == 1);

        FencedLock x = bob.lock("dl/x").failingOnDeadlock();
        assertThat(x.toString()).contains("on_deadlock FAIL");
        assertThatThrownBy(() -> x.acquire(Duration.ofSeconds(30))).isInstanceOfSatisfying(DeadlockException.class, e -> {
            assertThat(e.code()).contains("DEADLOCK");
            assertThat(e.status()).isEqualTo(409);
            assertThat(e.cycle()).extracting(DeadlockException.Member::clientId, DeadlockException.Member::name,
                            DeadlockException.Member::fail)
                    .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("alice", "dl/y", false),
                            org.assertj.core.groups.Tuple.tuple("bob", "dl/x", true));
        });
        assertThat(cell.waiters(gw, "dl/x")).as("bob's request went").isZero();
        assertThat(bobY.isValid()).as("bob keeps his hold").isTrue();
        assertThat(aliceWaits).isNotDone();

        bobY.close();
        Hold aliceY = aliceWaits.get(20, TimeUnit.SECONDS);
        aliceY.close();
        aliceX.close();
    }

    @Test
    void aMultiLockThatSaysFail_isTheVictim_throwsTheCycle_andLetsGoOfTheNameItHadAlready() throws Exception {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Hold aliceX = alice.lock("dl/x").acquire(Duration.ofSeconds(5));
        Hold bobY = bob.lock("dl/y").acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> aliceWaits = alice.lock("dl/y").acquireAsync(Duration.ofSeconds(30)); // WAIT
        Cell.await("alice queued on dl/y", () -> cell.waiters(gw, "dl/y") == 1);

        MultiLock xz = bob.multiLock("dl/z", "dl/x").failingOnDeadlock();
        assertThat(xz.toString()).contains("on_deadlock FAIL");
        assertThatThrownBy(() -> xz.acquire(Duration.ofSeconds(30))).isInstanceOfSatisfying(DeadlockException.class,
                e -> assertThat(e.cycle()).extracting(DeadlockException.Member::clientId, DeadlockException.Member::name,
                                DeadlockException.Member::fail)
                        .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("alice", "dl/y", false),
                                org.assertj.core.groups.Tuple.tuple("bob", "dl/x", true)));
        assertThat(cell.waiters(gw, "dl/x")).as("bob's entry on dl/x went").isZero();
        try (Hold z = alice.lock("dl/z").acquire(Duration.ZERO)) {
            assertThat(z.isValid()).as("dl/z, which bob's request held while it waited, is free").isTrue();
        }
        assertThat(bobY.isValid()).as("bob keeps his hold").isTrue();
        assertThat(aliceWaits).isNotDone();

        bobY.close();
        aliceWaits.get(20, TimeUnit.SECONDS).close();
        aliceX.close();
    }

    @Test
    void aDirectLock_cannotFailOnDeadlock() {
        FencedLock direct = new FencedLock() {
            @Override
            public String name() {
                return "dl/direct";
            }

            @Override
            public LockMode mode() {
                return LockMode.EXCLUSIVE;
            }

            @Override
            public Hold acquire(Duration wait) {
                throw new AssertionError();
            }

            @Override
            public CompletableFuture<Hold> acquireAsync(Duration wait) {
                throw new AssertionError();
            }
        };
        assertThatThrownBy(direct::failingOnDeadlock).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("dl/direct");
    }
}
