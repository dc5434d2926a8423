package io.warden.service.lock;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.time.ManualClock;
import io.warden.service.zk.SessionRecord;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory bookkeeping of {@link RequestQuotas}; the HTTP behaviour is in {@code http.RequestQuotaTest}. */
class RequestQuotasTest {
    private final RequestQuotas quotas = new RequestQuotas(null, null, new ManualClock(), 2);

    @Test
    void reservedPlacesCount_untilCommittedOrGivenBack() {
        assertThat(quotas.reserve("principal a")).isEqualTo(-1);
        assertThat(quotas.reserve("principal a")).isEqualTo(-1);
        assertThat(quotas.reserve("principal a")).as("two reserved: full").isEqualTo(2);
        quotas.unreserve("principal a");
        quotas.commit("principal a", "s1", "u1");
        assertThat(quotas.of("principal a")).isEqualTo(1);
        assertThat(quotas.reserve("principal b")).as("another owner").isEqualTo(-1);
    }

    @Test
    void endedRequestsAndSessions_giveTheirPlacesBack_andUnknownRequestsAreIgnored() {
        for (String u : List.of("u1", "u2")) {
            assertThat(quotas.reserve("principal a")).isEqualTo(-1);
            quotas.commit("principal a", "s1", u);
        }
        assertThat(quotas.reserve("principal a")).isEqualTo(2);
        quotas.ended("s1", "not-counted-here"); // e.g. a request rejoined here by a retry
        quotas.ended("s2", "u1");
        assertThat(quotas.of("principal a")).isEqualTo(2);
        quotas.ended("s1", "u1");
        quotas.ended("s1", "u1"); // twice: counted once
        assertThat(quotas.of("principal a")).isEqualTo(1);
        quotas.sessionEnded("s1");
        assertThat(quotas.of("principal a")).isZero();
    }

    @Test
    void sessionsWithoutAnOwner_areNotCounted() {
        for (int i = 0; i < 5; i++) {
            assertThat(quotas.reserve(SessionRecord.UNKNOWN_OWNER)).isEqualTo(-1);
            quotas.commit(SessionRecord.UNKNOWN_OWNER, "s", "u" + i);
        }
        assertThat(quotas.of(SessionRecord.UNKNOWN_OWNER)).isZero();
    }

    @Test
    void liveRequests_areRecordsWithoutAnEndMarker() {
        assertThat(RequestQuotas.liveRequests(List.of("u1", "u2", "~u2_0000000003", "~u9_0000000004", "u3")))
                .containsExactlyInAnyOrder("u1", "u3");
    }
}
