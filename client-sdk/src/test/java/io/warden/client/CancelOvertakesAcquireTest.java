package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A cancel that overtook a delayed create was lost, and the late request was granted for good.
 * With a relay holding {@code POST /v1/acquire} for 3 s and a 1 s request timeout, the client gave up, its cancel
 * found nothing, then the delayed create arrived and alice held the lock until her client closed. The gateway now
 * remembers a cancel of an unknown request id (a tombstone), so the late create fails; the client cancels until a
 * gateway answers.
 */
class CancelOvertakesAcquireTest {
    private static final String NAME = "jobs/late-create";

    private Cell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
    }

    @AfterEach
    void tearDown() {
        cell.close();
    }

    @Test
    void anAcquireHeldUpPastTheRequestTimeout_isCancelled_andItsLateArrivalTakesNothing() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient bob = cell.client("bob", Cell.url(gw));
        try (FaultRelay slow = new FaultRelay(gw.httpPort())) {
            slow.always("POST /v1/acquire", new FaultRelay.Delay(3000));
            WardenClient alice = cell.track(WardenClient.builder().endpoints(slow.url()).clientId("alice")
                    .sessionTtl(Duration.ofSeconds(10)).requestTimeout(Duration.ofSeconds(1)).build());

            assertThatThrownBy(() -> alice.lock(NAME).tryAcquire()).isInstanceOf(WardenClientException.class)
                    .hasMessageContaining("no gateway answered");

            // The held-up acquire reaches the gateway after the client gave up and cancelled it.
            Cell.await("the relay passed the held-up acquire on", () -> slow.delayedPassed() >= 1);
            Cell.holdsFor("nobody holds the lock after the late acquire arrived", Duration.ofSeconds(2),
                    () -> cell.holders(gw, NAME) == 0 && cell.waiters(gw, NAME) == 0);
            Optional<Hold> bobs = bob.lock(NAME).tryAcquire();
            assertThat(bobs).as("bob gets the lock").isPresent();
            bobs.get().close();
            assertThat(cell.get(gw, "/v1/sessions/" + alice.sessionId()).path("holds")).isEmpty();
        }
    }
}
