package io.warden.service.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.queue.QueueEntry;
import io.warden.service.zk.CellPaths;
import java.util.UUID;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * The heap the watch mirror takes per held lock, measured (docs/operations.md, "Sizing": "about 1.4 KB per
 * held lock on every gateway"), and the mirror's own estimate of it ({@link LockMirror#estimatedBytes()}, what
 * watch-mirror-bytes bounds) checked against the measure. Locks each held by one Warden request, fed as the feed feeds
 * them: one transaction per acquire, every string made afresh as parsing a notification's path makes it. A measurement
 * of retained heap after garbage collection (a count of bytes, not a timing); the bounds are loose, the figures printed.
 */
class MirrorSizeTest {
    private static final int LOCKS = 100_000;

    /** Feeds {@code locks} held locks named by {@code names} and returns the measured heap per lock. */
    private static long perLock(LockMirror mirror, int locks, IntFunction<String> names) {
        long before = usedAfterGc();
        for (int i = 0; i < locks; i++) {
            String uuid = UUID.randomUUID().toString();
            String node = QueueEntry.prefix(uuid, Mode.EXCLUSIVE) + String.format("%010d", i % 7);
            // the lock's name as the feed has it: parsed from the queue node's parent path
            String name = CellPaths.lockName(CellPaths.lock(LockName.parse(names.apply(i)))).toString();
            Transaction t = new Transaction(1_000 + i);
            t.sessionsByRequest.put(new String(uuid), String.format("%032x", i * 7919L)); // a session id
            t.clientsByRequest.put(new String(uuid), "client-" + (i % 500));
            t.queueNodeCreated(name, QueueEntry.parse(node).orElseThrow());
            assertThat(mirror.apply(t)).hasSize(2);
        }
        return (usedAfterGc() - before) / locks;
    }

    @Test
    void aHeldLockCostsTheMirrorLessThan1KB_andItsEstimateFollowsTheMeasure() {
        LockMirror mirror = new LockMirror();
        long perLock = perLock(mirror, LOCKS, i -> "payments/invoice-" + i);
        long estimate = mirror.estimatedBytes() / LOCKS;
        System.out.printf("watch mirror: %d bytes of heap per held lock (%d locks), estimated %d%n", perLock,
                mirror.lockCount(), estimate);
        assertThat(mirror.lockCount()).isEqualTo(LOCKS);
        assertThat(perLock).isLessThan(1000);
        assertThat(estimate).as("the estimate, against %d measured", perLock).isBetween(perLock * 9 / 10, perLock * 3 / 2);
    }

    /**
     * With 512-character names a gateway's heap grew by about 2.0 KB per lock, where docs/operations.md said
     * 590 bytes (true for short names only). The mirror's part grows by about one byte per character of the name (one
     * String instance serves the map key, the lock and the session index); the estimate counts the name.
     */
    @Test
    void aHeldLockWith512CharacterNames_andTheEstimateFollowsTheMeasure() {
        int locks = 20_000;
        LockMirror mirror = new LockMirror();
        long perLock = perLock(mirror, locks, LONG_NAME);
        long estimate = mirror.estimatedBytes() / locks;
        System.out.printf("watch mirror: %d bytes of heap per held lock with 512-character names (%d locks), estimated %d%n",
                perLock, mirror.lockCount(), estimate);
        assertThat(LONG_NAME.apply(7)).hasSize(512);
        assertThat(perLock).isLessThan(2000);
        assertThat(estimate).as("the estimate, against %d measured", perLock).isBetween(perLock * 9 / 10, perLock * 3 / 2);
    }

    /** watch-mirror-bytes: the mirror says it is over its bound once its estimate passes it, and not before. */
    @Test
    void theMirror_isOverItsBound_onceItsEstimatePassesIt() {
        long bound = 100_000;
        LockMirror mirror = new LockMirror(Integer.MAX_VALUE, bound);
        int locks = 0;
        while (!mirror.overBudget()) {
            assertThat(mirror.estimatedBytes()).isLessThanOrEqualTo(bound);
            perLockNoMeasure(mirror, locks++);
        }
        assertThat(mirror.estimatedBytes()).isGreaterThan(bound);
        System.out.printf("watch mirror: over a bound of %d bytes at %d held locks%n", bound, locks);
        assertThat(locks).as("about %d bytes a lock", bound / locks).isBetween(120, 200);
        mirror.clear();
        assertThat(mirror.estimatedBytes()).isZero();
        assertThat(mirror.overBudget()).isFalse();
    }

    private static void perLockNoMeasure(LockMirror mirror, int i) {
        String uuid = UUID.randomUUID().toString();
        Transaction t = new Transaction(1_000 + i);
        t.sessionsByRequest.put(uuid, String.format("%032x", i * 7919L));
        t.clientsByRequest.put(uuid, "client-" + (i % 500));
        t.queueNodeCreated("payments/invoice-" + i, QueueEntry.parse(QueueEntry.prefix(uuid, Mode.EXCLUSIVE) + "0000000000").orElseThrow());
        mirror.apply(t);
    }

    /** A name of exactly 512 characters: a namespace and four long segments, the lock's number in the last. */
    private static final IntFunction<String> LONG_NAME = i -> {
        String head = "payments/" + "a".repeat(125) + "/" + "b".repeat(125) + "/" + "c".repeat(125) + "/";
        String number = "-" + i;
        return head + "d".repeat(512 - head.length() - number.length()) + number;
    };

    private static long usedAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }
}
