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
        assertThat(CellPaths.lock(LockName.parse("payments/invoice-42"))).matches("/locks/payments/[0-9a-f]{3}/invoice-42");
        assertThat(CellPaths.lock(LockName.parse("payments/eu/invoice-42"))).matches("/locks/payments/[0-9a-f]{3}/eu~invoice-42");
        assertThat(CellPaths.session(S1)).isEqualTo("/sessions/01/" + S1);
        assertThat(CellPaths.sessionRequest(S1, "u")).isEqualTo("/sessions/01/" + S1 + "/u");
        assertThat(CellPaths.lockDelay(S2)).isEqualTo("/lockdelay/fe/" + S2);
        assertThat(CellPaths.sessionIdOf(CellPaths.sessionRequest(S2, "u"))).isEqualTo(S2);
        assertThat(CellPaths.sessionIdOf(CellPaths.lockDelay(S2))).isEqualTo(S2);
        assertThat(CellPaths.sessionIdOf("/lockdelay/fe")).isNull();
        assertThat(CellPaths.shards()).hasSize(256).startsWith("00", "01").endsWith("ff");
        assertThat(CellPaths.gateway("gw1")).isEqualTo("/gateways/gw1");
    }

    @Test
    void lockPaths_readBackToTheirName_andNothingElseReadsAsALock() {
        for (String n : java.util.List.of("payments/invoice-42", "a/b", "a/b/0-__WRIT__0000000000", "ns/x.y:z/a-/9")) {
            LockName name = LockName.parse(n);
            assertThat(CellPaths.lockName(CellPaths.lock(name))).isEqualTo(name);
        }
        String real = CellPaths.lock(LockName.parse("a/b"));
        assertThat(CellPaths.lockName(real.replaceAll("/[0-9a-f]{3}/", "/000/"))).as("wrong shard").satisfiesAnyOf(
                n -> assertThat(n).isNull(), n -> assertThat(real).contains("/000/"));
        assertThat(CellPaths.lockName("/locks/a")).isNull();
        assertThat(CellPaths.lockName("/locks/a/fff")).isNull();
        assertThat(CellPaths.lockName(real + "/_c_x-__WRIT__0000000001")).as("a queue node is not a lock").isNull();
        assertThat(CellPaths.lockName("/sessions/x/y/z")).isNull();
    }

    @Test
    void lockShards_spreadNamesEvenly() {
        int[] counts = new int[CellPaths.LOCK_SHARDS];
        for (int i = 0; i < 409_600; i++) {
            counts[Integer.parseInt(CellPaths.lockShard(LockName.parse("ns/lock-" + i)), 16)]++;
        }
        assertThat(java.util.Arrays.stream(counts).max().getAsInt()).as("no shard far above 100").isLessThan(160);
    }
}
