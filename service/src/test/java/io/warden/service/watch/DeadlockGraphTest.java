package io.warden.service.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.api.Deadlock;
import io.warden.service.api.DeadlockAction.NodeRef;
import io.warden.service.api.Mode;
import io.warden.service.api.OnDeadlock;
import io.warden.service.queue.QueueEntry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The wait-for graph's rules on hand-made mirrored queues, with no ZooKeeper (docs/decisions/0013): which entries
 * block which, what Holt's reduction frees, what a cycle is, and which request is the victim.
 */
class DeadlockGraphTest {
    /** The locks of one test, by name, each with its queue in the order the entries are added. */
    private final Map<String, MirroredLock> locks = new LinkedHashMap<>();
    private long sequence;

    /**
     * Queues an entry of request {@code uuid} of {@code session} on {@code lock} (the next sequence: entries go to the
     * back). The token is the sequence, so a later entry is younger. A null session is a plain Curator client's.
     */
    private QueueEntry enqueue(String lock, String session, String uuid, Mode mode, int permits, boolean fail) {
        long seq = ++sequence;
        String prefix = uuid == null ? (mode == Mode.SHARED ? "__READ__" : "__WRIT__") : QueueEntry.prefix(uuid, mode, permits);
        QueueEntry e = QueueEntry.parse(prefix + String.format("%010d", seq)).orElseThrow();
        locks.computeIfAbsent(lock, n -> new MirroredLock(n, 0))
                .load(new MirroredLock.Node(e, seq, session, session == null ? null : "client-" + session, fail));
        return e;
    }

    private QueueEntry x(String lock, String session, String uuid) {
        return enqueue(lock, session, uuid, Mode.EXCLUSIVE, 0, false);
    }

    private QueueEntry xFail(String lock, String session, String uuid) {
        return enqueue(lock, session, uuid, Mode.EXCLUSIVE, 0, true);
    }

    private QueueEntry s(String lock, String session, String uuid) {
        return enqueue(lock, session, uuid, Mode.SHARED, 0, false);
    }

    private QueueEntry sem(String lock, String session, String uuid, int permits) {
        return enqueue(lock, session, uuid, Mode.SEMAPHORE, permits, false);
    }

    /** The graph of the locks with waiters, as the mirror hands them over. */
    private List<DeadlockGraph.Found> find() {
        return DeadlockGraph.find(locks.values().stream().filter(l -> l.nodeCount() > l.holderCount()).toList());
    }

    private static List<String> sessions(DeadlockGraph.Found f) {
        return f.members().stream().map(Deadlock.Member::sessionId).distinct().sorted().toList();
    }

    @Test
    void twoSessionsInOppositeOrder_areOneCycle_withEachWaitingForTheOther() {
        x("a", "s1", "r1a");
        x("b", "s2", "r2b");
        x("b", "s1", "r1b");
        x("a", "s2", "r2a");

        List<DeadlockGraph.Found> found = find();

        assertThat(found).singleElement().satisfies(f -> {
            assertThat(f.members()).extracting(Deadlock.Member::sessionId, Deadlock.Member::request,
                            Deadlock.Member::name, Deadlock.Member::waitsFor)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("s1", "r1b", "b", List.of("s2")),
                            org.assertj.core.groups.Tuple.tuple("s2", "r2a", "a", List.of("s1")));
            assertThat(f.members()).allSatisfy(m -> assertThat(m.onDeadlock()).isEqualTo(OnDeadlock.WAIT));
            assertThat(f.victim()).as("nobody said FAIL: reported and left alone").isNull();
            assertThat(f.checks()).as("every queue node on the cycle's edges").hasSize(4);
        });
    }

    @Test
    void threeSessionsInARing_areOneCycle() {
        x("a", "s1", "h1");
        x("b", "s2", "h2");
        x("c", "s3", "h3");
        x("b", "s1", "w1");
        x("c", "s2", "w2");
        x("a", "s3", "w3");

        assertThat(find()).singleElement().satisfies(f -> assertThat(sessions(f)).containsExactly("s1", "s2", "s3"));
    }

    @Test
    void aChainThatEndsInASessionWaitingForNothing_isNoDeadlock() {
        x("a", "s1", "h1");
        x("b", "s2", "h2");
        x("c", "s3", "h3");
        x("b", "s1", "w1"); // s1 -> s2 -> s3, and s3 waits for nothing
        x("c", "s2", "w2");

        assertThat(find()).isEmpty();
    }

    @Test
    void sharedHolders_blockNobodyShared_andAnExclusiveWaiterOfTwoSharedHoldersWaitsForBoth() {
        s("a", "s1", "h1");
        s("a", "s2", "h2");
        x("b", "s3", "h3");
        s("b", "s1", "w1"); // s1 waits for s3 on b
        x("a", "s3", "w3"); // s3 waits for s1 and s2 on a; s2 waits for nothing: it can let go, but s1 cannot

        assertThat(find()).singleElement().satisfies(f -> {
            assertThat(sessions(f)).containsExactly("s1", "s3");
            assertThat(f.members()).filteredOn(m -> m.sessionId().equals("s3")).singleElement()
                    .satisfies(m -> assertThat(m.waitsFor()).containsExactly("s1"));
        });
    }

    @Test
    void sharedWaiters_behindSharedHolders_areGrantedAtOnce_soNoCycleThroughThem() {
        s("a", "s1", "h1");
        s("a", "s2", "h2"); // both hold: shared
        x("b", "s2", "h3");
        s("b", "s1", "w1"); // s1 waits for s2 on b; s2 waits for nothing

        assertThat(find()).isEmpty();
    }

    @Test
    void semaphoreWaiter_thatAFreeHolderCanLetIn_isNoDeadlock_butIsOnceEveryHolderIsStuck() {
        sem("p", "s1", "h1", 2);
        sem("p", "s2", "h2", 2);
        sem("p", "s3", "w3", 2); // needs one of s1, s2 to go
        x("q", "s3", "h4");
        x("q", "s1", "w1");      // s1 waits for s3; s2 waits for nothing: it can let s3 in

        assertThat(find()).as("a free permit path through s2").isEmpty();

        x("r", "s1", "h5");
        x("r", "s2", "w2");      // now s2 waits for s1 too: no way out

        assertThat(find()).singleElement().satisfies(f -> assertThat(sessions(f)).containsExactly("s1", "s2", "s3"));
    }

    @Test
    void curatorOnlyBlocker_isNeverAMember_andAWaiterBehindItCanGo() {
        x("a", null, "curator1");   // a protected Curator node: no Warden session
        x("a", "s1", "w1");
        x("b", "s1", "h1");
        x("b", "s2", "w2");
        enqueue("c", null, null, Mode.EXCLUSIVE, 0, false); // an unprotected Curator node
        x("c", "s2", "w3");

        assertThat(find()).as("s1 waits only for a client Warden cannot see: treated as able to go").isEmpty();
    }

    /**
     * A session is one thread of control for the graph, but its client may have several: a request waiting behind its
     * own session's entry (an upgrade, or two threads of one session on one lock) is no deadlock, since the entry's
     * thread can let go. Only a cycle through other sessions is one.
     */
    @Test
    void aSessionWaitingBehindItsOwnEntry_isNoDeadlock_evenWithFail() {
        s("a", "s1", "read");
        xFail("a", "s1", "write"); // an upgrade
        x("b", "s2", "held");
        xFail("b", "s2", "waits"); // two threads of s2 on one lock

        assertThat(find()).isEmpty();
    }

    @Test
    void multiLockRequest_holdingOneNameAndWaitingForAnother_isOneRequest_andItsVictimEntriesAreAllOfIt() {
        // m1 (one uuid on a and b) holds a and waits behind s2 on b; s2's r2 waits on a behind m1.
        xFail("a", "s1", "m1");
        x("b", "s2", "h2");
        QueueEntry waitB = xFail("b", "s1", "m1");
        x("a", "s2", "r2");

        assertThat(find()).singleElement().satisfies(f -> {
            assertThat(sessions(f)).containsExactly("s1", "s2");
            assertThat(f.members()).filteredOn(m -> m.sessionId().equals("s1")).singleElement()
                    .satisfies(m -> assertThat(m.name()).as("only its waiting entry is a member").isEqualTo("b"));
            assertThat(f.victim()).isEqualTo(new DeadlockGraph.Victim("s1", "m1"));
            assertThat(f.checks()).contains(new NodeRef("b", waitB.node()));
        });
    }

    @Test
    void multiLockRequest_waitingOnTwoNames_isFreeOnlyWhenBothCanGo() {
        x("a", "s2", "h2");
        x("b", "s3", "h3");
        x("a", "s1", "m1");
        x("b", "s1", "m1");  // m1 waits for s2 on a and s3 on b
        x("c", "s1", "h1");
        x("c", "s3", "w3");  // s3 waits for s1: s1 and s3 are stuck whatever s2 does

        assertThat(find()).singleElement().satisfies(f -> {
            assertThat(sessions(f)).containsExactly("s1", "s3");
            assertThat(f.members()).filteredOn(m -> m.sessionId().equals("s1")).singleElement()
                    .satisfies(m -> assertThat(m.waitsFor()).containsExactly("s3"));
        });
    }

    @Test
    void victim_isTheYoungestFailRequestWaitingInTheCycle_neverAWaitRequest_norOneOutsideIt() {
        x("a", "s1", "h1");
        x("b", "s2", "h2");
        x("c", "s3", "h3");
        xFail("b", "s1", "w1");  // older FAIL
        xFail("c", "s2", "w2");  // younger FAIL: the victim
        x("a", "s3", "w3");      // youngest, but WAIT
        xFail("a", "s4", "w4");  // FAIL and youngest of all, but only waits for the cycle: not a member

        assertThat(find()).singleElement().satisfies(f -> {
            assertThat(sessions(f)).containsExactly("s1", "s2", "s3");
            assertThat(f.victim()).isEqualTo(new DeadlockGraph.Victim("s2", "w2"));
        });
    }

    @Test
    void twoSeparateCycles_areTwoDeadlocks_eachWithItsOwnVictim() {
        x("a", "s1", "h1");
        x("b", "s2", "h2");
        xFail("b", "s1", "w1");
        x("a", "s2", "w2");
        x("c", "s3", "h3");
        x("d", "s4", "h4");
        x("d", "s3", "w3");
        xFail("c", "s4", "w4");

        assertThat(find()).extracting(DeadlockGraph.Found::victim)
                .containsExactly(new DeadlockGraph.Victim("s1", "w1"), new DeadlockGraph.Victim("s4", "w4"));
    }

    @Test
    void largeGraph_ofAHundredThousandWaiters_inOneRing_isComputedWithoutOverflowingTheStack() {
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            x("l" + i, "s" + i, "h" + i);
        }
        for (int i = 0; i < n; i++) {
            x("l" + ((i + 1) % n), "s" + i, "w" + i); // s_i waits for s_{i+1}: one ring through every session
        }

        assertThat(find()).singleElement().satisfies(f -> assertThat(f.members()).hasSize(n));
    }

    @Test
    void largeQueue_ofAHundredThousandWaitersOnOneLock_makesNoDeadlock() {
        List<QueueEntry> all = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            all.add(i % 3 == 0 ? x("hot", "s" + i, "r" + i) : s("hot", "s" + i, "r" + i));
        }

        assertThat(find()).isEmpty();
    }
}
