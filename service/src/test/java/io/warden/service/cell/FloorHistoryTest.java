package io.warden.service.cell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The token floor as a pure rule: token = czxid + the largest floor raised before the node (docs/decisions/0005). */
class FloorHistoryTest {
    @Test
    void withoutARaise_theTokenIsTheCzxid() {
        assertThat(FloorHistory.NONE.token(4294967301L)).isEqualTo(4294967301L);
        assertThat(FloorHistory.NONE.current()).isZero();
    }

    @Test
    void aRaise_appliesToNodesMadeAfterIt_andNeverChangesAnOlderNodesToken() {
        FloorHistory h = FloorHistory.NONE.with(100, 1_000);
        assertThat(h.token(99)).isEqualTo(99);
        assertThat(h.token(100)).as("the raise's own zxid: no queue node is made in it").isEqualTo(100);
        assertThat(h.token(101)).isEqualTo(1_101);
        assertThat(h.current()).isEqualTo(1_000);
    }

    @Test
    void aLowerRaise_lowersNothing() {
        FloorHistory h = FloorHistory.NONE.with(100, 1_000).with(200, 10);
        assertThat(h.floorFor(250)).isEqualTo(1_000);
        assertThat(h.current()).isEqualTo(1_000);
        FloorHistory sameRaiseTwice = FloorHistory.NONE.with(100, 5).with(100, 7).with(100, 6);
        assertThat(sameRaiseTwice.floorFor(101)).isEqualTo(7);
    }

    @Test
    void raisesLearnedInAnyOrder_giveTheSameTokens() {
        FloorHistory a = FloorHistory.NONE.with(10, 5).with(30, 50).with(20, 7);
        FloorHistory b = FloorHistory.NONE.with(20, 7).with(10, 5).with(30, 50);
        assertThat(a).isEqualTo(b);
        assertThat(a.floorFor(25)).isEqualTo(7);
    }

    /** For every name, tokens grow with czxids, across any raises: against a brute-force model. */
    @Test
    void tokensGrowWithCzxids_andMatchTheLargestFloorRaisedBefore_randomised() {
        Random random = new Random(20261203);
        for (int run = 0; run < 200; run++) {
            FloorHistory h = FloorHistory.NONE;
            TreeMap<Long, Long> raises = new TreeMap<>();
            for (int r = random.nextInt(6); r > 0; r--) {
                long zxid = 1 + random.nextInt(1_000);
                long floor = random.nextInt(3) == 0 ? random.nextInt(100) : random.nextInt(1_000_000);
                h = h.with(zxid, floor);
                raises.merge(zxid, floor, Math::max);
            }
            long last = -1;
            for (long czxid = 1; czxid <= 1_100; czxid++) {
                long expected = 0;
                for (var e : raises.headMap(czxid, false).entrySet()) {
                    expected = Math.max(expected, e.getValue());
                }
                assertThat(h.floorFor(czxid)).isEqualTo(expected);
                long token = h.token(czxid);
                assertThat(token).as("tokens grow with czxids").isGreaterThan(last);
                last = token;
            }
        }
    }

    @Test
    void aFloorPastTheBound_isRefused_soTokensStayPositive() {
        assertThatThrownBy(() -> FloorHistory.NONE.with(1, FloorHistory.MAX_FLOOR + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token floor");
        FloorHistory max = FloorHistory.NONE.with(1, FloorHistory.MAX_FLOOR);
        assertThat(max.token((1L << 62) - 1)).isPositive();
    }
}
