package io.warden.service.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.api.Mode;
import io.warden.service.lock.QueueEntry;
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
        Transaction t = new Transaction(zxid);
        created.forEach((e, session) -> {
            t.queueNodeCreated(LOCK, e);
            if (session != null) {
                t.sessionsByRequest.put(e.id(), session);
                t.clientsByRequest.put(e.id(), "client-" + session);
            }
        });
        for (String node : deleted) {
            t.queueNodeDeleted(LOCK, node);
        }
        return t;
    }

    private static List<WatchEvent.Type> types(List<WatchEvent> events) {
        return events.stream().map(WatchEvent::type).toList();
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
     * Issue 10, finding 12: closing a session that held L and also waited on L, with T waiting behind, was reported per
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
        h.add(new WatchEvent(101, WatchEvent.Type.QUEUED, LOCK, "s", "c", Mode.EXCLUSIVE, 101));
        h.add(new WatchEvent(102, WatchEvent.Type.QUEUED, "ns/b", "s", "c", Mode.EXCLUSIVE, 102));
        assertThat(h.after(99, WatchFilter.of(null, "ns"))).isEmpty();
        assertThat(h.after(100, WatchFilter.of(LOCK, null)).orElseThrow()).extracting(WatchEvent::revision).containsExactly(101L);
        h.add(new WatchEvent(103, WatchEvent.Type.GRANTED, LOCK, "s", "c", Mode.EXCLUSIVE, 101));
        assertThat(h.floor()).isEqualTo(101);
        assertThat(h.after(100, WatchFilter.of(LOCK, null))).as("101 was dropped").isEmpty();
        assertThat(h.after(101, WatchFilter.of(null, "ns")).orElseThrow()).extracting(WatchEvent::revision).containsExactly(102L, 103L);
    }

    @Test
    void prefixFilter_namespaceMeansThatNamespaceOnly() {
        assertThat(WatchFilter.of(null, "ns").matches("ns/a")).isTrue();
        assertThat(WatchFilter.of(null, "ns").matches("nsx/a")).isFalse();
        assertThat(WatchFilter.of(null, "ns/in").matches("ns/invoice-1")).isTrue();
        assertThat(WatchFilter.of(null, "ns/in").matches("ns/a/invoice")).isFalse();
    }
}
