package io.warden.console.view;

import static io.warden.console.Fixtures.NOW;
import static io.warden.console.Fixtures.holder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LockListingTest {
    private static CellSnapshot cell(String... names) {
        List<LockState> locks = new ArrayList<>();
        long token = 1;
        for (String n : names) {
            locks.add(new LockState(n, List.of(holder("s" + token, "c", Mode.EXCLUSIVE, token, 0, 5))));
            token++;
        }
        Collections.shuffle(locks, new java.util.Random(42));
        return new CellSnapshot(NOW, 9, locks, List.of());
    }

    @Test
    void onlyTheNamespace_sortedByName() {
        LockListing page = LockListing.page(cell("payments/b", "orders/a", "payments/a", "payments/c"), "payments",
                "", "", 50, NOW);
        assertThat(page.rows()).extracting(LockRow::name).containsExactly("payments/a", "payments/b", "payments/c");
        assertThat(page.matching()).isEqualTo(3);
        assertThat(page.nextAfter()).isNull();
    }

    @Test
    void prefix_fullOrRelativeToTheNamespace() {
        CellSnapshot cell = cell("payments/invoice-1", "payments/invoice-2", "payments/refund-1", "paymentsx/invoice-9");
        assertThat(LockListing.page(cell, "payments", "payments/inv", "", 50, NOW).rows())
                .extracting(LockRow::name).containsExactly("payments/invoice-1", "payments/invoice-2");
        assertThat(LockListing.page(cell, "payments", "inv", "", 50, NOW).rows())
                .extracting(LockRow::name).containsExactly("payments/invoice-1", "payments/invoice-2");
        assertThat(LockListing.page(cell, "payments", "payments", "", 50, NOW).matching()).isEqualTo(3);
        assertThat(LockListing.page(cell, "payments", "zzz", "", 50, NOW).matching()).isZero();
        assertThat(LockListing.fullPrefix("payments", " inv ")).isEqualTo("payments/inv");
        assertThat(LockListing.fullPrefix("payments", "payments/")).isEmpty();
    }

    @Test
    void pages_continueAfterTheCursor() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            names.add("ns/lock-" + i);
        }
        CellSnapshot cell = cell(names.toArray(String[]::new));

        LockListing first = LockListing.page(cell, "ns", "", "", 3, NOW);
        assertThat(first.rows()).extracting(LockRow::name).containsExactly("ns/lock-0", "ns/lock-1", "ns/lock-2");
        assertThat(first.nextAfter()).isEqualTo("ns/lock-2");

        LockListing second = LockListing.page(cell, "ns", "", first.nextAfter(), 3, NOW);
        assertThat(second.rows()).extracting(LockRow::name).containsExactly("ns/lock-3", "ns/lock-4", "ns/lock-5");

        LockListing last = LockListing.page(cell, "ns", "", second.nextAfter(), 3, NOW);
        assertThat(last.rows()).extracting(LockRow::name).containsExactly("ns/lock-6");
        assertThat(last.nextAfter()).isNull();
        assertThat(last.matching()).isEqualTo(7);
    }

    @Test
    void exactlyALimit_hasNoNextPage() {
        LockListing page = LockListing.page(cell("ns/a", "ns/b"), "ns", "", "", 2, NOW);
        assertThat(page.rows()).hasSize(2);
        assertThat(page.nextAfter()).isNull();
    }

    @Test
    void limit_defaultsTo50_andAllows1To500() {
        assertThat(LockListing.parseLimit(null)).isEqualTo(50);
        assertThat(LockListing.parseLimit(" ")).isEqualTo(50);
        assertThat(LockListing.parseLimit("1")).isEqualTo(1);
        assertThat(LockListing.parseLimit("500")).isEqualTo(500);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "501", "abc", "2.5", "99999999999"})
    void badLimit_namesLimitAndTheRange(String raw) {
        assertThatThrownBy(() -> LockListing.parseLimit(raw))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.field()).isEqualTo("limit"))
                .hasMessage("limit must be an integer from 1 to 500");
    }
}
