package io.warden.service.zk;

import io.warden.service.api.LockName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Request de-duplication rests on one pure function: (session, request id) names the same nodes on any gateway. */
class CellPathsTest {
    private static final String S1 = "0123456789abcdef0123456789abcdef";
    private static final String S2 = "fedcba9876543210fedcba9876543210";

    @Test
    void requestUuid_isTheSameForTheSameSessionAndRequest_andDiffersOtherwise() {
        assertThat(CellPaths.requestUuid(S1, "job-7")).isEqualTo(CellPaths.requestUuid(S1, "job-7"));
        assertThat(CellPaths.requestUuid(S1, "job-7")).isNotEqualTo(CellPaths.requestUuid(S2, "job-7"));
        assertThat(CellPaths.requestUuid(S1, "job-7")).isNotEqualTo(CellPaths.requestUuid(S1, "job-8"));
        // The separator keeps (session, request) pairs apart that would concatenate alike.
        assertThat(CellPaths.requestUuid("ab", "c")).isNotEqualTo(CellPaths.requestUuid("a", "bc"));
        assertThat(CellPaths.requestUuid(S1, "job-7")).matches("[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}");
    }

    @Test
    void paths_followTheContractLayout() {
        assertThat(CellPaths.lock(LockName.parse("payments/invoice-42"))).isEqualTo("/locks/payments/invoice-42");
        assertThat(CellPaths.session(S1)).isEqualTo("/sessions/" + S1);
        assertThat(CellPaths.sessionRequest(S1, "u")).isEqualTo("/sessions/" + S1 + "/u");
        assertThat(CellPaths.gateway("gw1")).isEqualTo("/gateways/gw1");
    }
}
