package io.warden.it;

import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.LinkProxy;
import io.warden.it.support.LoopbackPorts;
import io.warden.it.support.WardenClient;
import io.warden.it.support.ZkEnsemble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A grant is decided on state at least as new as the last deletion of that node anywhere.
 *
 * <p>A three-server ensemble whose followers reach the leader through {@link LinkProxy} proxies. Gateway A talks only to
 * one follower; that follower's replication stream from the leader is delayed by 3 s (a follower lagging behind a slow
 * disk or a congested link: it still answers reads, from old state). Gateway B talks to the leader. Session S (at its
 * request limit, so a resend of its acquire makes no write of its own) holds {@code stale/one} through A; S releases it
 * through B and another session takes it there. Then the resend of S's first acquire (same {@code request_id}) reaches A.
 * A read on the lagging follower still shows S's node at the head of the queue: without a {@code sync} before the
 * decision, A answers GRANTED, and two sessions hold one exclusive lock.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StaleFollowerIT {
    private static final String LOCK = "stale/one";

    @Test
    void aResentAcquireAtAGatewayOnALaggingFollower_isNotGrantedAfterAReleaseElsewhere() throws Exception {
        // A 20 s ZooKeeper session timeout: vouching (B = 10 s) and the follower's own pings tolerate the 3 s lag.
        try (LaggingCell cell = LaggingCell.start("StaleFollowerIT")) {
            WardenClient a = cell.a;
            WardenClient b = cell.b;

            WardenClient.Session s = a.openSession("stale-reader", 60_000);
            WardenClient.Acquired first = a.acquire(s.id(), LOCK, "EXCLUSIVE", 10_000, "first", null);
            assertThat(first.granted()).as("S's first acquire at A").isTrue();

            WardenClient.Session other = b.openSession("other", 60_000);
            LinkProxy replication = cell.replication;
            replication.delayDownstream(Duration.ofSeconds(3));
            try {
                assertThat(b.release(s.id(), LOCK, first.token()).released()).as("S releases through B").isTrue();
                WardenClient.Acquired taken = b.acquire(other.id(), LOCK, "EXCLUSIVE", 0, "taken", null);
                assertThat(taken.granted()).as("another session takes the lock through B").isTrue();

                // The resend of S's first acquire, answered by A while its follower is 3 s behind. Every call at A
                // is slow now (a read waits behind the session's pending writes and syncs, each 3 s): the calls
                // wait up to 10 s, as the first one did.
                WardenClient.ProblemException refused = null;
                try {
                    WardenClient.Acquired again = a.acquire(s.id(), LOCK, "EXCLUSIVE", 10_000, "first", null);
                    assertThat(again.status())
                            .as("A's answer to the resend of S's released request (token %s) while session %s holds"
                                    + " the lock with token %s", again.token(), other.id(), taken.token())
                            .isNotEqualTo("GRANTED");
                } catch (WardenClient.ProblemException e) {
                    refused = e;
                }
                assertThat(refused).as("the resend is refused").isNotNull();
                assertThat(refused.status()).isEqualTo(400);
                assertThat(refused.getMessage()).contains("request_id");
            } finally {
                replication.heal();
            }
            var holders = b.lock(LOCK).path("holders");
            assertThat(holders.size()).as("holders of %s: %s", LOCK, holders).isEqualTo(1);
            assertThat(holders.path(0).path("session_id").asText()).isEqualTo(other.id());
        }
    }

    /**
     * Found by the proof suite (ProofSoakIT, 30 minutes, seed 20261203, a ZooKeeper follower isolated): a release by a
     * valid token answered {@code released:false} in 24 ms and left the hold in place. The release went to a gateway
     * whose server was a follower behind the leader; it looked for the session's queue node there, did not find the
     * node the grant elsewhere had just made, and answered "no such grant". A keepalive (a takeover) and a close at
     * such a gateway answered 404 for a session opened elsewhere a moment before. A "not found" is now only said after
     * a {@code sync}; the cancel by {@code request_id} is checked here too.
     */
    @Test
    void aReleaseAndACancelAtAGatewayOnALaggingFollower_findAGrantAndARequestMadeElsewhere() throws Exception {
        try (LaggingCell cell = LaggingCell.start("StaleFollowerIT-release")) {
            WardenClient a = cell.a;
            WardenClient b = cell.b;
            WardenClient.Session s = b.openSession("holder", 60_000);
            WardenClient.Session waiter = b.openSession("waiter", 60_000);
            a.session(s.id()); // both sessions are on A's follower before it falls behind
            a.session(waiter.id());

            // 1 s behind: a sync and then the release's own multi each wait for it, within the client's 5 s
            LinkProxy replication = cell.replication;
            replication.delayDownstream(Duration.ofSeconds(1));
            try {
                WardenClient.Acquired held = b.acquire(s.id(), "stale/release", "EXCLUSIVE", 0, "held", null);
                assertThat(held.granted()).as("granted through B, on the leader").isTrue();
                assertThat(a.release(s.id(), "stale/release", held.token()).released())
                        .as("the release through A, whose follower has not seen the grant yet").isTrue();

                WardenClient.Acquired blocker = b.acquire(s.id(), "stale/cancel", "EXCLUSIVE", 0, "blocker", null);
                assertThat(blocker.granted()).isTrue();
                WardenClient.Acquired queued = b.acquire(waiter.id(), "stale/cancel", "EXCLUSIVE", 0, "queued", "KEEP");
                assertThat(queued.granted()).as("queued behind the blocker, kept").isFalse();
                assertThat(a.cancel(waiter.id(), "stale/cancel", "queued").released())
                        .as("the cancel through A, whose follower has not seen the request yet").isTrue();

                WardenClient.Session fresh = b.openSession("fresh", 60_000);
                assertThat(a.keepalive(fresh.id())).as("a keepalive through A of a session opened through B just now")
                        .isPositive();
                WardenClient.Session another = b.openSession("another", 60_000);
                assertThat(a.closeSession(another.id()).has("released"))
                        .as("a close through A of a session opened through B just now").isTrue();
            } finally {
                replication.heal();
            }
            assertThat(b.lock("stale/release").path("mode").asText()).isEqualTo("FREE");
            assertThat(b.lock("stale/cancel").path("waiters").size()).as("waiters left on stale/cancel").isZero();
        }
    }

    /**
     * Three ZooKeeper servers whose followers reach the leader through proxies; gateway A on one follower (the one
     * {@link #replication} can make lag), gateway B on the leader; a client of each.
     */
    private static final class LaggingCell implements AutoCloseable {
        final ZkEnsemble zk;
        final GatewayProcess gwA;
        final GatewayProcess gwB;
        final WardenClient a;
        final WardenClient b;
        /** The link the lagging follower's replication stream from the leader comes down. */
        final LinkProxy replication;

        private LaggingCell(ZkEnsemble zk, GatewayProcess gwA, GatewayProcess gwB, LinkProxy replication) {
            this.zk = zk;
            this.gwA = gwA;
            this.gwB = gwB;
            this.a = client(gwA);
            this.b = client(gwB);
            this.replication = replication;
        }

        static LaggingCell start(String run) {
            JavaLauncher launcher = JavaLauncher.forRun(run);
            ZkEnsemble zk = ZkEnsemble.start(launcher, 3, ZkEnsemble.Options.defaults().withProxiedQuorum());
            GatewayProcess gwA = null;
            try {
                zk.awaitQuorum(Duration.ofSeconds(60));
                int leader = zk.leader().orElseThrow();
                int lagging = (leader + 1) % 3;
                gwA = gateway(launcher, "gwA", zk.clientPort(lagging));
                GatewayProcess gwB = gateway(launcher, "gwB", zk.clientPort(leader));
                LaggingCell cell = new LaggingCell(zk, gwA, gwB, zk.quorumLink(lagging, leader));
                gwA.awaitReady(Duration.ofSeconds(60));
                gwB.awaitReady(Duration.ofSeconds(60));
                return cell;
            } catch (RuntimeException e) {
                if (gwA != null) {
                    gwA.close();
                }
                zk.close();
                throw e;
            }
        }

        @Override
        public void close() {
            gwA.close();
            gwB.close();
            zk.close();
        }
    }

    private static GatewayProcess gateway(JavaLauncher launcher, String id, int zkClientPort) {
        java.nio.file.Path logback = launcher.logbackConfig(id, "INFO",
                Map.of("io.warden", "DEBUG", "org.apache.zookeeper", "WARN", "org.eclipse.jetty", "WARN"));
        return GatewayProcess.start(launcher, id, LoopbackPorts.HOST + ":" + zkClientPort, 20_000,
                List.of("-Xms64m", "-Xmx256m", "-Dlogback.configurationFile=" + logback),
                List.of("--max-requests-per-session", "1"));
    }

    private static WardenClient client(GatewayProcess gateway) {
        return new WardenClient(WardenClient.newHttpClient(), List.of(gateway.baseUri()), 0, Duration.ofSeconds(30));
    }
}
