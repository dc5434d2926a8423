package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The local deadline on an injected ticker: the test moves the client's clock past the deadline instead of waiting,
 * while the gateway stays up (so the session is fine; only the client can no longer be sure of it).
 */
class SessionStateTest {
    private Cell cell;
    private Gateway gw;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
        gw = cell.gateway();
    }

    @AfterEach
    void tearDown() throws Exception {
        cell.close();
    }

    @Test
    void tickerPastTheDeadline_suspendsAtOnce_andTheNextAcknowledgedHeartbeatReconnects() {
        AtomicLong skew = new AtomicLong();
        WardenClient c = cell.track(WardenClient.builder().endpoints(Cell.url(gw)).clientId("alice")
                .sessionTtl(Duration.ofSeconds(3)).ticker(() -> System.nanoTime() + skew.get()).build());
        List<SessionState> events = new CopyOnWriteArrayList<>();
        c.addListener(events::add);
        Hold hold = c.lock("ns/a").acquire(Duration.ofSeconds(5));
        assertThat(c.state()).isEqualTo(SessionState.CONNECTED);

        skew.addAndGet(Duration.ofSeconds(3).toNanos()); // a 3 s pause, as the client's clock sees it

        assertThat(c.state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining("SUSPENDED");
        // the heartbeat is now overdue on the client's clock; its acknowledgement moves the deadline on
        Cell.await("CONNECTED again after a heartbeat", () -> c.state() == SessionState.CONNECTED);
        assertThat(hold.isValid()).isTrue();
        hold.close();
        assertThat(c.state()).isEqualTo(SessionState.CONNECTED);
    }

    @Test
    void builder_saysWhatIsWrong() {
        WardenClient.Builder b = WardenClient.builder().sessionTtl(Duration.ofSeconds(3));
        assertThatThrownBy(() -> b.sessionTtl(Duration.ofSeconds(4))).isInstanceOf(IllegalStateException.class)
                .hasMessage("sessionTtl was already set to PT3S");
        assertThatThrownBy(b::build).isInstanceOf(IllegalStateException.class).hasMessage("endpoints were not set");
        assertThatThrownBy(() -> WardenClient.builder().endpoints("gw1:7070")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("gw1:7070");
        assertThatThrownBy(() -> WardenClient.builder().requestTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("requestTimeout");
        assertThatThrownBy(() -> WardenClient.builder().endpoints(Cell.url(gw)).clientId("x").sessionTtl(Duration.ofMillis(150))
                .build()).isInstanceOf(IllegalStateException.class).hasMessageContaining("safetyMargin");
    }
}
