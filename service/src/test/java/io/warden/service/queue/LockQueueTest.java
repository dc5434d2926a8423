package io.warden.service.queue;

import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class LockQueueTest {

    /** The rule of contract §2.5 in its plainest form: grant from the head while it can. */
    private static List<Integer> modelHolders(List<Mode> queue) {
        List<Integer> holders = new ArrayList<>();
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i) == Mode.EXCLUSIVE) {
                if (i == 0) {
                    holders.add(0);
                }
                break;
            }
            holders.add(i);
        }
        return holders;
    }

    private static List<String> names(List<Mode> modes, int firstSeq) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < modes.size(); i++) {
            names.add(QueueEntry.prefix("id" + i, modes.get(i)) + String.format("%010d", firstSeq + i));
        }
        return names;
    }

    /**
     * The watch mirror keeps its queues sorted and counts holders from the head ({@link LockQueue#holderCount}): it
     * must agree with {@link LockQueue#holders()} for every queue, damaged ones included (sequences
     * at or past the limit, negative, or tied).
     */
    @Test
    void holderCount_fromTheSortedHead_agreesWithHolders_onRandomQueuesWithDamage() {
        java.util.Random random = new java.util.Random(10);
        long[] odd = {LockQueue.SEQUENCE_LIMIT, -5, -2147483648L};
        for (int round = 0; round < 20_000; round++) {
            int n = random.nextInt(9);
            List<String> names = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Mode mode = random.nextInt(3) == 0 ? Mode.EXCLUSIVE : Mode.SHARED;
                long seq = random.nextInt(10) == 0 ? odd[random.nextInt(odd.length)] : random.nextInt(12);
                names.add(QueueEntry.prefix("id" + i, mode) + (seq < 0 ? Long.toString(seq) : String.format("%010d", seq)));
            }
            LockQueue q = LockQueue.of(names);
            List<QueueEntry> sorted = new ArrayList<>(q.entries());
            assertThat(LockQueue.holderCount(sorted.iterator())).as("%s", names).isEqualTo(q.holders().size());
        }
    }

    @Test
    void holders_matchTheModel_forEveryQueueUpToEightEntries() {
        for (int n = 0; n <= 8; n++) {
            for (int bits = 0; bits < (1 << n); bits++) {
                List<Mode> modes = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    modes.add((bits >> i & 1) == 1 ? Mode.EXCLUSIVE : Mode.SHARED);
                }
                List<String> children = names(modes, 7);
                List<String> shuffled = new ArrayList<>(children);
                Collections.reverse(shuffled);
                LockQueue q = LockQueue.of(shuffled);
                List<Integer> expected = modelHolders(modes);

                assertThat(q.entries()).extracting(QueueEntry::node).containsExactlyElementsOf(children);
                for (int i = 0; i < n; i++) {
                    assertThat(q.holds(i)).as("entry %d of %s", i, modes).isEqualTo(expected.contains(i));
                    Optional<QueueEntry> blocker = q.blocker(i);
                    if (expected.contains(i)) {
                        assertThat(blocker).isEmpty();
                    } else {
                        int b = q.indexOf(blocker.orElseThrow().node());
                        assertThat(b).isLessThan(i);
                        if (modes.get(i) == Mode.EXCLUSIVE) {
                            assertThat(b).as("an EXCLUSIVE waiter watches the entry just before it").isEqualTo(i - 1);
                        } else {
                            assertThat(modes.get(b)).isEqualTo(Mode.EXCLUSIVE);
                            for (int k = b + 1; k < i; k++) {
                                assertThat(modes.get(k)).as("nearest EXCLUSIVE").isEqualTo(Mode.SHARED);
                            }
                        }
                    }
                }
                assertThat(q.holders()).hasSize(expected.size());
                assertThat(q.holders().size() + q.waiters().size()).isEqualTo(n);
                LockView.LockMode mode = n == 0 ? LockView.LockMode.FREE
                        : modes.get(0) == Mode.EXCLUSIVE ? LockView.LockMode.EXCLUSIVE : LockView.LockMode.SHARED;
                assertThat(q.mode()).isEqualTo(mode);
            }
        }
    }

    @Test
    void order_isBySequenceNumber_notByName() {
        LockQueue q = LockQueue.of(List.of("_c_zzz-__WRIT__0000000002", "_c_aaa-__WRIT__0000000010", "_c_mmm-__READ__0000000001"));
        assertThat(q.entries()).extracting(QueueEntry::sequence).containsExactly(1L, 2L, 10L);
        assertThat(q.holders()).extracting(QueueEntry::id).containsExactly("mmm");
    }

    @Test
    void parse_readsCuratorAndWardenNames_andIgnoresLongerLockSegments() {
        assertThat(QueueEntry.parse("_c_8c1d7f2e-1b2a-4c7e-9a0b-123456789abc-__WRIT__0000000042")).hasValueSatisfying(e -> {
            assertThat(e.mode()).isEqualTo(Mode.EXCLUSIVE);
            assertThat(e.sequence()).isEqualTo(42);
            assertThat(e.id()).isEqualTo("8c1d7f2e-1b2a-4c7e-9a0b-123456789abc");
        });
        assertThat(QueueEntry.parse("__READ__0000000003")).hasValueSatisfying(e -> {
            assertThat(e.mode()).isEqualTo(Mode.SHARED);
            assertThat(e.id()).isNull();
        });
        assertThat(QueueEntry.parse("invoice-42")).isEmpty();
        assertThat(QueueEntry.parse("_c_x-__WRIT__")).isEmpty();
        assertThat(QueueEntry.parse("_c_x-__WRIT__12ab")).isEmpty();
        assertThat(LockQueue.of(List.of("child-lock", "_c_a-__WRIT__0000000001")).entries()).hasSize(1);
    }

    /*
     * ZooKeeper's sequence suffix is the parent's cversion, an int. At 2^31-1 it stops growing
     * (every new child gets 2147483647) or, under concurrent creates, wraps to negative numbers. Ties were broken by
     * node name, so a newer request whose random id sorts first went ahead of the holder: two EXCLUSIVE holders.
     */
    @Test
    void tiedSequences_neverHold_soANewerRequestCannotSortAheadOfTheHolder() {
        LockQueue q = LockQueue.of(List.of("_c_ffff-__WRIT__2147483647", "_c_0000-__WRIT__2147483647"));

        assertThat(q.holds(0)).as("the first of two tied entries").isFalse();
        assertThat(q.holds(1)).isFalse();
        assertThat(q.holders()).isEmpty();
        assertThat(q.waiters()).hasSize(2);
        assertThat(q.mode()).isEqualTo(LockView.LockMode.FREE);
    }

    @Test
    void tiedSequences_anywhereInTheQueue_neverHold_butTheEntriesBeforeThemDo() {
        LockQueue q = LockQueue.of(List.of("_c_r1-__READ__0000000001", "_c_bb-__READ__0000000002", "_c_aa-__READ__0000000002",
                "_c_r3-__READ__0000000003"));

        assertThat(q.holders()).extracting(QueueEntry::id).containsExactly("r1");
        for (int i = 1; i < 4; i++) {
            assertThat(q.holds(i)).as("entry %d", i).isFalse();
            assertThat(q.blocker(i)).as("a blocked entry watches a neighbour, so it looks again when the tie goes").isPresent();
        }
    }

    @Test
    void sequencePastTheLimit_sortsAfterTheRest_andNeverHolds() {
        // Wrapped: created after everything else, but "-2147483648" would sort first.
        LockQueue q = LockQueue.of(List.of("_c_new-__WRIT__-2147483648", "_c_old-__READ__2147483000"));

        assertThat(q.entries()).extracting(QueueEntry::id).containsExactly("old", "new");
        assertThat(q.holders()).extracting(QueueEntry::id).containsExactly("old");
        assertThat(q.blocker(1)).map(QueueEntry::id).hasValue("old");
    }

    @Test
    void sequenceAtTheLimit_neverHolds_evenAlone() {
        LockQueue q = LockQueue.of(List.of("_c_x-__WRIT__2147483647"));

        assertThat(q.holds(0)).isFalse();
        assertThat(q.holders()).isEmpty();
        assertThat(q.blocker(0)).isEmpty();
    }
}
