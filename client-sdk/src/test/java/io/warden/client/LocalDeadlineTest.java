package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LocalDeadlineTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    @Test
    void margin_is500ppmOfTheTtl_plusTheSafetyMargin() {
        assertThat(LocalDeadline.marginNanos(10_000 * MS, 100 * MS)).isEqualTo(105 * MS);
        assertThat(LocalDeadline.marginNanos(120_000 * MS, 100 * MS)).isEqualTo(160 * MS);
        assertThat(LocalDeadline.marginNanos(1, 0)).as("rounded up").isEqualTo(1);
    }

    @Test
    void deadline_countsFromTheSendTime_minusTheMargin() {
        long sent = 7_000 * MS;
        assertThat(LocalDeadline.after(sent, 10_000 * MS, 105 * MS)).isEqualTo(sent + 9_895 * MS);
    }

    @Test
    void deadline_isNeverBeforeTheSendTime() {
        assertThat(LocalDeadline.after(5, 50, 100)).isEqualTo(5);
    }

    @Test
    void deadline_worksAcrossTickerOverflow() {
        long sent = Long.MAX_VALUE - MS;
        long deadline = LocalDeadline.after(sent, 10_000 * MS, 105 * MS);
        assertThat(deadline - sent).isEqualTo(9_895 * MS);
    }
}
