package io.warden.console.view;

import static io.warden.console.Fixtures.holder;
import static io.warden.console.Fixtures.waiter;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.console.Fixtures;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import io.warden.console.model.QueuedRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WaitForGraphTest {
    private long token = 1;

    /** A lock {@code name} held by {@code holders} (EXCLUSIVE when one, SHARED when more) and waited on by {@code waiters}. */
    private LockState lock(String name, List<String> holders, String... waiters) {
        List<QueuedRequest> queue = new ArrayList<>();
        Mode mode = holders.size() > 1 ? Mode.SHARED : Mode.EXCLUSIVE;
        for (String h : holders) {
            queue.add(holder(h, "client-" + h, mode, token++, queue.size(), 60));
        }
        for (String w : waiters) {
            queue.add(waiter(w, "client-" + w, Mode.EXCLUSIVE, token++, queue.size(), 30));
        }
        return new LockState(name, queue);
    }

    private static List<String> path(List<WaitForGraph.Edge> edges) {
        List<String> p = new ArrayList<>();
        for (WaitForGraph.Edge e : edges) {
            p.add(e.waiter() + ">" + e.holder());
        }
        return p;
    }

    @Test
    void aWaiter_pointsAtEveryHolder_withBothModes() {
        WaitForGraph g = WaitForGraph.of(List.of(lock("ns/x", List.of("a", "b"), "c")));

        assertThat(g.edges()).extracting(WaitForGraph.Edge::waiter, WaitForGraph.Edge::holder, WaitForGraph.Edge::lock,
                        WaitForGraph.Edge::waiterMode, WaitForGraph.Edge::holderMode)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("c", "a", "ns/x", Mode.EXCLUSIVE, Mode.SHARED),
                        org.assertj.core.groups.Tuple.tuple("c", "b", "ns/x", Mode.EXCLUSIVE, Mode.SHARED));
        assertThat(g.cycles()).isEmpty();
        assertThat(g.chains()).isEmpty(); // one step only: c waits on sessions that wait for nothing
        assertThat(g.blockers()).extracting(WaitForGraph.Blocker::sessionId).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void twoSessions_eachWaitingOnTheOther_areADeadlock() {
        WaitForGraph g = WaitForGraph.of(List.of(lock("ns/x", List.of("a"), "b"), lock("ns/y", List.of("b"), "a")));

        assertThat(g.deadlocked()).isTrue();
        assertThat(g.cycles()).singleElement().satisfies(c -> {
            assertThat(c.members()).containsExactly("a", "b");
            assertThat(path(c.edges())).containsExactly("a>b", "b>a");
        });
        assertThat(g.blockers()).isEmpty();
    }

    @Test
    void aThreeCycle_isShownInOrder_fromItsSmallestSession() {
        WaitForGraph g = WaitForGraph.of(List.of(
                lock("ns/1", List.of("s1"), "s3"), lock("ns/2", List.of("s2"), "s1"), lock("ns/3", List.of("s3"), "s2")));

        assertThat(g.cycles()).singleElement().satisfies(c -> assertThat(path(c.edges()))
                .containsExactly("s1>s2", "s2>s3", "s3>s1"));
    }

    @Test
    void waitingOnALockItHoldsItself_isADeadlockOfOne() {
        WaitForGraph g = WaitForGraph.of(List.of(lock("ns/x", List.of("a"), "a")));

        assertThat(g.cycles()).singleElement().satisfies(c -> {
            assertThat(c.members()).containsExactly("a");
            assertThat(path(c.edges())).containsExactly("a>a");
        });
    }

    @Test
    void aKnot_listsAllMembers_andOneShortestCycle() {
        // a<->b and b<->c: one strongly connected component of three
        WaitForGraph g = WaitForGraph.of(List.of(
                lock("ns/a", List.of("a"), "b"), lock("ns/b", List.of("b"), "a", "c"), lock("ns/c", List.of("c"), "b")));

        assertThat(g.cycles()).singleElement().satisfies(c -> {
            assertThat(c.members()).containsExactly("a", "b", "c");
            assertThat(path(c.edges())).containsExactly("a>b", "b>a");
        });
    }

    @Test
    void chains_startAtSessionsNobodyWaitsOn_andFollowTheLongestWay() {
        // d -> c -> b -> a (a waits for nothing); e -> b
        WaitForGraph g = WaitForGraph.of(List.of(
                lock("ns/a", List.of("a"), "b"), lock("ns/b", List.of("b"), "c", "e"), lock("ns/c", List.of("c"), "d")));

        assertThat(g.cycles()).isEmpty();
        assertThat(g.chains()).extracting(ch -> path(ch.edges())).containsExactly(
                List.of("d>c", "c>b", "b>a"),
                List.of("e>b", "b>a"));
        assertThat(g.chains()).allSatisfy(ch -> {
            assertThat(ch.endsInDeadlock()).isFalse();
            assertThat(ch.cut()).isFalse();
        });
        assertThat(g.blockers()).singleElement().satisfies(b -> {
            assertThat(b.sessionId()).isEqualTo("a");
            assertThat(b.direct()).isEqualTo(1);
            assertThat(b.total()).isEqualTo(4);
        });
    }

    @Test
    void aChainIntoADeadlock_saysSo() {
        // x waits on a; a and b deadlock
        WaitForGraph g = WaitForGraph.of(List.of(
                lock("ns/x", List.of("a"), "b", "x"), lock("ns/y", List.of("b"), "a")));

        assertThat(g.chains()).singleElement().satisfies(ch -> {
            assertThat(path(ch.edges())).containsExactly("x>a");
            assertThat(ch.endsInDeadlock()).isTrue();
        });
    }

    @Test
    void aVeryLongChain_doesNotOverflowTheStack_andIsCut() {
        List<LockState> locks = new ArrayList<>();
        int n = 20_000;
        for (int i = 0; i < n; i++) {
            locks.add(lock("ns/l" + i, List.of("s" + i), "s" + (i + 1)));
        }
        locks.add(lock("ns/back", List.of("s" + n), "s0")); // and close it into one huge cycle

        WaitForGraph g = WaitForGraph.of(locks);

        assertThat(g.cycles()).singleElement().satisfies(c -> assertThat(c.members()).hasSize(n + 1));

        locks.remove(locks.size() - 1); // open again: one chain of n steps, shown cut
        WaitForGraph open = WaitForGraph.of(locks);
        assertThat(open.cycles()).isEmpty();
        assertThat(open.chains()).singleElement().satisfies(ch -> {
            assertThat(ch.edges()).hasSize(WaitForGraph.MAX_CHAIN);
            assertThat(ch.cut()).isTrue();
        });
        assertThat(open.blockers()).singleElement().satisfies(b -> assertThat(b.total()).isEqualTo(n));
    }

    @Test
    void directModeNodes_takeNoPart() {
        LockState lock = new LockState("ns/x", List.of(
                new QueuedRequest(null, "curator", null, Mode.EXCLUSIVE, 1, 0, true, Fixtures.ago(5), null),
                waiter("w", "c", Mode.EXCLUSIVE, 2, 1, 3)));
        assertThat(WaitForGraph.of(List.of(lock)).edges()).isEmpty();
    }

    @Test
    void theFixtureCell_hasTheAliceBobDeadlock_andChainsIntoIt() {
        WaitForGraph g = WaitForGraph.of(Fixtures.cell().locks());

        assertThat(g.cycles()).singleElement().satisfies(c ->
                assertThat(c.members()).containsExactly(Fixtures.ALICE, Fixtures.BOB));
        assertThat(g.chains()).hasSize(2).allSatisfy(ch -> assertThat(ch.endsInDeadlock()).isTrue());
        assertThat(g.blockers()).extracting(WaitForGraph.Blocker::sessionId).containsExactly(Fixtures.DAVE);
    }
}
