package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Failover, retries and session loss against real gateways on a real ZooKeeper, in real time with short TTLs. */
class FailoverTest {
    private static final String NAME = "jobs/nightly-report";

    private Cell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
    }

    @AfterEach
    void tearDown() throws Exception {
        cell.close();
    }

    @Test
    void deadFirstEndpoint_failsOverToTheLiveOne_andAcquiresOnce() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient c = cell.client("alice", "http://127.0.0.1:" + freePort(), Cell.url(gw));

        try (Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5))) {
            var view = cell.lock(gw, NAME);
            assertThat(view.path("holders")).hasSize(1);
            assertThat(view.path("holders").get(0).path("token").asLong()).isEqualTo(hold.token());
            assertThat(view.path("waiters")).isEmpty();
            assertThat(cell.fx.queueSize(NAME)).isEqualTo(1);
            assertThat(c.currentEndpoint()).isEqualTo(Cell.url(gw));
        }
    }

    @Test
    void acquire_replyDropped_retryWithTheSameRequestIdGetsTheSameGrant() throws Exception {
        Gateway gw = cell.gateway();
        try (DropReplyProxy proxy = new DropReplyProxy(gw.httpPort(), "POST /v1/acquire", 1)) {
            WardenClient c = cell.client("alice", proxy.url(), Cell.url(gw));

            try (Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5))) {
                assertThat(proxy.dropped()).isEqualTo(1); // the first call was applied, its answer lost
                var view = cell.lock(gw, NAME);
                assertThat(view.path("holders")).hasSize(1);
                assertThat(view.path("holders").get(0).path("token").asLong()).isEqualTo(hold.token());
                assertThat(view.path("waiters")).isEmpty();
                assertThat(cell.fx.queueSize(NAME)).as("one queue node: the retry did not queue twice").isEqualTo(1);
            }
            assertThat(cell.holders(gw, NAME)).isZero();
        }
    }

    @Test
    void gatewayCloses_whileHolding_holdStaysValid_andReleasesThroughTheOther() {
        Gateway g1 = cell.gateway();
        Gateway g2 = cell.gateway();
        WardenClient c = cell.client("alice", Duration.ofSeconds(2), Cell.url(g1), Cell.url(g2));
        Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));
        assertThat(g1.tracksSession(c.sessionId())).isTrue();

        g1.close();

        Cell.await("the second gateway took the session over", () -> g2.tracksSession(c.sessionId()));
        Cell.holdsFor("the hold stays valid for more than a TTL", Duration.ofMillis(2500), hold::isValid);
        assertThat(c.state()).isEqualTo(SessionState.CONNECTED);
        assertThat(cell.lock(g2, NAME).path("holders").get(0).path("token").asLong()).isEqualTo(hold.token());

        hold.release(); // through g2; throws if the grant had been lost

        assertThat(cell.holders(g2, NAME)).isZero();
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
    }

    @Test
    void allGatewaysUnreachable_pastTheLocalDeadline_suspends_thenRecoversWhenOneIsBack() throws Exception {
        Gateway g1 = cell.gateway();
        int port = g1.httpPort();
        WardenClient c = cell.client("alice", Duration.ofSeconds(1), Cell.url(g1));
        List<SessionState> events = new CopyOnWriteArrayList<>();
        c.addListener(events::add);
        Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));
        // The local deadline counts from when the last acknowledged heartbeat was sent, not from when the acquire
        // returned (on a loaded machine the acquire can take longer than a heartbeat interval). The second heartbeat
        // acknowledged after this moment was sent after it, so the deadline is at least TTL - safety from here.
        WebSocketKeepaliveTransport heartbeats = (WebSocketKeepaliveTransport) c.keepaliveTransport();
        long acksBefore = heartbeats.socketAcks();
        long sessionDown = System.nanoTime();
        Cell.await("two heartbeats acknowledged", () -> heartbeats.socketAcks() >= acksBefore + 2);

        g1.close();

        Cell.await("the session is SUSPENDED", () -> c.state() == SessionState.SUSPENDED);
        assertThat(System.nanoTime() - sessionDown).as("never suspended before the local deadline could pass")
                .isGreaterThan(TimeUnit.MILLISECONDS.toNanos(1000 - 333 - 101));
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class)
                .isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining(NAME);
        assertThat(hold.lost().toCompletableFuture()).as("suspended is not lost").isNotDone();
        Cell.await("listeners heard SUSPENDED", () -> events.contains(SessionState.SUSPENDED));

        // A gateway comes back at the same address: it adopts the session (which never expired: nobody tracked it)
        Gateway g1Again = cell.gateway(cell.config().toBuilder().httpPort(port).build());

        Cell.await("the session is CONNECTED again", () -> c.state() == SessionState.CONNECTED);
        assertThat(hold.isValid()).isTrue();
        Cell.await("listeners heard CONNECTED", () -> events.equals(List.of(SessionState.SUSPENDED, SessionState.CONNECTED)));
        hold.release(); // the grant was never given up: released:true
        assertThat(cell.holders(g1Again, NAME)).isZero();
    }

    @Test
    void sessionClosedBehindTheClientsBack_isLost_holdsAndWaitersAreTold() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient c = cell.client("alice", Duration.ofSeconds(1), Cell.url(gw));
        WardenClient other = cell.client("bob", Cell.url(gw));
        Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));
        Hold othersHold = other.lock("jobs/other").acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> waiting = c.lock("jobs/other").acquireAsync(Duration.ofSeconds(30));
        Cell.await("alice is queued", () -> cell.waiters(gw, "jobs/other") == 1);

        cell.deleteSession(gw, c.sessionId());

        Cell.await("the session is LOST", () -> c.state() == SessionState.LOST);
        hold.lost().toCompletableFuture().get(5, TimeUnit.SECONDS);
        c.sessionLost().toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(SessionLostException.class);
        assertThatThrownBy(hold::release).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining(NAME);
        hold.close(); // reported once
        assertThatThrownBy(() -> c.lock(NAME).acquire(Duration.ofSeconds(1))).isInstanceOf(SessionLostException.class);
        assertThat(othersHold.isValid()).isTrue();
        othersHold.close();
    }

    @Test
    void noGatewayAtAll_buildFailsWithTheRootException() throws Exception {
        String dead = "http://127.0.0.1:" + freePort();
        assertThatThrownBy(() -> WardenClient.builder().endpoints(dead).clientId("alice")
                .requestTimeout(Duration.ofMillis(300)).build())
                .isInstanceOf(WardenClientException.class)
                .hasMessageContaining("no gateway answered");
    }

    @Test
    void badRequest_isNotRetried_andCarriesTheProblemCode() {
        Gateway gw = cell.gateway();
        long start = System.nanoTime();
        // control characters pass the builder's length check, the gateway refuses them
        assertThatThrownBy(() -> WardenClient.builder().endpoints(Cell.url(gw)).clientId("bad\u0001id")
                .requestTimeout(Duration.ofSeconds(10)).build())
                .isInstanceOfSatisfying(WardenClientException.class, e -> {
                    assertThat(e.code()).contains("INVALID_ARGUMENT");
                    assertThat(e.status()).isEqualTo(400);
                    assertThat(e).hasMessageContaining("client_id");
                });
        assertThat(System.nanoTime() - start).as("answered at once, not retried").isLessThan(TimeUnit.SECONDS.toNanos(5));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
    /**
     * A release still retrying when its client closes returns, instead of waiting for ever. (It waited for ever: closing
     * the client shut its scheduler down, which dropped the retry the release was waiting for, so its future never
     * completed; an election thread giving its lock back hung so, seen in ElectionTest.)
     */
    @Test
    void release_retryingWhenTheClientCloses_returns() throws Exception {
        Gateway gw = cell.gateway();
        try (FaultRelay relay = new FaultRelay(gw.httpPort())) {
            WardenClient c = cell.track(WardenClient.builder().endpoints(relay.url()).clientId("alice")
                    .requestTimeout(Duration.ofSeconds(60)).build());
            Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));
            relay.always("POST /v1/release", new FaultRelay.Answer(500, "text/plain", "Internal Server Error"));
            CompletableFuture<Throwable> released = new CompletableFuture<>();
            Thread releasing = new Thread(() -> {
                try {
                    hold.release();
                    released.complete(null);
                } catch (RuntimeException e) {
                    released.complete(e);
                }
            }, "releasing");
            releasing.start();
            Cell.await("the release was answered 500 and is being retried", () -> relay.requests("POST /v1/release").size() >= 2);

            c.close();

            assertThat(released.get(20, TimeUnit.SECONDS)).as("release returned")
                    .isInstanceOf(WardenClientException.class).hasMessageContaining("closed");
        }
    }
}
