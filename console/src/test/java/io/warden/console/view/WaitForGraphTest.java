package io.warden.console.view;

import static io.warden.console.Fixtures.ALICE;
import static io.warden.console.Fixtures.BOB;
import static io.warden.console.Fixtures.CAROL;
import static io.warden.console.Fixtures.FRANK;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.console.Fixtures;
import io.warden.console.model.Mode;
import io.warden.console.model.WaitFor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The console's reading of the gateway's graph: edges and deadlocks are the gateway's, taken as they are; chains and
 * blocking sessions follow from them.
 */
class WaitForGraphTest {
    private long token = 1;

    /** W waits on {@code lock}, blocked by B's holding entry. */
    private WaitFor.Edge edge(String w, String b, String lock) {
        return new WaitFor.Edge(w, "client-" + w, lock, Mode.EXCLUSIVE, b, "client-" + b, Mode.EXCLUSIVE, token++, true);
    }

    private static WaitFor.Member member(String session, String lock, boolean fail, String... waitsFor) {
        return new WaitFor.Member(session, "client-" + session, "req-" + session, "uuid-" + session, lock, Mode.EXCLUSIVE,
                fail, List.of(waitsFor));
    }

    private static WaitFor graph(List<WaitFor.Edge> edges, WaitFor.Cycle... cycles) {
        return new WaitFor(Instant.EPOCH, 7, false, edges, edges.size(), List.of(cycles));
    }

    private static List<String> path(List<WaitForGraph.Edge> edges) {
        List<String> p = new ArrayList<>();
        for (WaitForGraph.Edge e : edges) {
            p.add(e.waiter() + ">" + e.blocker());
        }
        return p;
    }

    @Test
    void theGatewaysDeadlocks_areShownAsTheyAre_withWaitAndFail() {
        WaitForGraph g = WaitForGraph.of(Fixtures.waitFor());

        assertThat(g.deadlocked()).isTrue();
        assertThat(g.cycles()).singleElement().satisfies(c -> {
            assertThat(c.sessions()).containsExactly(ALICE, BOB);
            assertThat(c.breakable()).isTrue();
            assertThat(c.members()).extracting(WaitFor.Member::sessionId, WaitFor.Member::fail)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(ALICE, false),
                            org.assertj.core.groups.Tuple.tuple(BOB, true));
            assertThat(c.sinceRevision()).isEqualTo(4201);
        });
        assertThat(g.edgeCount()).isEqualTo(6);
    }

    @Test
    void aCycleOfEdgesTheGatewayDoesNotCallADeadlock_isNone() {
        // a and b wait for each other by the edges, but the gateway found a way out (a semaphore's free permit path).
        WaitForGraph g = WaitForGraph.of(graph(List.of(edge("a", "b", "ns/x"), edge("b", "a", "ns/y"),
                edge("c", "a", "ns/z"))));

        assertThat(g.deadlocked()).isFalse();
        assertThat(g.chains()).as("no chain runs into a deadlock").allSatisfy(ch -> assertThat(ch.endsInDeadlock()).isFalse());
    }

    @Test
    void chains_startAtSessionsNobodyWaitsOn_andFollowTheLongestWay() {
        // d -> c -> b -> a ; e -> a
        WaitForGraph g = WaitForGraph.of(graph(List.of(edge("d", "c", "ns/c"), edge("c", "b", "ns/b"),
                edge("b", "a", "ns/a"), edge("e", "a", "ns/a"))));

        assertThat(g.chains()).singleElement().satisfies(ch -> {
            assertThat(path(ch.edges())).containsExactly("d>c", "c>b", "b>a");
            assertThat(ch.endsInDeadlock()).isFalse();
            assertThat(ch.cut()).isFalse();
        });
        assertThat(g.blockers()).singleElement().satisfies(b -> {
            assertThat(b.sessionId()).isEqualTo("a");
            assertThat(b.direct()).isEqualTo(2);
            assertThat(b.total()).isEqualTo(4);
        });
    }

    @Test
    void aChainIntoADeadlock_saysSo() {
        WaitForGraph g = WaitForGraph.of(Fixtures.waitFor());

        // frank waits behind eve, eve for carol's shared hold, carol behind bob's queued entry; bob is deadlocked.
        assertThat(g.chains()).singleElement().satisfies(ch -> {
            assertThat(path(ch.edges())).containsExactly(FRANK + ">" + Fixtures.EVE, Fixtures.EVE + ">" + CAROL,
                    CAROL + ">" + BOB);
            assertThat(ch.endsInDeadlock()).isTrue();
            assertThat(ch.edges().get(2).blockerHolds()).as("carol waits behind bob's queued entry").isFalse();
        });
    }

    @Test
    void aVeryLongChain_doesNotOverflowTheStack_andIsCut() {
        int n = 100_000;
        List<WaitFor.Edge> edges = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            edges.add(edge("s" + i, "s" + (i + 1), "ns/l" + i));
        }
        WaitForGraph g = WaitForGraph.of(graph(edges));

        assertThat(g.chains()).singleElement().satisfies(ch -> {
            assertThat(ch.edges()).hasSize(WaitForGraph.MAX_CHAIN);
            assertThat(ch.cut()).isTrue();
        });
    }

    @Test
    void aDeadlockOfOne_anUpgrade_isShownWithItsOneMember() {
        WaitFor.Cycle upgrade = new WaitFor.Cycle(List.of(member("u", "ns/x", true, "u")), 3, 10);
        WaitForGraph g = WaitForGraph.of(graph(List.of(edge("u", "u", "ns/x")), upgrade));

        assertThat(g.cycles()).singleElement().satisfies(c -> {
            assertThat(c.sessions()).containsExactly("u");
            assertThat(c.members()).singleElement().satisfies(m -> assertThat(m.waitsFor()).containsExactly("u"));
        });
        assertThat(g.blockers()).isEmpty();
    }
}
