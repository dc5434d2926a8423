package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every JSON body the SDK writes and reads, through {@link Wire#JSON}: snake_case, nulls left out, unknown members
 * ignored, records with several constructors. The build runs this class a second and third time with the
 * jackson-databind that Spring Boot 3.5 and 4.0 manage in place of ours (client-sdk/pom.xml, executions
 * {@code jackson-boot35} and {@code jackson-boot40}, which set {@code warden.jackson.expected}), so an application on
 * either Boot can use the SDK without overriding Boot's Jackson.
 */
class WireJacksonTest {

    private static JsonNode tree(String json) throws Exception {
        return Wire.JSON.readTree(json);
    }

    private static JsonNode written(Object body) throws Exception {
        return Wire.JSON.readTree(Wire.JSON.writeValueAsBytes(body));
    }

    @Test
    void runs_on_the_jackson_version_the_build_asked_for() {
        String expected = System.getProperty("warden.jackson.expected");
        String databind = com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString();
        String core = com.fasterxml.jackson.core.json.PackageVersion.VERSION.toString();
        if (expected != null && !expected.isBlank()) {
            assertThat(databind).isEqualTo(expected);
            assertThat(core).isEqualTo(expected);
        }
        assertThat(databind).startsWith("2.");
    }

    @Test
    void requests_are_snake_case_without_nulls() throws Exception {
        assertThat(written(new Wire.OpenSession("alice", 30_000L, null)))
                .isEqualTo(tree("{\"client_id\":\"alice\",\"ttl_ms\":30000}"));
        assertThat(written(new Wire.Acquire("s1", "payments/invoice-42", LockMode.EXCLUSIVE, null, 2000, "r1",
                "KEEP", null)))
                .isEqualTo(tree("{\"session_id\":\"s1\",\"name\":\"payments/invoice-42\",\"mode\":\"EXCLUSIVE\","
                        + "\"wait_ms\":2000,\"request_id\":\"r1\",\"on_timeout\":\"KEEP\"}"));
        assertThat(written(new Wire.Acquire("s1", "pool", LockMode.SEMAPHORE, 3, 0, "r2", null, "FAIL")))
                .isEqualTo(tree("{\"session_id\":\"s1\",\"name\":\"pool\",\"mode\":\"SEMAPHORE\",\"permits\":3,"
                        + "\"wait_ms\":0,\"request_id\":\"r2\",\"on_deadlock\":\"FAIL\"}"));
        assertThat(written(new Wire.AcquireMany("s1", List.of("a", "b"), LockMode.EXCLUSIVE, 100, "r3", null, null)))
                .isEqualTo(tree("{\"session_id\":\"s1\",\"names\":[\"a\",\"b\"],\"mode\":\"EXCLUSIVE\","
                        + "\"wait_ms\":100,\"request_id\":\"r3\"}"));
        assertThat(written(new Wire.ReleaseRequest("s1", "r3")))
                .isEqualTo(tree("{\"session_id\":\"s1\",\"request_id\":\"r3\"}"));
        assertThat(written(new Wire.ReleaseToken("s1", "a", 4294967301L)))
                .isEqualTo(tree("{\"session_id\":\"s1\",\"name\":\"a\",\"token\":4294967301}"));
        assertThat(written(new Wire.CancelRequest("s1", "a", "r1")))
                .isEqualTo(tree("{\"session_id\":\"s1\",\"name\":\"a\",\"request_id\":\"r1\"}"));
    }

    @Test
    void replies_are_read_ignoring_unknown_members() throws Exception {
        assertThat(Wire.JSON.readValue("{\"session_id\":\"3bd9\",\"ttl_ms\":30000,\"keepalive_interval_ms\":10000,"
                + "\"revision\":35}", Wire.SessionOpened.class))
                .isEqualTo(new Wire.SessionOpened("3bd9", 30_000, 10_000));
        assertThat(Wire.JSON.readValue("{\"ttl_ms_remaining\":10000}", Wire.KeepaliveAck.class))
                .isEqualTo(new Wire.KeepaliveAck(10_000));
        assertThat(Wire.JSON.readValue("{\"status\":\"GRANTED\",\"token\":4294967301,\"request_id\":\"auto-1\","
                + "\"holders\":[{\"session_id\":\"s\",\"client_id\":\"alice\",\"mode\":\"EXCLUSIVE\",\"token\":16}],"
                + "\"revision\":16}", Wire.Acquired.class))
                .isEqualTo(new Wire.Acquired("GRANTED", 4294967301L, null, 16L));
        assertThat(Wire.JSON.readValue("{\"status\":\"QUEUED\",\"position\":1,\"revision\":18}", Wire.Acquired.class))
                .isEqualTo(new Wire.Acquired("QUEUED", null, 1, 18L));
        assertThat(Wire.JSON.readValue("{\"status\":\"GRANTED\",\"tokens\":{\"a\":7,\"b\":9},\"revision\":9}",
                Wire.AcquiredMany.class))
                .isEqualTo(new Wire.AcquiredMany("GRANTED", Map.of("a", 7L, "b", 9L), null, 9L));
        assertThat(Wire.JSON.readValue("{\"released\":true}", Wire.Released.class)).isEqualTo(new Wire.Released(true));
        assertThat(Wire.JSON.readValue("{\"released\":[\"a\"],\"cancelled\":[]}", Wire.Ignored.class)).isNotNull();
    }

    @Test
    void problem_with_a_deadlock_cycle_is_read() throws Exception {
        Wire.Problem p = Wire.JSON.readValue("{\"type\":\"about:blank\",\"title\":\"Deadlock\",\"status\":409,"
                + "\"detail\":\"chosen to break a cycle\",\"code\":\"DEADLOCK\",\"cycle\":{\"since_revision\":40,"
                + "\"members\":[{\"session_id\":\"s1\",\"client_id\":\"a\",\"request_id\":\"r1\",\"request\":\"r1\","
                + "\"name\":\"x\",\"mode\":\"EXCLUSIVE\",\"on_deadlock\":\"FAIL\",\"waits_for\":[\"s2\"],\"extra\":1}]}}",
                Wire.Problem.class);
        assertThat(p.code()).isEqualTo("DEADLOCK");
        assertThat(p.status()).isEqualTo(409);
        assertThat(p.cycle().sinceRevision()).isEqualTo(40);
        assertThat(p.cycle().members()).containsExactly(new Wire.Member("s1", "a", "r1", "r1", "x", LockMode.EXCLUSIVE,
                "FAIL", List.of("s2")));
    }

    @Test
    void resync_lock_states_are_read_by_the_canonical_constructor() throws Exception {
        JsonNode lock = tree("{\"name\":\"payments/invoice-42\",\"mode\":\"EXCLUSIVE\",\"holders\":[{\"session_id\":\"s1\","
                + "\"client_id\":\"alice\",\"mode\":\"EXCLUSIVE\",\"token\":16}],\"waiters\":[{\"session_id\":\"s2\","
                + "\"client_id\":\"bob\",\"mode\":\"EXCLUSIVE\",\"request_id\":\"bob-1\",\"position\":1}],\"revision\":18}");
        assertThat(Wire.JSON.treeToValue(lock, LockState.class)).isEqualTo(new LockState("payments/invoice-42",
                "EXCLUSIVE", List.of(new LockState.Holder("s1", "alice", LockMode.EXCLUSIVE, 16)),
                List.of(new LockState.Waiter("s2", "bob", LockMode.EXCLUSIVE, "bob-1", 1))));
        assertThat(Wire.JSON.treeToValue(tree("{\"name\":\"big\",\"too_large\":true,\"entries\":40000}"),
                LockState.class)).isEqualTo(new LockState("big", null, List.of(), List.of(), true, 40_000));
    }
}
