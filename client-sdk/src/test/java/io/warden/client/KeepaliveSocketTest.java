package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Heartbeats over the WebSocket keepalive stream, its failover and its unary fallback, against real gateways. */
class KeepaliveSocketTest {
    private static final String NAME = "jobs/nightly-report";

    private Cell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
    }

    @AfterEach
    void tearDown() {
        cell.close();
    }

    private static WebSocketKeepaliveTransport socketTransport(WardenClient c) {
        assertThat(c.keepaliveTransport()).isInstanceOf(WebSocketKeepaliveTransport.class);
        return (WebSocketKeepaliveTransport) c.keepaliveTransport();
    }

    /** TTL 3 s, held 8 s: a heartbeat's deadline is its interval (1 s), slack enough on a loaded machine. */
    @Test
    void heartbeatsOverTheSocket_keepTheSessionAlivePastItsTtl() {
        Gateway gw = cell.gateway();
        WardenClient c = cell.client("alice", Duration.ofSeconds(3), Cell.url(gw));
        WebSocketKeepaliveTransport transport = socketTransport(c);
        Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));

        Cell.holdsFor("the hold stays valid for well past the TTL", Duration.ofMillis(8000), hold::isValid);

        assertThat(c.state()).isEqualTo(SessionState.CONNECTED);
        assertThat(transport.socketAcks()).as("heartbeats answered over the socket").isGreaterThanOrEqualTo(6);
        assertThat(transport.unaryHeartbeats()).as("no unary fallback was needed").isZero();
        assertThat(transport.socketsOpened()).as("one socket for the session").isEqualTo(1);
        assertThat(transport.socketEndpoint()).isEqualTo(Cell.url(gw));
        hold.release();
        assertThat(cell.holders(gw, NAME)).isZero();
    }

    /**
     * The loss comes over the socket. TTL 6 s: a heartbeat's deadline is its interval (2 s), so a gateway slow to answer
     * on a loaded machine does not make the client drop the socket as suspect and go unary before the 4404 comes (at
     * TTL 1 s the deadline is 333 ms, and three unary heartbeats were seen under load).
     */
    @Test
    void sessionClosedElsewhere_socketClosedWith4404_sessionIsLost() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient c = cell.client("alice", Duration.ofSeconds(6), Cell.url(gw));
        WebSocketKeepaliveTransport transport = socketTransport(c);
        Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));
        Cell.await("a heartbeat was answered over the socket", () -> transport.socketAcks() > 0);

        cell.deleteSession(gw, c.sessionId());

        Cell.await("the session is LOST", () -> c.state() == SessionState.LOST);
        hold.lost().toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThat(transport.unaryHeartbeats()).as("the loss came over the socket (4404), not a unary 404").isZero();
    }

    @Test
    void gatewayOfTheSocketDies_heartbeatsFailOverToTheOther_andTheSessionLives() {
        Gateway g1 = cell.gateway();
        Gateway g2 = cell.gateway();
        WardenClient c = cell.client("alice", Duration.ofSeconds(2), Cell.url(g1), Cell.url(g2));
        WebSocketKeepaliveTransport transport = socketTransport(c);
        Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));
        Cell.await("the socket is open at the first gateway", () -> Cell.url(g1).equals(transport.socketEndpoint()));

        g1.close(); // stops at once, no drain

        Cell.await("a socket is open at the second gateway", () -> Cell.url(g2).equals(transport.socketEndpoint()));
        Cell.await("the second gateway took the session over", () -> g2.tracksSession(c.sessionId()));
        long acks = transport.socketAcks();
        Cell.holdsFor("the hold stays valid for more than a TTL", Duration.ofMillis(2500), hold::isValid);
        assertThat(transport.socketAcks()).as("heartbeats go over the new socket").isGreaterThan(acks);
        assertThat(c.state()).isEqualTo(SessionState.CONNECTED);

        hold.release(); // through g2; throws if the grant had been lost
        assertThat(cell.holders(g2, NAME)).isZero();
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
    }

    @Test
    void upgradeFails_heartbeatsFallBackToUnary_andTheSessionLives() throws Exception {
        Gateway gw = cell.gateway();
        // every WebSocket upgrade (GET /v1/sessions/.../keepalive) is cut; unary POSTs pass
        try (DropReplyProxy proxy = new DropReplyProxy(gw.httpPort(), "GET /v1/sessions/", Integer.MAX_VALUE)) {
            WardenClient c = cell.client("alice", Duration.ofSeconds(1), proxy.url());
            WebSocketKeepaliveTransport transport = socketTransport(c);
            Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));

            Cell.holdsFor("the hold stays valid for well past the TTL", Duration.ofMillis(3000), hold::isValid);

            assertThat(transport.socketsOpened()).isZero();
            assertThat(transport.socketAcks()).isZero();
            assertThat(transport.unaryHeartbeats()).as("heartbeats went unary").isGreaterThanOrEqualTo(6);
            hold.release();
            c.close(); // while the proxy is still there
        }
    }

    @Test
    void unaryForced_noSocket_sessionLives() {
        Gateway gw = cell.gateway();
        WardenClient c = cell.track(WardenClient.builder().endpoints(Cell.url(gw)).clientId("alice")
                .sessionTtl(Duration.ofSeconds(1)).webSocketKeepalive(false).build());
        assertThat(c.keepaliveTransport()).isInstanceOf(UnaryKeepaliveTransport.class);
        Hold hold = c.lock(NAME).acquire(Duration.ofSeconds(5));

        Cell.holdsFor("the hold stays valid for well past the TTL", Duration.ofMillis(2500), hold::isValid);
        hold.release();
    }
}
