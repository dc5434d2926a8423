package io.warden.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The deadlines of one grant on a manual clock (no sleeping): when the release happens for {@code lockAtMostFor},
 * {@code lockAtLeastFor}, extensions, a late timer, an invalid or lost hold.
 */
class GrantTest {
    private final ManualTime time = new ManualTime();
    private final FakeHold hold = new FakeHold("shedlock/report", 42);
    private final List<Grant> ended = new ArrayList<>();
    private final Grant grant = new Grant(hold, "report", time::read, time, ended::add);

    private void start(Duration atMost, Duration atLeast) {
        grant.start(time.read(), atMost, atLeast);
    }

    private static Duration ms(long ms) {
        return Duration.ofMillis(ms);
    }

    @Test
    void lockAtMostFor_releasesTheHold_whenItPasses_notBefore() {
        start(ms(10_000), Duration.ZERO);

        time.advance(ms(9_999));
        assertThat(hold.releaseCalls).isZero();
        time.advance(ms(1));

        assertThat(hold.releaseCalls).isOne();
        assertThat(ended).containsExactly(grant);
        assertThat(grant.finished()).as("ShedLock has not unlocked it").isFalse();
    }

    @Test
    void unlock_beforeLockAtLeastFor_keepsTheHoldUntilThen() {
        start(ms(10_000), ms(3_000));
        time.advance(ms(1_000));

        grant.unlock();

        assertThat(grant.finished()).isTrue();
        time.advance(ms(1_999));
        assertThat(hold.releaseCalls).as("kept for lockAtLeastFor").isZero();
        time.advance(ms(1));
        assertThat(hold.releaseCalls).isOne();
        assertThat(time.pending()).isZero();
    }

    @Test
    void unlock_afterLockAtLeastFor_releasesAtOnce_andStopsTheTimer() {
        start(ms(10_000), ms(3_000));
        time.advance(ms(3_000));

        grant.unlock();

        assertThat(hold.releaseCalls).isOne();
        assertThat(time.pending()).isZero();
        time.advance(ms(20_000));
        assertThat(hold.releaseCalls).isOne();
    }

    @Test
    void extend_movesBothDeadlines_countedFromNow() {
        start(ms(2_000), Duration.ZERO);
        time.advance(ms(1_000));

        assertThat(grant.extend(ms(5_000), ms(4_000))).isTrue();

        time.advance(ms(1_500)); // past the first lockAtMostFor
        assertThat(hold.releaseCalls).isZero();
        grant.unlock(); // at 2.5 s: lockAtLeastFor now runs until 5 s
        time.advance(ms(2_499));
        assertThat(hold.releaseCalls).isZero();
        time.advance(ms(1));
        assertThat(hold.releaseCalls).isOne();
    }

    @Test
    void extend_afterLockAtMostFor_failsAndReleases_evenWhenTheTimerIsLate() {
        start(ms(2), Duration.ZERO);
        time.advanceWithoutRunning(ms(4));

        assertThat(grant.extend(ms(10_000), Duration.ZERO)).isFalse();

        assertThat(hold.releaseCalls).isOne();
        assertThat(grant.finished()).as("no valid ShedLock lock is left").isTrue();
        time.advance(Duration.ZERO); // the late timer finds it ended
        assertThat(hold.releaseCalls).isOne();
    }

    @Test
    void extend_whileTheSessionMayHaveExpired_fails() {
        start(ms(10_000), Duration.ZERO);
        hold.sessionConnected = false;

        assertThat(grant.extend(ms(10_000), Duration.ZERO)).isFalse();
        assertThat(hold.releaseCalls).isOne();
    }

    @Test
    void lostHold_endsTheGrant_withoutARelease_andItsUnlockDoesNothing() {
        start(ms(10_000), ms(5_000));

        hold.loseIt();

        assertThat(ended).containsExactly(grant);
        assertThat(time.pending()).as("its timer stopped").isZero();
        grant.unlock();
        assertThat(grant.extend(ms(10_000), Duration.ZERO)).isFalse();
        assertThat(hold.releaseCalls).isZero();
    }

    @Test
    void aReleaseThatFindsTheGrantGone_doesNotThrow() {
        start(ms(10_000), Duration.ZERO);
        hold.goneAtService = true;

        grant.unlock();

        assertThat(hold.releaseCalls).isOne();
        assertThat(ended).containsExactly(grant);
    }

    @Test
    void unlock_afterLockAtMostForReleasedIt_releasesNothing() {
        start(ms(1_000), Duration.ZERO);
        time.advance(ms(1_000));

        grant.unlock();

        assertThat(hold.releaseCalls).isOne();
    }

    @Test
    void aLockAtMostForOfCenturies_doesNotOverflow() {
        start(Duration.ofDays(365L * 1000), Duration.ZERO);

        time.advance(Duration.ofDays(365));

        assertThat(hold.releaseCalls).isZero();
        assertThat(grant.extend(Duration.ofDays(365L * 1000), Duration.ofDays(365L * 500))).isTrue();
    }

    @Test
    void releaseNow_releasesAHoldKeptForLockAtLeastFor() {
        start(ms(10_000), ms(5_000));
        grant.unlock();

        grant.releaseNow();

        assertThat(hold.releaseCalls).isOne();
        assertThat(time.pending()).isZero();
    }
}
