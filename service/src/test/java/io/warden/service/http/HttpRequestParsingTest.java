package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.warden.service.api.AcquireRequest;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.WardenException.InvalidArgumentException;
import io.warden.service.config.WardenConfig;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Request parsing and validation without a server or an engine: each class of bad input becomes an
 * INVALID_ARGUMENT naming the field, and good input becomes exactly the values the engine gets.
 */
class HttpRequestParsingTest {
    private static final String SID = "0123456789abcdef0123456789abcdef";
    private final Requests requests = new Requests(new Json(), WardenConfig.defaults());

    private static byte[] b(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static String fieldOf(Runnable r) {
        InvalidArgumentException e = catchThrowableOfType(InvalidArgumentException.class, r::run);
        assertThat(e).as("expected an InvalidArgumentException").isNotNull();
        assertThat(e.getMessage()).startsWith(e.field() + ": ");
        return e.field();
    }

    @Test
    void openSession_defaults_ttlFromConfig_noLockDelay() {
        Requests.OpenSession r = requests.openSession(b("{\"client_id\":\"worker-1\"}"));
        assertThat(r).isEqualTo(new Requests.OpenSession("worker-1", 10_000, 0));
    }

    @Test
    void openSession_hugeTtl_isPassedOnForTheEngineToClamp() {
        Requests.OpenSession r = requests.openSession(b("{\"client_id\":\"c\",\"ttl_ms\":9223372036854775807,\"lock_delay_ms\":60000}"));
        assertThat(r.ttlMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(r.lockDelayMs()).isEqualTo(60_000);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "''                                               | body",
            "'   '                                            | body",
            "'{'                                              | body",
            "'[]'                                             | body",
            "'\"client_id\"'                                  | body",
            "'null'                                           | body",
            "'42'                                             | body",
            "'{\"client_id\":\"a\"} {}'                       | body",
            "'{\"client_id\":\"a\",\"client_id\":\"b\"}'      | body",
            "'{\"client_id\":\"a\" /* c */}'                  | body",
            "'{''client_id'':''a''}'                          | body",
            "'{}'                                             | client_id",
            "'{\"client_id\":null}'                           | client_id",
            "'{\"client_id\":\"\"}'                           | client_id",
            "'{\"client_id\":7}'                              | client_id",
            "'{\"client_id\":{\"a\":1}}'                      | client_id",
            "'{\"client_id\":[\"a\"]}'                        | client_id",
            "'{\"client_id\":true}'                           | client_id",
            "'{\"client_id\":\"a\\u0000b\"}'                  | client_id",
            "'{\"client_id\":\"a\\ud800b\"}'                  | client_id",
            "'{\"client_id\":\"a\",\"ttl_ms\":\"1000\"}'      | ttl_ms",
            "'{\"client_id\":\"a\",\"ttl_ms\":1000.0}'        | ttl_ms",
            "'{\"client_id\":\"a\",\"ttl_ms\":1e4}'           | ttl_ms",
            "'{\"client_id\":\"a\",\"ttl_ms\":0}'             | ttl_ms",
            "'{\"client_id\":\"a\",\"ttl_ms\":-5}'            | ttl_ms",
            "'{\"client_id\":\"a\",\"ttl_ms\":true}'          | ttl_ms",
            "'{\"client_id\":\"a\",\"ttl_ms\":99999999999999999999999}' | ttl_ms",
            "'{\"client_id\":\"a\",\"lock_delay_ms\":60001}'  | lock_delay_ms",
            "'{\"client_id\":\"a\",\"lock_delay_ms\":-1}'     | lock_delay_ms",
            "'{\"client_id\":\"a\",\"colour\":\"blue\"}'      | colour",
            "'{\"client_id\":\"a\",\"ClientId\":\"a\"}'       | ClientId",
    })
    void openSession_badInput_namesTheField(String body, String field) {
        assertThat(fieldOf(() -> requests.openSession(b(body)))).isEqualTo(field);
    }

    @Test
    void openSession_clientIdOf128Characters_isAccepted_129_isNot() {
        String ok = "x".repeat(128);
        assertThat(requests.openSession(b("{\"client_id\":\"" + ok + "\"}")).clientId()).isEqualTo(ok);
        assertThat(fieldOf(() -> requests.openSession(b("{\"client_id\":\"" + ok + "y\"}")))).isEqualTo("client_id");
        String emoji = "\uD83D\uDE00".repeat(128); // 128 characters, 256 UTF-16 units
        assertThat(requests.openSession(b("{\"client_id\":\"" + emoji + "\"}")).clientId()).isEqualTo(emoji);
    }

    @Test
    void acquire_defaults_exclusive_tryLock_cancel_generatedRequestId() {
        AcquireRequest r = requests.acquire(b("{\"session_id\":\"" + SID + "\",\"name\":\"payments/invoice-42\"}"));
        assertThat(r.sessionId()).isEqualTo(SID);
        assertThat(r.name().toString()).isEqualTo("payments/invoice-42");
        assertThat(r.mode()).isEqualTo(Mode.EXCLUSIVE);
        assertThat(r.waitMs()).isZero();
        assertThat(r.onTimeout()).isEqualTo(OnTimeout.CANCEL);
        assertThat(r.requestId()).matches(Fields.REQUEST_ID);
    }

    @Test
    void acquire_allFields_areTakenAsGiven() {
        AcquireRequest r = requests.acquire(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b/c\",\"mode\":\"SHARED\","
                + "\"wait_ms\":300000,\"request_id\":\"Req_1.2:3-4\",\"on_timeout\":\"KEEP\"}"));
        assertThat(r).isEqualTo(new AcquireRequest(SID, r.name(), Mode.SHARED, 300_000, "Req_1.2:3-4", OnTimeout.KEEP));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "'{\"name\":\"a/b\"}'                                                  | session_id",
            "'{\"session_id\":\"\",\"name\":\"a/b\"}'                               | session_id",
            "'{\"session_id\":\"0123456789ABCDEF0123456789ABCDEF\",\"name\":\"a/b\"}' | session_id",
            "'{\"session_id\":\"0123456789abcdef\",\"name\":\"a/b\"}'               | session_id",
            "'{\"session_id\":\"../../etc/passwd/0123456789abcdef\",\"name\":\"a/b\"}' | session_id",
            "'{\"session_id\":12,\"name\":\"a/b\"}'                                 | session_id",
            "'{\"session_id\":\"S\"}'                                               | session_id",
            "'{\"session_id\":\"SID\"}'                                             | name",
            "'{\"session_id\":\"SID\",\"name\":\"a\"}'                              | name",
            "'{\"session_id\":\"SID\",\"name\":\"A/b\"}'                            | name",
            "'{\"session_id\":\"SID\",\"name\":\"a/_b\"}'                           | name",
            "'{\"session_id\":\"SID\",\"name\":\"a/.b\"}'                           | name",
            "'{\"session_id\":\"SID\",\"name\":\"a//b\"}'                           | name",
            "'{\"session_id\":\"SID\",\"name\":\"a/b/\"}'                           | name",
            "'{\"session_id\":\"SID\",\"name\":\"a/b c\"}'                          | name",
            "'{\"session_id\":\"SID\",\"name\":\"a/1/2/3/4/5/6/7/8/9\"}'            | name",
            "'{\"session_id\":\"SID\",\"name\":{\"ns\":\"a\"}}'                     | name",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"mode\":\"exclusive\"}'     | mode",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"mode\":\"READ\"}'          | mode",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"mode\":1}'                 | mode",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"wait_ms\":300001}'         | wait_ms",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"wait_ms\":-1}'             | wait_ms",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"wait_ms\":1.5}'            | wait_ms",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"wait_ms\":\"10\"}'         | wait_ms",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"request_id\":\"\"}'        | request_id",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"request_id\":\"a b\"}'     | request_id",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"request_id\":\"a/b\"}'     | request_id",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"request_id\":5}'           | request_id",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"on_timeout\":\"WAIT\"}'    | on_timeout",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"on_timeout\":false}'       | on_timeout",
            "'{\"session_id\":\"SID\",\"name\":\"a/b\",\"token\":5}'                | token",
    })
    void acquire_badInput_namesTheField(String body, String field) {
        assertThat(fieldOf(() -> requests.acquire(b(body.replace("SID", SID))))).isEqualTo(field);
    }

    @Test
    void acquire_requestIdOf129Characters_isRejected() {
        String body = "{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"request_id\":\"" + "r".repeat(129) + "\"}";
        assertThat(fieldOf(() -> requests.acquire(b(body)))).isEqualTo("request_id");
    }

    @Test
    void acquire_nameOfMoreThan512Characters_isRejected() {
        String name = "a/" + "b".repeat(128) + "/" + "c".repeat(128) + "/" + "d".repeat(128) + "/" + "e".repeat(128);
        String body = "{\"session_id\":\"" + SID + "\",\"name\":\"" + name + "\"}";
        assertThat(fieldOf(() -> requests.acquire(b(body)))).isEqualTo("name");
    }

    @Test
    void release_tokenOrRequestId_exactlyOne() {
        Requests.Release byToken = requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"token\":4294967301}"));
        assertThat(byToken.token()).isEqualTo(4294967301L);
        assertThat(byToken.requestId()).isNull();
        Requests.Release byRequest = requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"request_id\":\"r1\"}"));
        assertThat(byRequest.token()).isNull();
        assertThat(byRequest.requestId()).isEqualTo("r1");

        assertThat(fieldOf(() -> requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\"}")))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"token\":1,\"request_id\":\"r\"}"))))
                .isEqualTo("request_id");
        assertThat(fieldOf(() -> requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"token\":0}")))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"token\":-3}")))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"token\":\"3\"}")))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.release(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"token\":3.0}")))).isEqualTo("token");
    }

    @Test
    void keepalive_emptyBodyOrTtl() {
        assertThat(requests.keepalive(b("")).ttlMs()).isNull();
        assertThat(requests.keepalive(b("{}")).ttlMs()).isNull();
        assertThat(requests.keepalive(b("{\"ttl_ms\":5000}")).ttlMs()).isEqualTo(5000L);
        assertThat(fieldOf(() -> requests.keepalive(b("{\"ttl_ms\":0}")))).isEqualTo("ttl_ms");
        assertThat(fieldOf(() -> requests.keepalive(b("{\"ttl\":5}")))).isEqualTo("ttl");
        assertThat(fieldOf(() -> requests.keepalive(b("[1]")))).isEqualTo("body");
    }

    @Test
    void listLocks_defaultsAndLimits() {
        assertThat(requests.listLocks(Map.of())).isEqualTo(new Requests.ListLocks(null, null, 100, null));
        assertThat(requests.listLocks(Map.of("namespace", List.of("payments"), "prefix", List.of("inv"),
                "limit", List.of("1000"), "after", List.of("payments/inv-1"))))
                .isEqualTo(new Requests.ListLocks("payments", "inv", 1000, "payments/inv-1"));
        assertThat(fieldOf(() -> requests.listLocks(Map.of("limit", List.of("1001"))))).isEqualTo("limit");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("limit", List.of("0"))))).isEqualTo("limit");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("limit", List.of("1.5"))))).isEqualTo("limit");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("limit", List.of("ten"))))).isEqualTo("limit");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("limit", List.of("99999999999999999999"))))).isEqualTo("limit");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("limit", List.of("1", "2"))))).isEqualTo("limit");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("namespace", List.of("Payments"))))).isEqualTo("namespace");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("prefix", List.of("a b"))))).isEqualTo("prefix");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("after", List.of("x".repeat(513)))))).isEqualTo("after");
        assertThat(fieldOf(() -> requests.listLocks(Map.of("page", List.of("2"))))).isEqualTo("page");
    }

    @Test
    void check_nameAndPositiveToken_required() {
        Requests.Check c = requests.check(Map.of("name", List.of("a/b"), "token", List.of("4294967301")));
        assertThat(c.token()).isEqualTo(4294967301L);
        assertThat(fieldOf(() -> requests.check(Map.of("token", List.of("1"))))).isEqualTo("name");
        assertThat(fieldOf(() -> requests.check(Map.of("name", List.of("a/b"))))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.check(Map.of("name", List.of("a/b"), "token", List.of("0"))))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.check(Map.of("name", List.of("a/b"), "token", List.of("-1"))))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.check(Map.of("name", List.of("a/b"), "token", List.of("1e3"))))).isEqualTo("token");
        assertThat(fieldOf(() -> requests.check(Map.of("name", List.of("nope"), "token", List.of("1"))))).isEqualTo("name");
    }

    @Test
    void lease_resourceLivesInTheLeaseNamespace() {
        Requests.LeaseAcquire a = requests.leaseAcquire(b("{\"resource\":\"user:42\",\"client_id\":\"c\",\"ttl\":5000}"));
        assertThat(a.name().toString()).isEqualTo("default/user:42");
        assertThat(a.waitMs()).isZero();
        Requests.LeaseAcquire deep = requests.leaseAcquire(b("{\"resource\":\"a/b/c/d/e/f/g/h\",\"client_id\":\"c\",\"ttl\":1,\"wait_ms\":10}"));
        assertThat(deep.name().segments()).hasSize(8);
        assertThat(requests.leaseRelease(b("{\"resource\":\"user:42\",\"lease_id\":\"" + SID + "\"}")).leaseId()).isEqualTo(SID);
        assertThat(requests.leaseRenew(b("{\"lease_id\":\"" + SID + "\",\"ttl\":3000}")).ttlMs()).isEqualTo(3000);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "'{\"client_id\":\"c\",\"ttl\":1000}'                                 | resource",
            "'{\"resource\":\"\",\"client_id\":\"c\",\"ttl\":1000}'               | resource",
            "'{\"resource\":\"/x\",\"client_id\":\"c\",\"ttl\":1000}'             | resource",
            "'{\"resource\":\"_x\",\"client_id\":\"c\",\"ttl\":1000}'             | resource",
            "'{\"resource\":\"a/b/c/d/e/f/g/h/i\",\"client_id\":\"c\",\"ttl\":1000}' | resource",
            "'{\"resource\":7,\"client_id\":\"c\",\"ttl\":1000}'                  | resource",
            "'{\"resource\":\"x\",\"ttl\":1000}'                                  | client_id",
            "'{\"resource\":\"x\",\"client_id\":\"c\"}'                           | ttl",
            "'{\"resource\":\"x\",\"client_id\":\"c\",\"ttl\":0}'                 | ttl",
            "'{\"resource\":\"x\",\"client_id\":\"c\",\"ttl\":\"1s\"}'            | ttl",
            "'{\"resource\":\"x\",\"client_id\":\"c\",\"ttl\":10,\"wait_ms\":300001}' | wait_ms",
            "'{\"resource\":\"x\",\"client_id\":\"c\",\"ttl\":10,\"ttl_ms\":10}'  | ttl_ms",
    })
    void leaseAcquire_badInput_namesTheField(String body, String field) {
        assertThat(fieldOf(() -> requests.leaseAcquire(b(body)))).isEqualTo(field);
    }

    @Test
    void leaseReleaseAndRenew_badLeaseId_namesLeaseId() {
        assertThat(fieldOf(() -> requests.leaseRelease(b("{\"resource\":\"x\",\"lease_id\":\"nope\"}")))).isEqualTo("lease_id");
        assertThat(fieldOf(() -> requests.leaseRelease(b("{\"resource\":\"x\"}")))).isEqualTo("lease_id");
        assertThat(fieldOf(() -> requests.leaseRenew(b("{\"lease_id\":\"nope\",\"ttl\":5}")))).isEqualTo("lease_id");
        assertThat(fieldOf(() -> requests.leaseRenew(b("{\"lease_id\":\"" + SID + "\",\"ttl\":-5}")))).isEqualTo("ttl");
    }

    @Test
    void problems_mapEveryEngineCodeToItsStatus() {
        Problems problems = new Problems(new Json());
        for (var code : io.warden.service.api.WardenException.ErrorCode.values()) {
            var doc = problems.document(new java.util.concurrent.CompletionException(
                    new io.warden.service.api.WardenException(code, "boom")), "TEST /x");
            assertThat(doc.get("status").asInt()).isEqualTo(code.status());
            assertThat(doc.get("code").asText()).isEqualTo(code.name());
            assertThat(doc.get("type").asText()).startsWith(Problems.TYPE_PREFIX);
            assertThat(doc.get("title").asText()).isNotBlank();
            assertThat(doc.get("detail").asText()).isEqualTo("boom");
        }
        var invalid = problems.document(io.warden.service.api.WardenException.invalid("wait_ms", "too big"), "TEST /x");
        assertThat(invalid.get("type").asText()).isEqualTo("https://warden.dev/problems/invalid-argument");
        assertThat(invalid.get("field").asText()).isEqualTo("wait_ms");
        assertThat(invalid.get("detail").asText()).isEqualTo("wait_ms: too big");
    }

    @Test
    void problems_unexpectedFailure_is500WithCorrelationIdAndNoInternals() {
        var doc = new Problems(new Json()).document(new IllegalStateException("secret internals"), "TEST /x");
        assertThat(doc.get("status").asInt()).isEqualTo(500);
        assertThat(doc.get("detail").asText()).doesNotContain("secret").contains(doc.get("correlation_id").asText());
    }

    @Test
    void replies_areSnakeCase_omitNulls_keepLatestTokenNull() {
        Json json = new Json();
        String acquired = new String(json.write(new Replies.Acquired(io.warden.service.api.AcquireResult.Status.QUEUED,
                null, 2, "r1", List.of(new Replies.HolderReply("s", "c", null, Mode.SHARED, 7, null)), null, null)), StandardCharsets.UTF_8);
        assertThat(acquired).isEqualTo("{\"status\":\"QUEUED\",\"position\":2,\"request_id\":\"r1\","
                + "\"holders\":[{\"session_id\":\"s\",\"client_id\":\"c\",\"mode\":\"SHARED\",\"token\":7}]}");
        String check = new String(json.write(new Replies.Check(false, null, 12L)), StandardCharsets.UTF_8);
        assertThat(check).isEqualTo("{\"current\":false,\"latest_token\":null,\"revision\":12}");
        assertThatThrownBy(() -> requests.acquire(b("{\"session_id\":\"" + SID + "\",\"name\":\"a/b\",\"wait_ms\":1e2}")))
                .isInstanceOf(InvalidArgumentException.class);
    }
}
