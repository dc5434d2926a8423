package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leader election against real gateways on a real ZooKeeper: who leads, hand-over, resign and close during a campaign,
 * and the ways a leadership ends (a lost session, a grant ended elsewhere, a local deadline passed), each with its
 * defeat told once.
 */
class ElectionTest {
    private static final String NAME = "jobs/leader";

    private Cell cell;
    private Gateway gw;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
        gw = cell.gateway();
    }

    @AfterEach
    void tearDown() {
        cell.close();
    }

    /** What a listener was told, in order: "elected 17", "defeated 17", ... */
    private static final class Told implements ElectionListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final List<Leadership> terms = new CopyOnWriteArrayList<>();

        @Override
        public void elected(Leadership leadership) {
            terms.add(leadership);
            events.add("elected " + leadership.token());
        }

        @Override
        public void defeated(Leadership leadership) {
            assertThat(leadership.isValid()).as("a defeated term is not valid").isFalse();
            events.add("defeated " + leadership.token());
        }

        long count(String prefix) {
            return events.stream().filter(e -> e.startsWith(prefix)).count();
        }
    }

    /** Waits until no election thread of {@link #NAME} is left; names the stacks of those left when it times out. */
    private static void awaitNoElectionThread() {
        try {
            Cell.await("the election thread ended", () -> Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().equals("warden-election-" + NAME)));
        } catch (AssertionError e) {
            StringBuilder b = new StringBuilder(e.getMessage());
            Thread.getAllStackTraces().forEach((t, stack) -> {
                if (t.getName().equals("warden-election-" + NAME)) {
                    b.append("\n").append(t).append(" ").append(t.getState());
                    for (StackTraceElement f : stack) {
                        b.append("\n    at ").append(f);
                    }
                }
            });
            throw new AssertionError(b.toString(), e);
        }
    }

    private Election candidate(WardenClient client, Told told) {
        Election e = client.election(NAME);
        e.addListener(told);
        return e;
    }

    @Test
    void campaign_alone_isElected_withTheLocksToken_andTheWatchNamesIt() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        Told told = new Told();
        try (Election e = candidate(alice, told)) {
            assertThat(e.isLeader()).isFalse();
            assertThat(e.leadership()).isEmpty();
            e.campaign();
            e.campaign(); // idempotent
            Cell.await("alice leads", e::isLeader);
            Leadership term = e.leadership().orElseThrow();
            assertThat(term.name()).isEqualTo(NAME);
            assertThat(term.isValid()).isTrue();
            var holders = cell.lock(gw, NAME).path("holders");
            assertThat(holders).hasSize(1);
            assertThat(holders.get(0).path("session_id").asText()).isEqualTo(alice.sessionId());
            assertThat(holders.get(0).path("token").asLong()).isEqualTo(term.token());
            Cell.await("the elected listener was told", () -> told.count("elected") == 1);
            Cell.await("the watch names alice", () -> e.leader().isPresent());
            Leader leader = e.leader().orElseThrow();
            assertThat(leader.sessionId()).isEqualTo(alice.sessionId());
            assertThat(leader.clientId()).isEqualTo("alice");
            assertThat(leader.token()).isEqualTo(term.token());
        }
        assertThat(cell.holders(gw, NAME)).as("close released the lock").isZero();
    }

    @Test
    void twoCandidates_oneLeads_resignHandsOver_withALargerToken() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Told toldA = new Told();
        Told toldB = new Told();
        try (Election a = candidate(alice, toldA); Election b = candidate(bob, toldB)) {
            a.campaign();
            Cell.await("alice leads", a::isLeader);
            b.campaign();
            Cell.await("bob is queued behind alice", () -> cell.waiters(gw, NAME) == 1);
            assertThat(b.isLeader()).isFalse();
            long first = a.leadership().orElseThrow().token();

            a.resign();

            assertThat(a.isLeader()).as("not leader once resign returned").isFalse();
            assertThat(a.isCampaigning()).isFalse();
            Cell.await("bob leads", b::isLeader);
            long second = b.leadership().orElseThrow().token();
            assertThat(second).isGreaterThan(first);
            Cell.await("alice was told of her defeat", () -> toldA.count("defeated") == 1);
            assertThat(toldA.events).containsExactly("elected " + first, "defeated " + first);
            Cell.await("alice's watch names bob", () -> a.leader().map(l -> l.token() == second).orElse(false));
            assertThat(a.leader().orElseThrow().sessionId()).isEqualTo(bob.sessionId());

            b.resign();
            assertThat(cell.holders(gw, NAME)).as("alice resigned for good: she does not take it back").isZero();
            Cell.await("nobody leads, says the watch", () -> a.leader().isEmpty());
        }
    }

    @Test
    void twoCandidatesInOneClient_takeTurns() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        try (Election one = alice.election(NAME); Election two = alice.election(NAME)) {
            one.campaign();
            Cell.await("the first leads", one::isLeader);
            two.campaign();
            Cell.await("the second is queued in the same session", () -> cell.waiters(gw, NAME) == 1);
            assertThat(two.isLeader()).isFalse();
            one.resign();
            Cell.await("the second leads", two::isLeader);
            assertThat(one.isLeader()).isFalse();
        }
    }

    @Test
    void resign_duringCampaign_leavesNothingQueued_andNeverLeads() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Told told = new Told();
        Hold held = bob.lock(NAME).acquire(Duration.ofSeconds(5));
        try (Election a = candidate(alice, told)) {
            a.campaign();
            Cell.await("alice is queued", () -> cell.waiters(gw, NAME) == 1);

            a.resign();

            assertThat(cell.waiters(gw, NAME)).as("resign waited for the cancel").isZero();
            held.release();
            assertThat(cell.holders(gw, NAME)).isZero();
            assertThat(a.isLeader()).isFalse();
            assertThat(told.events).isEmpty();

            a.campaign(); // rejoins
            Cell.await("alice leads after rejoining", a::isLeader);
        }
    }

    @Test
    void close_duringCampaign_leavesNothingQueued_andEndsTheThread() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Hold held = bob.lock(NAME).acquire(Duration.ofSeconds(5));
        Election a = alice.election(NAME);
        a.campaign();
        Cell.await("alice is queued", () -> cell.waiters(gw, NAME) == 1);

        a.close();
        a.close();

        assertThat(cell.waiters(gw, NAME)).isZero();
        assertThatThrownBy(a::campaign).isInstanceOf(IllegalStateException.class).hasMessageContaining(NAME);
        awaitNoElectionThread();
        held.release();
        assertThat(cell.holders(gw, NAME)).isZero();
    }

    @Test
    void leadersSessionClosedElsewhere_defeatedOnce_campaignEnds_andTheOtherLeads() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Told toldA = new Told();
        try (Election a = candidate(alice, toldA); Election b = bob.election(NAME)) {
            a.campaign();
            Cell.await("alice leads", a::isLeader);
            b.campaign();
            Cell.await("bob is queued", () -> cell.waiters(gw, NAME) == 1);

            cell.deleteSession(gw, alice.sessionId());

            Cell.await("alice was told of her defeat", () -> toldA.count("defeated") == 1);
            assertThat(a.isLeader()).isFalse();
            Cell.await("bob leads", b::isLeader);
            Cell.await("alice's campaign ended with her session", () -> !a.isCampaigning());
            assertThat(toldA.count("elected")).isEqualTo(1);
            assertThatThrownBy(a::campaign).isInstanceOf(SessionLostException.class);
        }
    }

    @Test
    void grantReleasedElsewhere_defeatsAtOnce_andTheCandidateIsElectedAgainWithANewToken() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        Told told = new Told();
        try (Election a = candidate(alice, told)) {
            a.campaign();
            Cell.await("alice leads", a::isLeader);
            long first = a.leadership().orElseThrow().token();

            cell.release(gw, alice.sessionId(), NAME, first); // an operator's release by token

            Cell.await("alice was told of her defeat", () -> told.count("defeated") == 1);
            Cell.await("alice leads again", () -> told.count("elected") == 2 && a.isLeader());
            long second = a.leadership().orElseThrow().token();
            assertThat(second).isGreaterThan(first);
            assertThat(told.events).containsExactly("elected " + first, "defeated " + first, "elected " + second);
        }
    }

    /**
     * The client's clock jumps past the session's local deadline: leadership ends the same instant (computed, not a
     * timer's), the defeat is told once, and the next acknowledged keepalive lets the candidate lead again with a new
     * term and a larger token (the old term does not come back).
     */
    @Test
    void localDeadlinePassed_notLeaderAtOnce_defeatedOnce_thenANewTerm() {
        AtomicLong skew = new AtomicLong();
        WardenClient alice = cell.track(WardenClient.builder().endpoints(Cell.url(gw)).clientId("alice")
                .sessionTtl(Duration.ofSeconds(3)).ticker(() -> System.nanoTime() + skew.get()).build());
        Told told = new Told();
        try (Election a = candidate(alice, told)) {
            a.campaign();
            Cell.await("alice leads", a::isLeader);
            Leadership first = a.leadership().orElseThrow();

            skew.addAndGet(TimeUnit.SECONDS.toNanos(4));

            assertThat(a.isLeader()).isFalse();
            assertThat(first.isValid()).isFalse();
            assertThatThrownBy(first::checkValid).isInstanceOf(LockOwnershipLostException.class).hasMessageContaining(NAME);
            Cell.await("alice was told of her defeat", () -> told.count("defeated") == 1);
            Cell.await("alice leads again, in a new term", () -> told.count("elected") == 2 && a.isLeader());
            Leadership second = a.leadership().orElseThrow();
            assertThat(second.token()).isGreaterThan(first.token());
            assertThat(first.isValid()).as("the old term stays over").isFalse();
            assertThat(told.count("defeated")).isEqualTo(1);
        }
    }

    /**
     * The leader is cut off from its only gateway, so its session expires and the other candidate is elected: the
     * leader's term had ended by then (its local deadline comes before the service may expire the session), and its
     * defeat is told once.
     */
    @Test
    void leaderCutOff_untilItsSessionExpires_leadsNoLongerWhenTheOtherIsElected() throws Exception {
        try (FaultRelay relay = new FaultRelay(gw.httpPort())) {
            WardenClient alice = cell.client("alice", Duration.ofSeconds(1), relay.url());
            WardenClient bob = cell.client("bob", Cell.url(gw));
            Told toldA = new Told();
            List<Boolean> aliceValidWhenBobElected = new CopyOnWriteArrayList<>();
            try (Election a = candidate(alice, toldA); Election b = bob.election(NAME)) {
                a.campaign();
                Cell.await("alice leads", a::isLeader);
                Leadership aliceTerm = a.leadership().orElseThrow();
                b.addListener(new ElectionListener() {
                    @Override
                    public void elected(Leadership leadership) {
                        aliceValidWhenBobElected.add(aliceTerm.isValid());
                    }
                });
                b.campaign();
                Cell.await("bob is queued", () -> cell.waiters(gw, NAME) == 1);

                relay.cut();

                Cell.await("bob leads (alice's session expired)", b::isLeader);
                Cell.await("bob's elected listener ran", () -> !aliceValidWhenBobElected.isEmpty());
                assertThat(aliceValidWhenBobElected).containsExactly(false);
                assertThat(a.isLeader()).isFalse();
                Cell.await("alice was told of her defeat", () -> toldA.count("defeated") == 1);
                assertThat(b.leadership().orElseThrow().token()).isGreaterThan(aliceTerm.token());
                relay.restore();
            }
        }
    }

    @Test
    void listenerThatThrows_doesNotStopTheElection() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        Told told = new Told();
        try (Election a = alice.election(NAME)) {
            a.addListener(new ElectionListener() {
                @Override
                public void elected(Leadership leadership) {
                    throw new IllegalStateException("a listener's bug");
                }

                @Override
                public void defeated(Leadership leadership) {
                    throw new IllegalStateException("a listener's bug");
                }
            });
            a.addListener(told);
            a.campaign();
            Cell.await("the next listener was told", () -> told.count("elected") == 1);
            assertThat(a.isLeader()).isTrue();
            a.resign();
            Cell.await("the next listener was told of the defeat", () -> told.count("defeated") == 1);
            a.campaign();
            Cell.await("the election thread lives on", () -> told.count("elected") == 2);
        }
    }

    @Test
    void listenerThatBlocks_holdsUpNeitherIsLeaderNorResign() throws Exception {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        CountDownLatch inListener = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        Told told = new Told();
        try (Election a = alice.election(NAME)) {
            a.addListener(new ElectionListener() {
                @Override
                public void elected(Leadership leadership) {
                    inListener.countDown();
                    try {
                        unblock.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            a.addListener(told);
            a.campaign();
            assertThat(inListener.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(a.isLeader()).isTrue();

            a.resign(); // while the election's thread is stuck in the listener

            assertThat(a.isLeader()).isFalse();
            assertThat(cell.holders(gw, NAME)).as("released without the election's thread").isZero();
            unblock.countDown();
            Cell.await("told in order once the listener returned", () -> told.count("defeated") == 1);
            assertThat(told.events).hasSize(2);
        }
    }

    @Test
    void observer_withoutCampaigning_followsTheLeader() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient carol = cell.client("carol", Cell.url(gw));
        try (Election a = alice.election(NAME); Election watching = carol.election(NAME)) {
            assertThat(watching.leader()).isEmpty();
            a.campaign();
            Cell.await("alice leads", a::isLeader);
            long token = a.leadership().orElseThrow().token();
            Cell.await("carol sees alice lead", () -> watching.leader().map(l -> l.token() == token).orElse(false));
            assertThat(watching.leader().orElseThrow().clientId()).isEqualTo("alice");
            assertThat(watching.isLeader()).isFalse();
            a.resign();
            Cell.await("carol sees nobody lead", () -> watching.leader().isEmpty());
        }
    }

    @Test
    void observer_joiningLate_getsTheLeaderFromTheCurrentState() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient carol = cell.client("carol", Cell.url(gw));
        try (Election a = alice.election(NAME)) {
            a.campaign();
            Cell.await("alice leads", a::isLeader);
            long token = a.leadership().orElseThrow().token();
            try (Election late = carol.election(NAME)) {
                Cell.await("carol sees alice lead", () -> late.leader().map(l -> l.token() == token).orElse(false));
                assertThat(late.leader().orElseThrow().sessionId()).isEqualTo(alice.sessionId());
            }
        }
    }

    @Test
    void campaignsAcquireReplyLost_isElectedOnce_withOneQueueNode() throws Exception {
        try (DropReplyProxy proxy = new DropReplyProxy(gw.httpPort(), "POST /v1/acquire", 1)) {
            WardenClient alice = cell.client("alice", proxy.url(), Cell.url(gw));
            try (Election a = alice.election(NAME)) {
                a.campaign();
                Cell.await("alice leads", a::isLeader);
                assertThat(proxy.dropped()).isEqualTo(1);
                assertThat(cell.fx.queueSize(NAME)).as("the retry did not queue twice").isEqualTo(1);
                assertThat(cell.lock(gw, NAME).path("holders").get(0).path("token").asLong())
                        .isEqualTo(a.leadership().orElseThrow().token());
            }
        }
    }

    @Test
    void gatewayCloses_whileLeading_theLeaderLeadsOnThroughTheOther() {
        Gateway g2 = cell.gateway();
        WardenClient alice = cell.client("alice", Duration.ofSeconds(2), Cell.url(gw), Cell.url(g2));
        Told told = new Told();
        try (Election a = candidate(alice, told)) {
            a.campaign();
            Cell.await("alice leads", a::isLeader);
            Cell.await("the elected listener was told", () -> told.count("elected") == 1);

            gw.close();

            Cell.await("the second gateway took the session over", () -> g2.tracksSession(alice.sessionId()));
            Cell.holdsFor("alice leads on for more than a TTL", Duration.ofMillis(2500), a::isLeader);
            assertThat(told.events).hasSize(1);
        }
    }

    @Test
    void clientClosed_endsTheTerm_andTheElection() {
        WardenClient alice = cell.client("alice", Cell.url(gw));
        Told told = new Told();
        Election a = candidate(alice, told);
        a.campaign();
        Cell.await("alice leads", a::isLeader);

        alice.close();

        assertThat(a.isLeader()).isFalse();
        Cell.await("alice was told of her defeat", () -> told.count("defeated") == 1);
        awaitNoElectionThread();
        assertThat(cell.holders(gw, NAME)).isZero();
        assertThatThrownBy(a::campaign).isInstanceOf(IllegalStateException.class);
        a.close();
    }
}
