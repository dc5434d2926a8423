package io.warden.service.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.api.Mode;
import io.warden.service.lock.QueueEntry;
import io.warden.service.lock.QueueNodeData;
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

    private static QueueNodeData data(String session, Mode mode) {
        return new QueueNodeData(session, "client-" + session, "req", mode);
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
        assertThat(types(m.created(LOCK, r1, 10, 10, data("s1", Mode.SHARED)))).containsExactly(WatchEvent.Type.QUEUED, WatchEvent.Type.GRANTED);
        assertThat(types(m.created(LOCK, r2, 11, 11, data("s2", Mode.SHARED)))).containsExactly(WatchEvent.Type.QUEUED, WatchEvent.Type.GRANTED);
        assertThat(types(m.created(LOCK, w, 12, 12, data("s3", Mode.EXCLUSIVE)))).containsExactly(WatchEvent.Type.QUEUED);
        assertThat(types(m.deleted(LOCK, r1.node(), 13))).containsExactly(WatchEvent.Type.RELEASED);
        List<WatchEvent> last = m.deleted(LOCK, r2.node(), 14);
        assertThat(types(last)).containsExactly(WatchEvent.Type.RELEASED, WatchEvent.Type.GRANTED);
        assertThat(last.get(1).sessionId()).isEqualTo("s3");
        assertThat(last.get(1).token()).isEqualTo(12);
        assertThat(last.get(1).revision()).isEqualTo(14);
    }

    @Test
    void deletionsInTheTransactionOfAnExpiryMarker_areExpired_andLockDelayedHoldsToo() {
        LockMirror m = new LockMirror();
        QueueEntry held = entry("h", Mode.EXCLUSIVE, 1);
        QueueEntry waiting = entry("x", Mode.EXCLUSIVE, 2);
        QueueEntry other = entry("o", Mode.EXCLUSIVE, 3);
        m.created(LOCK, held, 10, 10, data("gone", Mode.EXCLUSIVE));
        m.created(LOCK, waiting, 11, 11, data("gone", Mode.EXCLUSIVE));
        m.created(LOCK, other, 12, 12, data("live", Mode.EXCLUSIVE));
        m.expiring("gone", 20);
        m.lockDelayCreated("gone");
        assertThat(types(m.deleted(LOCK, waiting.node(), 20))).containsExactly(WatchEvent.Type.EXPIRED);
        assertThat(types(m.deleted(LOCK, held.node(), 30))).as("lock-delay ends").containsExactly(WatchEvent.Type.EXPIRED, WatchEvent.Type.GRANTED);
        m.lockDelayDeleted("gone");
        assertThat(types(m.deleted(LOCK, other.node(), 31))).containsExactly(WatchEvent.Type.RELEASED);
    }

    @Test
    void afterARebuild_olderChangesAreIgnored() {
        LockMirror m = new LockMirror();
        QueueEntry a = entry("a", Mode.EXCLUSIVE, 1);
        m.load(new LockMirror.Snapshot(Map.of(LOCK, new LockMirror.LockRead(50,
                List.of(new MirroredLock.Node(a, 40, data("s", Mode.EXCLUSIVE))))), Set.of()));
        assertThat(m.created(LOCK, a, 40, 40, data("s", Mode.EXCLUSIVE))).isEmpty();
        assertThat(m.deleted(LOCK, "_c_zz-__WRIT__0000000000", 45)).isEmpty();
        assertThat(m.views(WatchFilter.of(LOCK, null), 50).get(0).holders()).hasSize(1);
        assertThat(types(m.deleted(LOCK, a.node(), 51))).containsExactly(WatchEvent.Type.RELEASED);
        assertThat(m.views(WatchFilter.of(null, "ns"), 51)).isEmpty();
    }

    @Test
    void history_coversResumesFromItsFloor_only() {
        EventHistory h = new EventHistory(2);
        h.reset(100);
        h.add(new WatchEvent(101, WatchEvent.Type.QUEUED, LOCK, "s", Mode.EXCLUSIVE, 101));
        h.add(new WatchEvent(102, WatchEvent.Type.QUEUED, "ns/b", "s", Mode.EXCLUSIVE, 102));
        assertThat(h.after(99, WatchFilter.of(null, "ns"))).isEmpty();
        assertThat(h.after(100, WatchFilter.of(LOCK, null)).orElseThrow()).extracting(WatchEvent::revision).containsExactly(101L);
        h.add(new WatchEvent(103, WatchEvent.Type.GRANTED, LOCK, "s", Mode.EXCLUSIVE, 101));
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
