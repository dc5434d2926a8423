package io.warden.service.queue;

import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Semaphore entries among lock entries: the grant rule against a plain model over every queue of up to seven entries
 * of four kinds (EXCLUSIVE, SHARED, semaphores of 2 and of 3 permits), and the properties the engine leans on.
 */
class LockQueueSemaphoreTest {
    /** A kind of entry: a mode and, for SEMAPHORE, its permits. */
    private record Kind(Mode mode, int permits) {
        static final Kind[] ALL = {new Kind(Mode.EXCLUSIVE, 0), new Kind(Mode.SHARED, 0), new Kind(Mode.SEMAPHORE, 2),
                new Kind(Mode.SEMAPHORE, 3)};
    }

    private static String node(int i, Kind kind, long seq) {
        return QueueEntry.prefix("00000000-0000-0000-0000-00000000000" + (i % 10), kind.mode(), kind.permits())
                + String.format("%010d", seq);
    }

    private static List<String> names(List<Kind> kinds) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < kinds.size(); i++) {
            names.add(node(i, kinds.get(i), 10 + i));
        }
        return names;
    }

    /** The plain model: an entry holds when it would be granted on arrival with everything before it in place. */
    private static boolean modelHolds(List<Kind> q, int i) {
        Kind k = q.get(i);
        for (int j = 0; j < i; j++) {
            Kind before = q.get(j);
            boolean compatible = switch (k.mode()) {
                case EXCLUSIVE -> false;
                case SHARED -> before.mode() == Mode.SHARED;
                case SEMAPHORE -> before.equals(k);
            };
            if (!compatible) {
                return false;
            }
        }
        return k.mode() != Mode.SEMAPHORE || i < k.permits();
    }

    private static List<List<Kind>> allQueues(int maxLength) {
        List<List<Kind>> all = new ArrayList<>();
        all.add(List.of());
        for (int n = 1; n <= maxLength; n++) {
            int count = (int) Math.pow(Kind.ALL.length, n);
            for (int code = 0; code < count; code++) {
                List<Kind> q = new ArrayList<>();
                for (int i = 0, c = code; i < n; i++, c /= Kind.ALL.length) {
                    q.add(Kind.ALL[c % Kind.ALL.length]);
                }
                all.add(q);
            }
        }
        return all;
    }

    @Test
    void semaphoreNames_parseBack_andAreWritersToCurator() {
        String uuid = "0b9e4f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
        QueueEntry e = QueueEntry.parse(QueueEntry.prefix(uuid, Mode.SEMAPHORE, 1024) + "0000000042").orElseThrow();
        assertThat(e).isEqualTo(new QueueEntry("_c_" + uuid + "-sem1024-__WRIT__0000000042", 42, Mode.SEMAPHORE, uuid, 1024));
        // What Curator's InterProcessReadWriteLock looks at: the write mark, and the sequence after it.
        assertThat(e.node()).contains("__WRIT__").endsWith("__WRIT__0000000042").startsWith("_c_" + uuid + "-");
        // Not a semaphore segment: kept in the id, an EXCLUSIVE entry as before.
        for (String odd : List.of("-sem1", "-sem1025", "-sem02", "-sem", "-semx", "-sem12345")) {
            QueueEntry other = QueueEntry.parse("_c_" + uuid + odd + "-__WRIT__0000000001").orElseThrow();
            assertThat(other.mode()).as(odd).isEqualTo(Mode.EXCLUSIVE);
            assertThat(other.id()).as(odd).isEqualTo(uuid + odd);
        }
        assertThat(QueueEntry.parse("_c_" + uuid + "-sem4-__READ__0000000001").orElseThrow().mode()).isEqualTo(Mode.SHARED);
    }

    @Test
    void holders_matchTheModel_forEveryQueueOfFourKindsUpToSevenEntries() {
        for (List<Kind> kinds : allQueues(7)) {
            LockQueue q = LockQueue.of(names(kinds));
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < kinds.size(); i++) {
                if (modelHolds(kinds, i)) {
                    expected.add(i);
                }
            }
            for (int i = 0; i < kinds.size(); i++) {
                assertThat(q.holds(i)).as("entry %d of %s", i, kinds).isEqualTo(expected.contains(i));
            }
            assertThat(q.holders()).as("%s", kinds).extracting(e -> q.indexOf(e.node())).containsExactlyElementsOf(expected);
            assertThat(LockQueue.holderCount(q.entries().iterator())).as("%s", kinds).isEqualTo(expected.size());
            // Holders are of one kind, and never more than a semaphore's permits.
            List<QueueEntry> holders = q.holders();
            assertThat(holders.stream().map(e -> e.permits()).distinct().count()).as("%s", kinds).isLessThanOrEqualTo(1);
            if (!holders.isEmpty() && holders.get(0).mode() == Mode.SEMAPHORE) {
                assertThat(holders.size()).as("%s", kinds).isLessThanOrEqualTo(holders.get(0).permits());
                assertThat(q.mode()).isEqualTo(LockView.LockMode.SEMAPHORE);
            }
            if (holders.size() > 1) {
                assertThat(holders).as("%s", kinds).noneMatch(e -> e.mode() == Mode.EXCLUSIVE);
            }
        }
    }

    /**
     * No missed wake-up: a blocked entry that waits for one entry cannot come to hold while that entry stays, whatever
     * else before it goes; an entry that waits for a count holds once enough go, and then for any of them.
     */
    @Test
    void aBlockedEntry_holdsOnlyAfterItsBlockerGoes_orWaitsForACount() {
        for (List<Kind> kinds : allQueues(6)) {
            LockQueue q = LockQueue.of(names(kinds));
            for (int i = 0; i < kinds.size(); i++) {
                if (q.holds(i)) {
                    assertThat(q.blocker(i)).isEmpty();
                    continue;
                }
                Optional<QueueEntry> blocker = q.blocker(i);
                assertThat(blocker.isPresent()).as("entry %d of %s", i, kinds).isNotEqualTo(q.waitsForCount(i));
                for (int removed = 0; removed < (1 << i); removed++) {
                    List<String> rest = new ArrayList<>();
                    boolean blockerRemoved = false;
                    for (int j = 0; j < kinds.size(); j++) {
                        if (j < i && (removed >> j & 1) == 1) {
                            blockerRemoved |= blocker.isPresent() && blocker.get().node().equals(q.entries().get(j).node());
                        } else {
                            rest.add(q.entries().get(j).node());
                        }
                    }
                    LockQueue after = LockQueue.of(rest);
                    boolean holdsAfter = after.holds(after.indexOf(q.entries().get(i).node()));
                    if (blocker.isPresent() && !blockerRemoved) {
                        assertThat(holdsAfter).as("entry %d of %s, removed %s", i, kinds, Integer.toBinaryString(removed))
                                .isFalse();
                    }
                    if (q.waitsForCount(i)) {
                        int permits = kinds.get(i).permits();
                        assertThat(holdsAfter).as("entry %d of %s, removed %s", i, kinds, Integer.toBinaryString(removed))
                                .isEqualTo(i - Integer.bitCount(removed) < permits);
                    }
                }
            }
        }
    }

    /**
     * An entry that holds keeps holding while entries before it go and new ones come after it: what a request holding
     * some of its names while it waits for others relies on.
     */
    @Test
    void anEntryThatHolds_keepsHolding_asOthersGoAndCome() {
        for (List<Kind> kinds : allQueues(5)) {
            LockQueue q = LockQueue.of(names(kinds));
            for (int i = 0; i < kinds.size(); i++) {
                if (!q.holds(i)) {
                    continue;
                }
                for (int removed = 0; removed < (1 << kinds.size()); removed++) {
                    if ((removed >> i & 1) == 1) {
                        continue;
                    }
                    for (Kind added : Kind.ALL) {
                        List<String> rest = new ArrayList<>();
                        for (int j = 0; j < kinds.size(); j++) {
                            if ((removed >> j & 1) == 0) {
                                rest.add(q.entries().get(j).node());
                            }
                        }
                        rest.add(node(9, added, 99));
                        LockQueue after = LockQueue.of(rest);
                        assertThat(after.holds(after.indexOf(q.entries().get(i).node())))
                                .as("entry %d of %s, removed %s, added %s", i, kinds, Integer.toBinaryString(removed), added)
                                .isTrue();
                    }
                }
            }
        }
    }

    @Test
    void wouldHoldAtOnce_agreesWithHoldingAfterTheAppend() {
        for (List<Kind> kinds : allQueues(5)) {
            LockQueue q = LockQueue.of(names(kinds));
            for (Kind k : Kind.ALL) {
                List<String> with = new ArrayList<>(names(kinds));
                String mine = node(9, k, 99);
                with.add(mine);
                LockQueue after = LockQueue.of(with);
                assertThat(q.wouldHoldAtOnce(k.mode(), k.permits())).as("%s then %s", kinds, k)
                        .isEqualTo(after.holds(after.indexOf(mine)));
            }
        }
    }

    @Test
    void agreesWithHead_tellsKinds() {
        LockQueue q = LockQueue.of(names(List.of(new Kind(Mode.SEMAPHORE, 2), new Kind(Mode.SEMAPHORE, 2),
                new Kind(Mode.SEMAPHORE, 3), new Kind(Mode.SHARED, 0))));
        assertThat(List.of(q.agreesWithHead(0), q.agreesWithHead(1), q.agreesWithHead(2), q.agreesWithHead(3)))
                .containsExactly(true, true, false, false);
        LockQueue locks = LockQueue.of(names(List.of(new Kind(Mode.EXCLUSIVE, 0), new Kind(Mode.SHARED, 0))));
        assertThat(locks.agreesWithHead(1)).isTrue();
    }
}
