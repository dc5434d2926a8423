package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.console.model.AuditEntry;
import io.warden.service.Gateway;
import io.warden.service.support.SseTestClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A force-release was never noticed over HTTP. {@code HttpHold.isValid()} looked only at the
 * session: after an admin force-release (or any release by token from elsewhere) it stayed true for 8 s and
 * {@code lost()} never completed, while direct mode noticed. A hold now learns that its grant ended from the session's
 * watch of its own events ({@code GET /v1/watch?session_id=}): a RELEASED event for its token, or a RESYNC that no
 * longer lists it.
 */
class ForceReleaseTest {
    private static final String NAME = "jobs/force-released";

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
    void releasedByTokenFromElsewhere_theHoldIsLost() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Duration.ofSeconds(5), Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));

        // another process, with alice's session id and token, releases her grant
        assertThat(cell.release(gw, alice.sessionId(), NAME, hold.token()).path("released").asBoolean()).isTrue();

        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::checkValid).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining("RELEASED");
        assertThat(alice.state()).as("the session lives on").isEqualTo(SessionState.CONNECTED);
        try (Hold bobs = bob.lock(NAME).acquire(Duration.ofSeconds(5))) {
            assertThat(bobs.token()).isGreaterThan(hold.token());
        }
        assertThatThrownBy(hold::release).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining(NAME);
        // alice's other locks are not affected, and her session still takes new ones
        try (Hold again = alice.lock("jobs/other").acquire(Duration.ofSeconds(5))) {
            assertThat(again.isValid()).isTrue();
        }
    }

    @Test
    void forceReleasedByAnAdmin_theHoldIsLost_andItsOwnReleaseIsNotMistakenForOne() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Duration.ofSeconds(5), Cell.url(gw));
        Hold kept = alice.lock("jobs/kept").acquire(Duration.ofSeconds(5));
        Hold forced = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        Hold released = alice.lock("jobs/released").acquire(Duration.ofSeconds(5));
        released.release(); // its own RELEASED event must not make anything lost

        var result = gw.consoleBackend().forceRelease(NAME, forced.token(), new AuditEntry(Instant.now(), "admin",
                "FORCE_RELEASE", NAME + "#" + forced.token(), "force-release test", "test", null, null)).get(10, TimeUnit.SECONDS);
        assertThat(result.toString()).contains("true");

        forced.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(forced.isValid()).isFalse();
        Cell.holdsFor("the other hold stays valid", Duration.ofMillis(1000), kept::isValid);
        assertThat(kept.lost().toCompletableFuture()).isNotDone();
        assertThat(released.lost().toCompletableFuture()).isNotDone();
        kept.release();
    }

    /**
     * The watch was down when the grant ended, and the gateway it resumes at has no history that far back: it gets a
     * RESYNC that no longer lists the hold.
     */
    @Test
    void releasedWhileTheWatchIsDown_andResumedWithARESYNC_theHoldIsLost() throws Exception {
        Gateway g1 = cell.gateway();
        try (FaultRelay first = new FaultRelay(g1.httpPort()); FaultRelay second = new FaultRelay(deadPort())) {
            WardenClient alice = cell.client("alice", Duration.ofSeconds(10), first.url(), second.url());
            Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
            Cell.await("alice watches her session", () -> !first.requests("GET /v1/watch?session_id=").isEmpty());

            first.cut(); // alice can reach no gateway now
            assertThat(cell.release(g1, alice.sessionId(), NAME, hold.token()).path("released").asBoolean()).isTrue();
            Gateway g2 = cell.gateway(); // a gateway whose history starts after the release
            second.target(g2.httpPort());

            hold.lost().toCompletableFuture().get(15, TimeUnit.SECONDS);
            assertThat(hold.isValid()).isFalse();
            assertThatThrownBy(hold::checkValid).hasMessageContaining("RESYNC");
            Cell.await("alice's session is CONNECTED through the second gateway", () -> alice.state() == SessionState.CONNECTED);
        }
    }

    /** The same without the release: the RESYNC lists the hold, and it stays valid. */
    @Test
    void resumedWithARESYNC_thatListsTheHold_theHoldStaysValid() throws Exception {
        Gateway g1 = cell.gateway();
        try (FaultRelay first = new FaultRelay(g1.httpPort()); FaultRelay second = new FaultRelay(deadPort())) {
            WardenClient alice = cell.client("alice", Duration.ofSeconds(10), first.url(), second.url());
            Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
            Cell.await("alice watches her session", () -> !first.requests("GET /v1/watch?session_id=").isEmpty());

            first.cut();
            Gateway g2 = cell.gateway();
            second.target(g2.httpPort());

            Cell.await("alice's watch resumed at the second gateway", () -> !second.requests("GET /v1/watch?session_id=").isEmpty());
            Cell.await("alice's session is CONNECTED through the second gateway", () -> alice.state() == SessionState.CONNECTED);
            Cell.holdsFor("the hold stays valid after the RESYNC", Duration.ofMillis(1500), hold::isValid);
            assertThat(hold.lost().toCompletableFuture()).isNotDone();
            hold.release(); // released:true through g2
            assertThat(cell.holders(g2, NAME)).isZero();
        }
    }

    /**
     * The gateway the watch resumes at could not list the hold's lock when it read the cell (other
     * ZooKeeper clients made it larger than its packet limit lets it list): its RESYNC shows the lock as too large, with
     * no holders. That says nothing of the hold: it stays valid (read as "no longer lists it", it was taken as lost).
     */
    @Test
    void resumedWithARESYNC_thatShowsTheLockTooLargeToFollow_theHoldStaysValid() throws Exception {
        Gateway g1 = cell.gateway();
        try (FaultRelay first = new FaultRelay(g1.httpPort()); FaultRelay second = new FaultRelay(deadPort())) {
            WardenClient alice = cell.client("alice", Duration.ofSeconds(10), first.url(), second.url());
            Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
            Cell.await("alice watches her session", () -> !first.requests("GET /v1/watch?session_id=").isEmpty());

            first.cut();
            // 400 nodes of plain Curator clients behind the hold: past what a gateway with 20,000-byte replies lists
            String lockPath = io.warden.service.support.WardenFixture.lockPath(NAME);
            for (int i = 0; i < 400; i++) {
                cell.fx.curator.create().withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL).forPath(lockPath
                        + "/" + io.warden.service.queue.QueueEntry.prefix(java.util.UUID.randomUUID().toString(),
                        io.warden.service.api.Mode.SHARED));
            }
            Gateway g2 = cell.gateway(cell.config().withZkMaxPacketBytes(20_000).withMaxEntriesPerLock(100));
            second.target(g2.httpPort());

            Cell.await("alice's watch resumed at the second gateway", () -> !second.requests("GET /v1/watch?session_id=").isEmpty());
            Cell.await("alice's session is CONNECTED through the second gateway", () -> alice.state() == SessionState.CONNECTED);
            Cell.holdsFor("the hold stays valid after the RESYNC", Duration.ofMillis(1500), hold::isValid);
            assertThat(hold.lost().toCompletableFuture()).isNotDone();
        }
    }

    /**
     * Every watch slot of the gateway for names and prefixes is taken (max-watches 1, which the console's event log
     * has; 10,000 by default, which the console, EventSources and {@code warden watch} can use up): the session's own
     * watch counts in the sessions' pool, so the hold still learns of its release. Before, it got 429 like any other
     * watch, the client gave it up for good, and {@code lost()} never completed.
     */
    @Test
    void everyWatchSlotTaken_theHoldStillLearnsOfItsRelease() throws Exception {
        Gateway gw = cell.gateway(cell.config().toBuilder().maxWatches(1).build());
        Cell.await("the console's event log takes the one slot", () -> gw.watches().watchCount() == 1);
        try (SseTestClient refused = SseTestClient.open(gw.httpPort(), "?prefix=jobs")) {
            assertThat(refused.status()).as("a watch of a prefix, past max-watches").isEqualTo(429);
        }
        WardenClient alice = cell.client("alice", Duration.ofSeconds(5), Cell.url(gw));
        Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
        Cell.await("alice watches her session", () -> gw.watches().sessionWatchCount() == 1);

        assertThat(cell.release(gw, alice.sessionId(), NAME, hold.token()).path("released").asBoolean()).isTrue();

        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
    }

    /**
     * The first gateway's pool of session watches is full (max-sessions-per-gateway 3, taken by watches of made-up
     * session ids): the client's watch there is answered 429, and it tries the next gateway instead of giving up, so
     * the hold learns of its release. Before, a 429 ended that watch for good.
     */
    @Test
    void sessionWatchPoolFull_theClientTriesTheNextGateway_andTheHoldLearnsOfItsRelease() throws Exception {
        Gateway full = cell.gateway(cell.config().toBuilder().maxSessionsPerGateway(3).build());
        Gateway other = cell.gateway();
        List<SseTestClient> squatters = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                squatters.add(SseTestClient.watch(full.httpPort(), "?session_id=" + randomSessionId()));
            }
            try (SseTestClient refused = SseTestClient.open(full.httpPort(), "?session_id=" + randomSessionId())) {
                assertThat(refused.status()).as("a fourth session's watch").isEqualTo(429);
            }
            WardenClient alice = cell.client("alice", Duration.ofSeconds(5), Cell.url(full), Cell.url(other));
            Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
            Cell.await("alice watches her session at the other gateway", () -> other.watches().sessionWatchCount() == 1);

            assertThat(cell.release(full, alice.sessionId(), NAME, hold.token()).path("released").asBoolean()).isTrue();

            hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThat(hold.isValid()).isFalse();
        } finally {
            squatters.forEach(SseTestClient::close);
        }
    }

    private static String randomSessionId() {
        return String.format("%016x%016x", ThreadLocalRandom.current().nextLong(), ThreadLocalRandom.current().nextLong());
    }

    /**
     * Not a timing assertion: measures how long after a release from elsewhere returned the hold's {@code lost()}
     * completed (the event's way from ZooKeeper through the gateway's watch to the client), for the javadoc and README.
     */
    @Test
    void measure_lostAfterAReleaseFromElsewhere() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Duration.ofSeconds(10), Cell.url(gw));
        List<Long> micros = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Hold hold = alice.lock(NAME + "-" + (i % 5)).acquire(Duration.ofSeconds(5));
            CompletableFuture<Long> lostAt = hold.lost().toCompletableFuture().thenApply(v -> System.nanoTime());
            long released = System.nanoTime();
            cell.release(gw, alice.sessionId(), hold.name(), hold.token());
            long after = System.nanoTime();
            micros.add(TimeUnit.NANOSECONDS.toMicros(lostAt.get(10, TimeUnit.SECONDS) - (released + after) / 2));
        }
        micros.sort(null);
        System.out.printf("force-release noticed after (µs, from the middle of the release call): median %d, 90th %d, max %d%n",
                micros.get(micros.size() / 2), micros.get(micros.size() * 9 / 10), micros.get(micros.size() - 1));
    }

    private static int deadPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
