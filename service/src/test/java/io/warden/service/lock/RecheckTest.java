package io.warden.service.lock;

import io.warden.service.time.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** A held call's own looks: when they come, how many wait at once, and none after the call is answered. */
class RecheckTest {
    private final ManualClock clock = new ManualClock();
    private final AtomicInteger looks = new AtomicInteger();
    private final AtomicBoolean waiting = new AtomicBoolean(true);
    private final Recheck recheck = new Recheck();

    private long schedule() {
        return recheck.schedule(clock, waiting::get, looks::incrementAndGet);
    }

    @Test
    void delays_startAtASecond_andDoubleUpToTheMost() {
        assertThat(schedule()).isEqualTo(1_000);
        assertThat(schedule()).isEqualTo(2_000);
        assertThat(schedule()).isEqualTo(4_000);
        assertThat(schedule()).isEqualTo(Recheck.MAX.toMillis());
        for (int i = 0; i < 60; i++) {
            assertThat(schedule()).isEqualTo(Recheck.MAX.toMillis()); // no overflow of the shift
        }
    }

    /** Failed looks in a row (a connection that flaps) leave one recheck pending, not one per failure. */
    @Test
    void aNewRecheck_replacesTheOneBefore() {
        schedule();
        schedule();
        schedule();
        assertThat(clock.pendingDueTimes()).hasSize(1);
        clock.advance(Recheck.MAX);
        assertThat(looks).hasValue(1);
    }

    @Test
    void aCallAnswered_hasNoRecheckLeft_evenOneSetAfterItsAnswer() {
        schedule();
        recheck.cancel();
        assertThat(clock.pendingDueTimes()).isEmpty();

        waiting.set(false); // answered before the look that schedules this one set it
        schedule();
        assertThat(clock.pendingDueTimes()).isEmpty();
        clock.advance(Recheck.MAX);
        assertThat(looks).hasValue(0);
    }
}
