package io.warden.service.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.api.Mode;
import io.warden.service.queue.QueueEntry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The pure part of watches: events derived from queue changes, expiry detection, history bounds. */
class LockMirrorTest {
    private static final String LOCK = "ns/a";

    private static QueueEntry entry(String id, Mode mode, long seq) {
        return QueueEntry.parse(QueueEntry.prefix(id, mode) + String.format("%010d", seq)).orElseThrow();
    }

    /** A transaction at {@code zxid}: {@code created} entries with their sessions, then {@code deleted} node names. */
    private static Transaction txn(long zxid, Map<QueueEntry, String> created, String... deleted) {
        return txn(zxid, created, java.util.Arrays.stream(deleted).map(n -> QueueEntry.parse(n).orElseThrow()).toList());
    }

    private static Transaction txn(long zxid, Map<QueueEntry, String> created, List<QueueEntry> deleted) {
        Transaction t = new Transaction(zxid);
        created.forEach((e, session) -> {
            t.queueNodeCreated(LOCK, e);
            if (session != null) {
                t.sessionsByRequest.put(e.id(), session);
                t.clientsByRequest.put(e.id(), "client-" + session);
            }
        });
        for (QueueEntry e : deleted) {
            t.queueNodeDeleted(LOCK, e);
        }
        return t;
    }

    private static List<WatchEvent.Type> types(List<WatchEvent> events) {
        return events.stream().map(WatchEvent::type).toList();
    }

    @Test
    void queueNodeDataChanged_isRevokeRequested_forThatNode_andChangesNoHolder() {
        LockMirror m = new LockMirror();
        QueueEntry h = entry("h", Mode.EXCLUSIVE, 1);
        QueueEntry w = entry("w", Mode.EXCLUSIVE, 2);
        m.apply(txn(10, Map.of(h, "s1")));
        m.apply(txn(11, Map.of(w, "s2")));
        Transaction revoke = new Transaction(12);
        revoke.queueNodeChanged(LOCK, h);

        List<WatchEvent> events = m.apply(revoke);

        assertThat(events).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(WatchEvent.Type.REVOKE_REQUESTED);
            assertThat(e.sessionId()).isEqualTo("s1");
            assertThat(e.token()).isEqualTo(10);
            assertThat(e.revision()).isEqualTo(12);
        });
        // The holder still holds: its release is RELEASED and grants the waiter.
        assertThat(types(m.apply(txn(13, Map.of(), h.node())))).containsExactly(WatchEvent.Type.RELEASED,
                WatchEvent.Type.GRANTED);
    }

    @Test
    void dataChangeOfANodeDeletedInTheSameTransaction_orUnknown_makesNoRevokeEvent() {
        LockMirror m = new LockMirror();
        QueueEntry h = entry("h", Mode.EXCLUSIVE, 1);
        m.apply(txn(10, Map.of(h, "s1")));
        Transaction t = txn(11, Map.of(), h.node());
        t.queueNodeChanged(LOCK, h);
        t.queueNodeChanged(LOCK, entry("ghost", Mode.EXCLUSIVE, 7));

        assertThat(types(m.apply(t))).containsExactly(WatchEvent.Type.RELEASED);
    }

    @Test
    void sharedRun_isGrantedTogether_andAnExclusiveWaitsForItToEnd() {
        LockMirror m = new LockMirror();
        QueueEntry r1 = entry("r1", Mode.SHARED, 1);
        QueueEntry r2 = entry("r2", Mode.SHARED, 2);
        QueueEntry w = entry("w", Mode.EXCLUSIVE, 3);
        assertThat(types(m.apply(txn(10, Map.of(r1, "s1"))))).containsExactly(WatchEvent.Type.QUEUED, WatchEvent.Type.GRANTED);
        assertThat(types(m.apply(txn(11, Map.of(r2, "s2"))))).containsExactly(WatchEvent.Type.QUEUED, WatchEvent.Type.GRANTED);
        assertThat(types(m.apply(txn(12, Map.of(w, "s3"))))).containsExactly(WatchEvent.Type.QUEUED);
        assertThat(types(m.apply(txn(13, Map.of(), r1.node())))).containsExactly(WatchEvent.Type.RELEASED);
        List<WatchEvent> last = m.apply(txn(14, Map.of(), r2.node()));
        assertThat(types(last)).containsExactly(WatchEvent.Type.RELEASED, WatchEvent.Type.GRANTED);
        assertThat(last.get(1).sessionId()).isEqualTo("s3");
        assertThat(last.get(1).clientId()).isEqualTo("client-s3");
        assertThat(last.get(1).token()).isEqualTo(12);
        assertThat(last.get(1).revision()).isEqualTo(14);
    }

    @Test
    void deletionsInTheTransactionOfAnExpiryMarker_areExpired_andLockDelayedHoldsToo() {
        LockMirror m = new LockMirror();
        QueueEntry held = entry("h", Mode.EXCLUSIVE, 1);
        QueueEntry waiting = entry("x", Mode.EXCLUSIVE, 2);
        QueueEntry other = entry("o", Mode.EXCLUSIVE, 3);
        m.apply(txn(10, Map.of(held, "gone")));
        m.apply(txn(11, Map.of(waiting, "gone")));
        m.apply(txn(12, Map.of(other, "live")));
        Transaction expiry = txn(20, Map.of(), waiting.node());
        expiry.expiring.add("gone");
        expiry.lockDelaysCreated.add("gone");
        assertThat(types(m.apply(expiry))).containsExactly(WatchEvent.Type.EXPIRED);
        Transaction delayEnds = txn(30, Map.of(), held.node());
        delayEnds.lockDelaysDeleted.add("gone");
        assertThat(types(m.apply(delayEnds))).as("lock-delay ends").containsExactly(WatchEvent.Type.EXPIRED, WatchEvent.Type.GRANTED);
        assertThat(types(m.apply(txn(31, Map.of(), other.node())))).containsExactly(WatchEvent.Type.RELEASED);
    }

    /**
     * Closing a session that held L and also waited on L, with T waiting behind, was reported per
     * deletion as RELEASED(hold), GRANTED(its own wait), RELEASED(its own wait), GRANTED(T): a request that never held
     * was GRANTED. Derived from the state before and after the transaction it is what the close reply says: the hold
     * released, the wait cancelled, T granted.
     */
    @Test
    void aTransactionRemovingAHoldAndTheWaitBehindIt_neverGrantsTheWait() {
        LockMirror m = new LockMirror();
        QueueEntry hold = entry("hold", Mode.EXCLUSIVE, 1);
        QueueEntry ownWait = entry("own", Mode.EXCLUSIVE, 2);
        QueueEntry other = entry("t", Mode.EXCLUSIVE, 3);
        m.apply(txn(10, Map.of(hold, "s")));
        m.apply(txn(11, Map.of(ownWait, "s")));
        m.apply(txn(12, Map.of(other, "t")));
        List<WatchEvent> close = m.apply(txn(20, Map.of(), hold.node(), ownWait.node()));
        assertThat(close).extracting(e -> e.type() + " " + e.token()).containsExactly("RELEASED 10", "CANCELLED 11", "GRANTED 12");
        assertThat(close).allSatisfy(e -> assertThat(e.revision()).isEqualTo(20));
    }

    /**
     * Every change re-parsed and re-sorted the lock's whole queue, so at 10,000 waiters each
     * change cost 10,000 parsed names (and their garbage). Counted in bytes the applying thread allocates (a count, not a
     * timing): 1,000 changes at the tail of a 10,000-waiter queue must cost about what they cost on a short queue.
     */
    @Test
    void aChangeToAQueueOf10000Waiters_doesNotCostTheWholeQueue() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        LockMirror m = new LockMirror();
        m.apply(txn(1, Map.of(entry("holder", Mode.EXCLUSIVE, 0), "h")));
        for (int i = 1; i <= 10_000; i++) {
            m.apply(txn(1 + i, Map.of(entry("w" + i, Mode.EXCLUSIVE, i), "s" + i)));
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 1000; i++) {
            long seq = 10_001 + i;
            QueueEntry late = entry("late" + i, Mode.EXCLUSIVE, seq);
            assertThat(types(m.apply(txn(20_000 + 2 * i, Map.of(late, "x"))))).containsExactly(WatchEvent.Type.QUEUED);
            assertThat(types(m.apply(txn(20_001 + 2 * i, Map.of(), late.node())))).containsExactly(WatchEvent.Type.CANCELLED);
        }
        long perChange = (threads.getCurrentThreadAllocatedBytes() - before) / 2000;
        System.out.printf("bytes allocated per change of a 10,001-entry queue: %d%n", perChange);
        assertThat(perChange).as("bytes allocated per change").isLessThan(20_000);
    }

    /** A transaction at {@code zxid} that creates one node on {@code lock} for {@code session}. */
    private static Transaction create(long zxid, String lock, QueueEntry e, String session) {
        Transaction t = new Transaction(zxid);
        t.queueNodeCreated(lock, e);
        t.sessionsByRequest.put(e.id(), session);
        return t;
    }

    private static Transaction delete(long zxid, String lock, QueueEntry e) {
        Transaction t = new Transaction(zxid);
        t.queueNodeDeleted(lock, e);
        return t;
    }

    /**
     * A session's RESYNC (its Java client's watch of its own holds, after a rebuild or a resume past the history) costs
     * that session's locks, not the cell's: with 10,000 locks of other sessions, the view of a session with three looks
     * at three. Before, it walked every lock and each one's queue (at 200,000 locks and thousands of SDK sessions
     * resuming after a rebuild, minutes of the hub's one thread). The index follows releases, cancels and rebuilds.
     */
    @Test
    void aSessionsView_looksAtItsOwnLocksOnly_andFollowsItsQueueNodes() {
        LockMirror m = new LockMirror();
        long zxid = 1;
        for (int i = 0; i < 10_000; i++) {
            m.apply(create(zxid++, "big/l" + i, entry("o" + i, Mode.EXCLUSIVE, 0), "other" + i));
        }
        QueueEntry own1 = entry("m1", Mode.EXCLUSIVE, 0);
        QueueEntry own2 = entry("m2", Mode.SHARED, 0);
        QueueEntry wait = entry("m3", Mode.EXCLUSIVE, 1);
        m.apply(create(zxid++, "a/x", own1, "me"));
        m.apply(create(zxid++, "z/y", own2, "me"));
        m.apply(create(zxid++, "big/l5", wait, "me"));
        WatchFilter mine = WatchFilter.of(null, null, "me");

        long before = m.locksExamined();
        List<io.warden.service.api.LockView> views = m.views(mine, zxid);
        assertThat(views).extracting(io.warden.service.api.LockView::name).containsExactly("a/x", "big/l5", "z/y");
        assertThat(m.locksExamined() - before).as("locks looked at for the session's view").isEqualTo(3);
        assertThat(m.views(WatchFilter.of(null, "big", "me"), zxid)).extracting(io.warden.service.api.LockView::name)
                .containsExactly("big/l5");
        assertThat(m.views(WatchFilter.of("z/y", null, "me"), zxid)).hasSize(1);
        assertThat(m.views(WatchFilter.of("big/l6", null, "me"), zxid)).isEmpty();

        m.apply(delete(zxid++, "a/x", own1));   // released
        m.apply(delete(zxid++, "big/l5", wait)); // cancelled
        assertThat(m.views(mine, zxid)).extracting(io.warden.service.api.LockView::name).containsExactly("z/y");
        m.apply(delete(zxid++, "z/y", own2));
        assertThat(m.views(mine, zxid)).isEmpty();
        assertThat(m.sessionCount()).as("sessions indexed: the others only").isEqualTo(10_000);

        // a rebuild indexes what it reads
        m.load(new LockMirror.Snapshot(Map.of("r/one", new LockMirror.LockRead(zxid,
                List.of(new MirroredLock.Node(own1, zxid, "me", "client-me")))), Set.of()));
        assertThat(m.views(mine, zxid)).extracting(io.warden.service.api.LockView::name).containsExactly("r/one");
        assertThat(m.sessionCount()).isEqualTo(1);
    }

    @Test
    void afterARebuild_olderChangesAreIgnored() {
        LockMirror m = new LockMirror();
        QueueEntry a = entry("a", Mode.EXCLUSIVE, 1);
        m.load(new LockMirror.Snapshot(Map.of(LOCK, new LockMirror.LockRead(50,
                List.of(new MirroredLock.Node(a, 40, "s", "client-s")))), Set.of()));
        assertThat(m.apply(txn(40, Map.of(a, "s")))).isEmpty();
        assertThat(m.apply(txn(45, Map.of(), "_c_zz-__WRIT__0000000000"))).isEmpty();
        assertThat(m.views(WatchFilter.of(LOCK, null), 50).get(0).holders()).hasSize(1);
        assertThat(types(m.apply(txn(51, Map.of(), a.node())))).containsExactly(WatchEvent.Type.RELEASED);
        assertThat(m.views(WatchFilter.of(null, "ns"), 51)).isEmpty();
    }

    @Test
    void history_coversResumesFromItsFloor_only() {
        EventHistory h = new EventHistory(2);
        h.reset(100);
        h.add(batch(new WatchEvent(101, WatchEvent.Type.QUEUED, LOCK, "s", "c", Mode.EXCLUSIVE, 101)));
        h.add(batch(new WatchEvent(102, WatchEvent.Type.QUEUED, "ns/b", "s", "c", Mode.EXCLUSIVE, 102)));
        assertThat(h.after(99, WatchFilter.of(null, "ns"))).isEmpty();
        assertThat(revisions(h.after(100, WatchFilter.of(LOCK, null)).orElseThrow())).containsExactly(101L);
        h.add(batch(new WatchEvent(103, WatchEvent.Type.GRANTED, LOCK, "s", "c", Mode.EXCLUSIVE, 101)));
        assertThat(h.floor()).isEqualTo(101);
        assertThat(h.after(100, WatchFilter.of(LOCK, null))).as("101 was dropped").isEmpty();
        assertThat(revisions(h.after(101, WatchFilter.of(null, "ns")).orElseThrow())).containsExactly(102L, 103L);
    }

    @Test
    void history_keepsTransactionsWhole_andReplaysOnlyTheCoveredEventsOfEach() {
        EventHistory h = new EventHistory(3);
        h.reset(100);
        h.add(batch(new WatchEvent(101, WatchEvent.Type.RELEASED, LOCK, "s", "c", Mode.EXCLUSIVE, 90),
                new WatchEvent(101, WatchEvent.Type.RELEASED, "ns/b", "s", "c", Mode.EXCLUSIVE, 91)));
        h.add(batch(new WatchEvent(102, WatchEvent.Type.QUEUED, "ns/b", "t", "c", Mode.EXCLUSIVE, 102),
                new WatchEvent(102, WatchEvent.Type.GRANTED, "ns/b", "t", "c", Mode.EXCLUSIVE, 102)));
        assertThat(h.floor()).as("a transaction is dropped whole").isEqualTo(101);
        assertThat(h.size()).isEqualTo(2);
        List<EventHistory.Replay> replay = h.after(101, WatchFilter.of("ns/b", null)).orElseThrow();
        assertThat(replay).hasSize(1);
        assertThat(replay.get(0).selected()).as("all of it").isNull();
        h.add(batch(new WatchEvent(103, WatchEvent.Type.RELEASED, LOCK, "s", "c", Mode.EXCLUSIVE, 95),
                new WatchEvent(103, WatchEvent.Type.RELEASED, "ns/b", "t", "c", Mode.EXCLUSIVE, 102)));
        assertThat(h.after(102, WatchFilter.of("ns/b", null)).orElseThrow().get(0).selected()).containsExactly(1);
    }

    private static EventBatch batch(WatchEvent... events) {
        return new EventBatch(events[0].revision(), List.of(events));
    }

    private static List<Long> revisions(List<EventHistory.Replay> replay) {
        return replay.stream().flatMap(r -> {
            List<WatchEvent> all = r.batch().events();
            return r.selected() == null ? all.stream() : java.util.Arrays.stream(r.selected()).mapToObj(all::get);
        }).map(WatchEvent::revision).toList();
    }

    @Test
    void prefixFilter_namespaceMeansThatNamespaceOnly() {
        assertThat(WatchFilter.of(null, "ns").matches("ns/a")).isTrue();
        assertThat(WatchFilter.of(null, "ns").matches("nsx/a")).isFalse();
        assertThat(WatchFilter.of(null, "ns/in").matches("ns/invoice-1")).isTrue();
        assertThat(WatchFilter.of(null, "ns/in").matches("ns/a/invoice")).isFalse();
    }

    /**
     * A lock whose queue the mirror's full read could not list (too many entries for one ZooKeeper
     * reply) is loaded as a count. Who holds it is not known, so none of its events are published and its view says it
     * is too large; a session's view shows it too (the session may have entries there). Deletions of entries the mirror
     * did not have count down; once the last is gone the queue is exact again, the lock is named as such, and its events
     * flow.
     */
    @Test
    void aLockReadAsTooLarge_publishesNothing_untilTheEntriesItDidNotListAreGone() {
        LockMirror m = new LockMirror(3);
        QueueEntry old1 = entry("old1", Mode.SHARED, 1);
        QueueEntry old2 = entry("old2", Mode.SHARED, 2);
        m.load(new LockMirror.Snapshot(Map.of(LOCK, new LockMirror.LockRead(5, List.of(), 2)), Set.of()));
        assertThat(m.entriesIfLarge(LOCK)).isEqualTo(-1); // 2 entries: below the report threshold of 3
        assertThat(m.views(WatchFilter.name(io.warden.service.api.LockName.parse(LOCK)), 5))
                .singleElement().satisfies(v -> {
                    assertThat(v.tooLarge()).isTrue();
                    assertThat(v.tooLargeEntries()).isEqualTo(2);
                    assertThat(v.mode()).isNull();
                });
        assertThat(m.views(WatchFilter.of(null, null, "nobody"), 5)).extracting(io.warden.service.api.LockView::name)
                .containsExactly(LOCK);

        QueueEntry late = entry("late", Mode.EXCLUSIVE, 3);
        assertThat(m.apply(txn(6, Map.of(late, "s")))).as("who holds it is not known").isEmpty();
        assertThat(m.entriesIfLarge(LOCK)).isEqualTo(3);
        assertThat(m.apply(txn(7, Map.of(), old1.node()))).isEmpty();
        assertThat(m.drainCompleted()).isEmpty();
        assertThat(m.apply(txn(8, Map.of(), old2.node()))).as("the transaction that completes it publishes nothing").isEmpty();
        assertThat(m.drainCompleted()).containsExactly(LOCK);
        assertThat(m.views(WatchFilter.name(io.warden.service.api.LockName.parse(LOCK)), 8)).singleElement().satisfies(v -> {
            assertThat(v.tooLarge()).isFalse();
            assertThat(v.mode()).isEqualTo(io.warden.service.api.LockView.LockMode.EXCLUSIVE);
            assertThat(v.holders()).extracting(h -> h.sessionId()).containsExactly("s");
        });
        assertThat(types(m.apply(txn(9, Map.of(), late.node())))).containsExactly(WatchEvent.Type.RELEASED);
        assertThat(m.lockCount()).isZero();
    }

    /** A too-large lock whose node is removed (only when it has no children left) is gone, and exact again. */
    @Test
    void aLockReadAsTooLarge_whoseNodeIsRemoved_isGone() {
        LockMirror m = new LockMirror();
        m.load(new LockMirror.Snapshot(Map.of(LOCK, new LockMirror.LockRead(5, List.of(), 7)), Set.of()));
        Transaction reaped = new Transaction(9);
        reaped.lockNodesDeleted.add(LOCK);
        assertThat(m.apply(reaped)).isEmpty();
        assertThat(m.drainCompleted()).containsExactly(LOCK);
        assertThat(m.lockCount()).isZero();
    }
}
