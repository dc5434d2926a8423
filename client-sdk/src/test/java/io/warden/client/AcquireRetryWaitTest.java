package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code acquire(wait)} could block for about 2 x wait + 2 x the request timeout, because a retry
 * after a failed attempt sent the full {@code wait_ms} again. A retry now asks for what remains of the caller's wait.
 */
class AcquireRetryWaitTest {
    private static final String NAME = "jobs/retry-wait";
    private static final ObjectMapper JSON = new ObjectMapper();

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
    void aRetryAfterAFailedAttempt_asksOnlyForWhatRemainsOfTheWait() throws Exception {
        Gateway g1 = cell.gateway();
        Gateway g2 = cell.gateway();
        WardenClient bob = cell.client("bob", Cell.url(g2));
        try (FaultRelay first = new FaultRelay(g1.httpPort()); FaultRelay second = new FaultRelay(g2.httpPort());
             Hold held = bob.lock(NAME).acquire(Duration.ofSeconds(5))) {
            // The first acquire call at g1 hangs for 1 s, then its connection breaks: the client retries at g2.
            first.on("POST /v1/acquire", new FaultRelay.CutAfter(1000), 1);
            WardenClient alice = cell.track(WardenClient.builder().endpoints(first.url(), second.url()).clientId("alice")
                    .sessionTtl(Duration.ofSeconds(5)).requestTimeout(Duration.ofSeconds(2)).build());

            assertThatThrownBy(() -> alice.lock(NAME).acquire(Duration.ofMillis(3000)))
                    .isInstanceOf(AcquireTimeoutException.class);

            List<Long> firsts = waitMs(first.requests("POST /v1/acquire"));
            assertThat(firsts).hasSize(1);
            assertThat(firsts.get(0)).isBetween(2500L, 3000L);
            List<Long> retries = waitMs(second.requests("POST /v1/acquire"));
            assertThat(retries).hasSize(1);
            assertThat(retries.get(0)).as("wait_ms of the retry, sent at least 1 s after the first call")
                    .isLessThanOrEqualTo(firsts.get(0) - 1000);
            assertThat(cell.waiters(g2, NAME)).as("nothing left queued").isZero();
            assertThat(held.isValid()).isTrue();
        }
    }

    private static List<Long> waitMs(List<FaultRelay.Request> requests) {
        return requests.stream().map(r -> {
            try {
                return JSON.readTree(r.body()).path("wait_ms").asLong(-1);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }).toList();
    }
}
