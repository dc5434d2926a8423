package io.warden.console.view;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.console.model.CellInfo;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class CellsViewTest {
    private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");
    private static final CellInfo DEFAULT = new CellInfo("default", "zk1:2181", "/warden", true, null, List.of("ops"));
    private static final CellInfo B = new CellInfo("b", "zkb:2181", null, false, "not connected", List.of("pay", "web"));

    @Test
    void aNamespaceIsServedByTheCellItIsRoutedTo_elseByDefault() {
        List<CellInfo> cells = List.of(DEFAULT, B);
        assertThat(CellsView.servingCell(cells, "pay")).isEqualTo(B);
        assertThat(CellsView.servingCell(cells, "web")).isEqualTo(B);
        assertThat(CellsView.servingCell(cells, "ops")).isEqualTo(DEFAULT);
        assertThat(CellsView.servingCell(cells, "payments")).as("no prefix match").isEqualTo(DEFAULT);
        assertThat(CellsView.servingCell(List.of(B), "orders")).as("no default listed").isNull();
    }

    @Test
    void single_isTheDefaultCellAlone() {
        AsOf asOf = new AsOf(NOW, -1, NOW);
        assertThat(new CellsView(List.of(DEFAULT), asOf).single()).isTrue();
        assertThat(new CellsView(List.of(DEFAULT, B), asOf).single()).isFalse();
        assertThat(new CellsView(List.of(DEFAULT, B), asOf).notServing()).containsExactly(B);
    }
}
