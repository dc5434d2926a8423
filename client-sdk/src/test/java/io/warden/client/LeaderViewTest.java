package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The leader as the watch's events make it: grants name it, its own release or expiry ends it, a RESYNC sets it. */
class LeaderViewTest {
    private static final String NAME = "jobs/leader";

    private static LockEvent event(long revision, LockEvent.Type type, String name, String session, LockMode mode, long token) {
        return new LockEvent(revision, type, name, session, session == null ? null : "client-" + session, mode, token, List.of());
    }

    @Test
    void grant_namesTheLeader_andItsOwnReleaseEndsIt() {
        LeaderView view = new LeaderView(NAME);
        view.apply(event(10, LockEvent.Type.QUEUED, NAME, "s1", LockMode.EXCLUSIVE, 10));
        assertThat(view.leader()).isEmpty();
        view.apply(event(10, LockEvent.Type.GRANTED, NAME, "s1", LockMode.EXCLUSIVE, 10));
        assertThat(view.leader()).contains(new Leader("s1", "client-s1", 10, 10));
        view.apply(event(11, LockEvent.Type.QUEUED, NAME, "s2", LockMode.EXCLUSIVE, 11));
        view.apply(event(12, LockEvent.Type.CANCELLED, NAME, "s2", LockMode.EXCLUSIVE, 11));
        view.apply(event(13, LockEvent.Type.RELEASED, NAME, "s3", LockMode.EXCLUSIVE, 9));
        assertThat(view.leader().map(Leader::token)).contains(10L);
        view.apply(event(14, LockEvent.Type.RELEASED, NAME, "s1", LockMode.EXCLUSIVE, 10));
        assertThat(view.leader()).isEmpty();
    }

    @Test
    void handOver_atOneRevision_namesTheSuccessor_andExpiryEndsIt() {
        LeaderView view = new LeaderView(NAME);
        view.apply(event(10, LockEvent.Type.GRANTED, NAME, "s1", LockMode.EXCLUSIVE, 10));
        view.apply(event(20, LockEvent.Type.RELEASED, NAME, "s1", LockMode.EXCLUSIVE, 10));
        view.apply(event(20, LockEvent.Type.GRANTED, NAME, "s2", LockMode.EXCLUSIVE, 12));
        assertThat(view.leader().map(Leader::sessionId)).contains("s2");
        view.apply(event(30, LockEvent.Type.EXPIRED, NAME, "s2", LockMode.EXCLUSIVE, 12));
        assertThat(view.leader()).isEmpty();
    }

    @Test
    void otherNames_andSharedGrants_doNotMoveIt() {
        LeaderView view = new LeaderView(NAME);
        view.apply(event(10, LockEvent.Type.GRANTED, "jobs/other", "s1", LockMode.EXCLUSIVE, 10));
        view.apply(event(11, LockEvent.Type.GRANTED, NAME, "s1", LockMode.SHARED, 11));
        assertThat(view.leader()).isEmpty();
    }

    @Test
    void resync_setsTheLeaderFromTheState_orClearsIt() {
        LeaderView view = new LeaderView(NAME);
        view.apply(event(10, LockEvent.Type.GRANTED, NAME, "s1", LockMode.EXCLUSIVE, 10));
        LockState held = new LockState(NAME, "EXCLUSIVE", List.of(new LockState.Holder("s2", "bob", LockMode.EXCLUSIVE, 15)),
                List.of());
        view.apply(new LockEvent(40, LockEvent.Type.RESYNC, null, null, null, null, List.of(held)));
        assertThat(view.leader()).contains(new Leader("s2", "bob", 15, 40));
        view.apply(new LockEvent(50, LockEvent.Type.RESYNC, null, null, null, null, List.of()));
        assertThat(view.leader()).isEmpty();
    }
}
