package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link WardenClient#semaphore} against a real gateway on a real ZooKeeper. */
class SemaphoreClientTest {
    private static final String NAME = "reports/exporters";

    private Cell cell;
    private Gateway gw;
    private final List<WardenClient> clients = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
        gw = cell.gateway();
        for (int i = 0; i < 4; i++) {
            clients.add(cell.client("c" + i, Cell.url(gw)));
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        cell.close();
    }

    @Test
    void twoPermits_twoHoldersWithTheirOwnTokens_theThirdWaitsForEither() throws Exception {
        Hold first = clients.get(0).semaphore(NAME, 2).acquire(Duration.ofSeconds(5));
        Hold second = clients.get(1).semaphore(NAME, 2).acquire(Duration.ofSeconds(5));
        assertThat(first.mode()).isEqualTo(LockMode.SEMAPHORE);
        assertThat(second.token()).isGreaterThan(first.token());
        assertThat(clients.get(2).semaphore(NAME, 2).tryAcquire()).isEmpty();

        CompletableFuture<Hold> third = clients.get(2).semaphore(NAME, 2).acquireAsync(Duration.ofSeconds(20));
        var view = cell.lock(gw, NAME);
        assertThat(view.path("mode").asText()).isEqualTo("SEMAPHORE");
        assertThat(view.path("holders")).hasSize(2);
        first.close();
        Hold got = third.get(20, TimeUnit.SECONDS);
        assertThat(got.token()).isGreaterThan(second.token());
        assertThat(got.isValid()).isTrue();
        got.close();
        second.close();
        assertThat(cell.holders(gw, NAME)).isZero();
    }

    @Test
    void aLockOnASemaphoresName_failsNamingItsKind() throws Exception {
        try (Hold held = clients.get(0).semaphore(NAME, 3).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> clients.get(1).lock(NAME).acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(WardenClientException.class).hasMessageContaining("SEMAPHORE of 3 permits");
            assertThatThrownBy(() -> clients.get(1).semaphore(NAME, 2).tryAcquire())
                    .isInstanceOf(WardenClientException.class).hasMessageContaining("SEMAPHORE of 3 permits");
            assertThat(held.isValid()).isTrue();
        }
        assertThat(cell.holders(gw, NAME)).isZero();
    }

    @Test
    void permits_outOfRange_areRefusedBeforeAnyCall() {
        assertThatThrownBy(() -> clients.get(0).semaphore(NAME, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits");
        assertThatThrownBy(() -> clients.get(0).semaphore(NAME, 1025)).isInstanceOf(IllegalArgumentException.class);
        assertThat(clients.get(0).semaphore(NAME, 2).toString()).contains("SEMAPHORE of 2 permits");
        Optional<Hold> none = Optional.empty();
        assertThat(none).isEmpty();
    }
}
