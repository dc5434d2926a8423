package io.warden.console.view;

import static io.warden.console.Fixtures.NOW;
import static io.warden.console.Fixtures.holder;
import static io.warden.console.Fixtures.waiter;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.console.Fixtures;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OverviewTest {
    @Test
    void countsPerNamespace_withDistinctSessions() {
        Overview o = Overview.of(Fixtures.cell(), NOW);

        assertThat(o.namespaces()).containsExactly(
                new NamespaceCount("jobs", 1, 1, 0, 0),         // a direct-mode holder has no session
                new NamespaceCount("orders", 1, 2, 2, 4),
                new NamespaceCount("payments", 2, 2, 3, 3));    // alice and bob hold and wait there; carol waits
        assertThat(o.locks()).isEqualTo(4);
        assertThat(o.holders()).isEqualTo(5);
        assertThat(o.waiters()).isEqualTo(5);
        assertThat(o.sessions()).isEqualTo(7);
        assertThat(o.snapshot().revision()).isEqualTo(4242);
        assertThat(o.snapshot().ageMs()).isEqualTo(1000);
    }

    @Test
    void longestHeld_oldestFirst_andLongestWaiting_byOldestWaiter() {
        Overview o = Overview.of(Fixtures.cell(), NOW);

        assertThat(o.longestHeld()).extracting(LockRow::name)
                .containsExactly("jobs/nightly", "orders/o-1", "payments/invoice-42", "payments/invoice-43");
        assertThat(o.longestWaiting()).extracting(LockRow::name)
                .containsExactly("orders/o-1", "payments/invoice-42", "payments/invoice-43");
        assertThat(o.longestWaiting().get(0).oldestWaiter()).isEqualTo(Fixtures.HOSTILE);
        assertThat(o.longestHeld().get(1).holderClients()).containsExactly("carol", "dave");
    }

    @Test
    void tops_areCutAtTen() {
        List<LockState> locks = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            locks.add(new LockState("ns/l" + i, List.of(
                    holder("h" + i, "c", Mode.EXCLUSIVE, 100 + i, 0, 1000 - i),
                    waiter("w" + i, "c", Mode.EXCLUSIVE, 200 + i, 1, 500 + i))));
        }
        Overview o = Overview.of(new CellSnapshot(NOW, 1, locks, List.of()), NOW);

        assertThat(o.longestHeld()).hasSize(Overview.TOP).first().extracting(LockRow::name).isEqualTo("ns/l0");
        assertThat(o.longestWaiting()).hasSize(Overview.TOP).first().extracting(LockRow::name).isEqualTo("ns/l24");
    }

    @Test
    void emptyCell_hasNothing() {
        Overview o = Overview.of(new CellSnapshot(NOW, 7, List.of(), List.of()), NOW);
        assertThat(o.namespaces()).isEmpty();
        assertThat(o.longestHeld()).isEmpty();
        assertThat(o.longestWaiting()).isEmpty();
    }

    @Test
    void lockRow_withOnlyWaiters_isFree() {
        LockRow row = LockRow.of(new LockState("ns/x", List.of(waiter("w", "c", Mode.SHARED, 3, 0, 10))));
        assertThat(row.mode()).isEqualTo("FREE");
        assertThat(row.heldSince()).isNull();
        assertThat(row.holderSummary()).isEqualTo("—");
        assertThat(row.oldestWaitSince()).isEqualTo(Fixtures.ago(10));
    }

    @Test
    void holderSummary_showsThreeThenACount() {
        LockRow row = LockRow.of(new LockState("ns/x", List.of(
                holder("a", "a", Mode.SHARED, 1, 0, 1), holder("b", "b", Mode.SHARED, 2, 1, 1),
                holder("c", "c", Mode.SHARED, 3, 2, 1), holder("d", "d", Mode.SHARED, 4, 3, 1),
                holder("e", "e", Mode.SHARED, 5, 4, 1))));
        assertThat(row.holderSummary()).isEqualTo("a, b, c +2");
    }
}
