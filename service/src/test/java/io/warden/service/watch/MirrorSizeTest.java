package io.warden.service.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.api.Mode;
import io.warden.service.lock.QueueEntry;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The heap the watch mirror takes per held lock, measured (docs/operations.md, "Sizing"; issue 10: "about 1.4 KB per
 * held lock on every gateway"). 100,000 locks, each held by one Warden request, fed as the feed feeds them: one
 * transaction per acquire, every string made afresh as parsing a notification's path makes it. A measurement of retained
 * heap after garbage collection (a count of bytes, not a timing); the bound is loose, the figure is printed.
 */
class MirrorSizeTest {
    private static final int LOCKS = 100_000;

    @Test
    void aHeldLockCostsTheMirrorLessThan1KB() {
        LockMirror mirror = new LockMirror();
        long before = usedAfterGc();
        for (int i = 0; i < LOCKS; i++) {
            String uuid = UUID.randomUUID().toString();
            String node = QueueEntry.prefix(uuid, Mode.EXCLUSIVE) + String.format("%010d", i % 7);
            Transaction t = new Transaction(1_000 + i);
            t.sessionsByRequest.put(new String(uuid), String.format("%032x", i * 7919L)); // a session id
            t.clientsByRequest.put(new String(uuid), "client-" + (i % 500));
            t.queueNodeCreated(new String("payments/invoice-" + i), QueueEntry.parse(node).orElseThrow());
            assertThat(mirror.apply(t)).hasSize(2);
        }
        long perLock = (usedAfterGc() - before) / LOCKS;
        System.out.printf("watch mirror: %d bytes of heap per held lock (%d locks)%n", perLock, mirror.lockCount());
        assertThat(mirror.lockCount()).isEqualTo(LOCKS);
        assertThat(perLock).isLessThan(1000);
    }

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
