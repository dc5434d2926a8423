package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A gateway answering 500 (or a 404 without Warden's {@code code}) was retried forever, with no
 * failover: the client sat SUSPENDED on a broken endpoint while the healthy one said the session was gone, and
 * {@code lost()} never completed; {@code open()} gave up on a non-retryable answer instead of trying the next
 * endpoint. The client now decides from Warden's problem code and fails over on anything else. The broken endpoint is
 * a relay in front of a real gateway that answers in its place, as a broken proxy or a gateway with a bug would.
 */
class BrokenGatewayFailoverTest {
    private static final String NAME = "jobs/broken-gateway";
    private static final FaultRelay.Answer HTTP_500 = new FaultRelay.Answer(500, "text/html", "<html><body>Internal Server Error</body></html>");
    private static final FaultRelay.Answer HTTP_404 = new FaultRelay.Answer(404, "text/plain", "Not Found");
    private static final FaultRelay.Answer TOO_MANY_SESSIONS = new FaultRelay.Answer(429, "application/problem+json",
            "{\"type\":\"https://warden.dev/problems/resource-exhausted\",\"title\":\"Resource exhausted\",\"status\":429,"
                    + "\"detail\":\"this gateway already tracks 100000 sessions, the most allowed; try another gateway\","
                    + "\"code\":\"RESOURCE_EXHAUSTED\"}");

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
    void open_firstEndpointAnswers500_opensAtTheNext() throws Exception {
        opensPastABrokenFirstEndpoint(HTTP_500);
    }

    @Test
    void open_firstEndpointAnswers404WithoutWardensCode_opensAtTheNext() throws Exception {
        opensPastABrokenFirstEndpoint(HTTP_404);
    }

    @Test
    void open_firstEndpointRefusesWithAFinalCode_opensAtTheNext() throws Exception {
        opensPastABrokenFirstEndpoint(TOO_MANY_SESSIONS);
    }

    private void opensPastABrokenFirstEndpoint(FaultRelay.Answer answer) throws Exception {
        Gateway g1 = cell.gateway();
        Gateway g2 = cell.gateway();
        try (FaultRelay broken = new FaultRelay(g1.httpPort())) {
            broken.always("", answer);
            WardenClient alice = cell.client("alice", broken.url(), Cell.url(g2));

            try (Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
                assertThat(hold.isValid()).isTrue();
                assertThat(cell.lock(g2, NAME).path("holders").get(0).path("token").asLong()).isEqualTo(hold.token());
            }
            assertThat(broken.requests("POST /v1/sessions")).hasSize(1);
        }
    }

    @Test
    void acquire_answered500_isRetriedAtTheNextEndpoint_andGrantedOnce() throws Exception {
        Gateway g1 = cell.gateway();
        Gateway g2 = cell.gateway();
        try (FaultRelay first = new FaultRelay(g1.httpPort())) {
            WardenClient alice = cell.client("alice", first.url(), Cell.url(g2));
            first.on("POST /v1/acquire", HTTP_500, 1);

            try (Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
                assertThat(first.requests("POST /v1/acquire")).hasSize(1);
                assertThat(cell.fx.queueSize(NAME)).as("one queue node").isEqualTo(1);
                assertThat(cell.lock(g2, NAME).path("holders").get(0).path("token").asLong()).isEqualTo(hold.token());
            }
        }
    }

    @Test
    void sessionGoneWhileTheCurrentEndpointAnswers500_theNextSaysSo_andTheHoldIsLost() throws Exception {
        sessionLossIsNoticedPast(HTTP_500);
    }

    @Test
    void sessionGoneWhileTheCurrentEndpointAnswers404WithoutWardensCode_theNextSaysSo_andTheHoldIsLost() throws Exception {
        sessionLossIsNoticedPast(HTTP_404);
    }

    private void sessionLossIsNoticedPast(FaultRelay.Answer answer) throws Exception {
        Gateway g1 = cell.gateway();
        Gateway g2 = cell.gateway();
        try (FaultRelay first = new FaultRelay(g1.httpPort())) {
            WardenClient alice = cell.track(WardenClient.builder().endpoints(first.url(), Cell.url(g2)).clientId("alice")
                    .sessionTtl(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(3)).webSocketKeepalive(false).build());
            Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));

            first.always("", answer); // g1 is broken from now on
            cell.deleteSession(g2, alice.sessionId());

            // (the hold itself may hear of it first, from its watch of the session's events at the other gateway)
            alice.sessionLost().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThat(alice.state()).isEqualTo(SessionState.LOST);
            hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThat(hold.isValid()).isFalse();
        }
    }
}
