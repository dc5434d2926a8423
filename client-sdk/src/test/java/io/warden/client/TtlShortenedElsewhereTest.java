package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A TTL shortened elsewhere was ignored. {@code Session} only ever moved its local deadline
 * forward, so acknowledgements that reported a smaller {@code ttl_ms_remaining} changed nothing, and the heartbeat
 * interval stayed the one from the open. A keepalive with {@code ttl_ms} from another caller shortened alice's TTL to
 * 1 s: bob was GRANTED while alice's {@code isValid()} stayed true for over a second. The deadline now comes from the
 * latest acknowledged keepalive (send time + the TTL it reports) and the interval is re-derived from it.
 */
class TtlShortenedElsewhereTest {
    private static final String NAME = "jobs/ttl-shortened";

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
    void ttlShortenedByAnotherCaller_theHoldIsNoLongerValidWhenAnotherClientIsGranted() throws Exception {
        Gateway gw = cell.gateway();
        try (FaultRelay relay = new FaultRelay(gw.httpPort())) {
            WardenClient alice = cell.client("alice", Duration.ofSeconds(10), relay.url());
            WardenClient bob = cell.client("bob", Cell.url(gw));
            WebSocketKeepaliveTransport heartbeats = (WebSocketKeepaliveTransport) alice.keepaliveTransport();
            Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
            long acksBefore = heartbeats.socketAcks();

            // Someone else (with alice's session id) shortens her TTL to 2 s, and keeps the session alive until two of
            // alice's heartbeats have been acknowledged since (each reporting about 2 s to live): the service now
            // expires a session at its shortened deadline, and alice's next heartbeat at the 10 s TTL's interval
            // (3.3 s) could come after it.
            AtomicBoolean stop = new AtomicBoolean();
            Thread other = new Thread(() -> {
                while (!stop.get()) {
                    cell.keepalive(gw, alice.sessionId(), 2000);
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "other-caller");
            other.start();
            try {
                Cell.await("two heartbeats of alice acknowledged since", () -> heartbeats.socketAcks() >= acksBefore + 2);
            } finally {
                stop.set(true);
                other.join();
            }
            assertThat(hold.isValid()).isTrue();
            // Then alice is cut off. The service may expire her session 2 s after it accepted her last keepalive,
            // which was before the cut: from then on her hold must not be valid (on b1994d3 it stayed valid for the
            // rest of the 10 s counted from a keepalive before the change).
            relay.cut();
            long cut = System.nanoTime();
            Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(cut + TimeUnit.SECONDS.toNanos(2) - System.nanoTime())) + 1);
            assertThat(hold.isValid()).as("alice's hold, 2 s (her TTL now) after her last possible keepalive").isFalse();

            try (Hold bobs = bob.lock(NAME).acquire(Duration.ofSeconds(20))) {
                assertThat(hold.isValid()).as("alice's hold is not valid once bob holds the lock").isFalse();
                assertThat(bobs.token()).isGreaterThan(hold.token());
            }
        }
    }

    @Test
    void ttlShortenedByAnotherCaller_heartbeatsFollowTheNewTtl_andKeepTheSessionAlive() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Duration.ofSeconds(5), Cell.url(gw));
        WebSocketKeepaliveTransport heartbeats = (WebSocketKeepaliveTransport) alice.keepaliveTransport();
        Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        long acksBefore = heartbeats.socketAcks();

        // Another caller shortens alice's TTL to 1 s and keeps the session alive until alice has heard of it once.
        AtomicBoolean stop = new AtomicBoolean();
        Thread other = new Thread(() -> {
            while (!stop.get()) {
                cell.keepalive(gw, alice.sessionId(), 1000);
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "other-caller");
        other.start();
        try {
            Cell.await("a heartbeat of alice acknowledged after the change", () -> heartbeats.socketAcks() > acksBefore);
        } finally {
            stop.set(true);
            other.join();
        }

        // With the interval of a 5 s TTL (1.7 s) the session would now expire (on b1994d3 it was LOST within about
        // 5 s, when the gateway's expiry timer came round); heartbeats every third of 1 s keep it.
        Cell.holdsFor("alice's session stays CONNECTED for six of the new TTLs", Duration.ofSeconds(6),
                () -> alice.state() == SessionState.CONNECTED);
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
        hold.release(); // released:true, or it throws
        assertThat(cell.holders(gw, NAME)).isZero();
    }
}
