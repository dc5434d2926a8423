package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ZooKeeper cell that lost committed state must not hand out tokens again.
 *
 * <p>The story (measured on a three-server ensemble, reproduced with real processes by {@code RollbackIT}): one server
 * down for maintenance, two others committing grants; one of those crashes and the other's disk is replaced (empty data
 * directory, same id); the stale server and the empty one form a quorum and the stale one leads. The grants committed
 * meanwhile are gone, and the cell's zxids, which are the tokens, count the same range again: 60 new grants reused the
 * 60 tokens of the lost ones, 44 of them equal to a token already given to another session.
 *
 * <p>Here the rollback is a standalone server restored from a copy of its own data directory taken earlier, which
 * loses exactly the writes made after the copy, as the stale server's quorum did. The gateway that saw those writes
 * remembers the highest zxid it saw in its data directory; a gateway started on the rolled-back cell with that
 * directory must refuse, say why, and serve again only once an operator has raised the token floor above everything
 * it saw.
 */
class RolledBackEnsembleTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @TempDir
    Path gatewayData;

    /** A gateway refusing a rolled-back cell, and what it had seen before. */
    private record RolledBack(Gateway gateway, HttpTestClient http, String session, List<Long> before, List<Long> lost,
                              HttpTestClient.Reply acquire) {
        long highest() {
            return lost.get(lost.size() - 1);
        }
    }

    /**
     * Grants through a gateway, a copy of the server's data, more grants, then the server restored from the copy and a
     * gateway with the first one's data directory started on it: it refuses the cell.
     */
    private RolledBack rollBack() throws Exception {
        var config = fx.config().toBuilder().dataDir(gatewayData).build();
        Gateway first = fx.gateway(config);
        HttpTestClient http = new HttpTestClient(first.httpPort(), OpenApiContract.load());
        String session = openSession(http, "before");
        List<Long> before = grantAndRelease(http, session, "pay/ledger", 5);

        Path zkData = fx.server.getTempDirectory().toPath();
        Path backup = Files.createTempDirectory("warden-zk-backup-");
        // Ready is awaited after the gateway has reconnected: until it has even seen the server go, /health/ready
        // still says 200, and the first acquire after the restart was answered 503 in a flake hunt.
        java.util.concurrent.CountDownLatch reconnected = new java.util.concurrent.CountDownLatch(1);
        first.curator().getConnectionStateListenable().addListener((client, state) -> {
            if (state == org.apache.curator.framework.state.ConnectionState.RECONNECTED) {
                reconnected.countDown();
            }
        });
        fx.server.stop();
        copy(zkData, backup);
        fx.server.restart();
        assertThat(reconnected.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("the gateway reconnected").isTrue();
        WardenFixture.await("the gateway to be ready again after the server's restart", Duration.ofSeconds(30),
                () -> http.get("/health/ready").status() == 200);

        // Many more writes than a gateway's start makes, so the restored cell stays behind what the gateway saw.
        List<Long> lost = grantAndRelease(http, session, "pay/ledger", 40);
        assertThat(lost.get(0)).isGreaterThan(before.get(before.size() - 1));
        first.close();

        // The cell loses everything after the copy: what the stale server's quorum did to the grants of the story.
        fx.server.stop();
        deleteRecursively(zkData);
        copy(backup, zkData);
        fx.server.restart();

        Gateway second = fx.gateway(config);
        HttpTestClient again = new HttpTestClient(second.httpPort(), OpenApiContract.load());
        long highest = lost.get(lost.size() - 1);

        HttpTestClient.Reply acquire = again.postJson("/v1/acquire", "session_id", session, "name", "pay/ledger",
                "request_id", "after-the-rollback");
        assertThat(acquire.status()).as("an acquire on the rolled-back cell: %s", acquire).isEqualTo(503);
        assertRollbackProblem(acquire, highest);
        return new RolledBack(second, again, session, before, lost, acquire);
    }

    private int floorCommand(String... args) {
        var out = new java.io.ByteArrayOutputStream();
        var err = new java.io.ByteArrayOutputStream();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--zk", fx.server.getConnectString()));
        int status = io.warden.service.cell.FloorCommand.run(all, new io.warden.service.config.ConfigLoader(java.util.Map.of()),
                new java.io.PrintStream(out, true), new java.io.PrintStream(err, true));
        lastFloorOutput = out + err.toString();
        return status;
    }

    private String lastFloorOutput = "";

    @Test
    void aCellBehindWhatTheGatewaySaw_isRefusedWithTheCause_untilTheTokenFloorIsRaised() throws Exception {
        RolledBack rb = rollBack();
        Gateway second = rb.gateway();
        HttpTestClient again = rb.http();
        String session = rb.session();
        List<Long> before = rb.before();
        List<Long> lost = rb.lost();
        HttpTestClient.Reply acquire = rb.acquire();
        long highest = rb.highest();

        HttpTestClient.Reply keepalive = again.post("/v1/sessions/" + session + "/keepalive", "{}");
        assertThat(keepalive.status()).as("a keepalive: %s", keepalive).isEqualTo(503);
        assertRollbackProblem(keepalive, highest);

        HttpTestClient.Reply watch = again.send("GET", "/v1/watch?name=pay/ledger&since_revision=0", (byte[]) null, null,
                Duration.ofSeconds(10));
        assertThat(watch.status()).as("a watch: %s", watch).isEqualTo(503);
        assertRollbackProblem(watch, highest);

        HttpTestClient.Reply ready = again.get("/health/ready");
        assertThat(ready.status()).isEqualTo(503);
        assertThat(ready.json().path("detail").asText()).contains("rolled back");
        assertThat(metric(again, "warden_zookeeper_rolled_back")).isEqualTo(1.0);
        assertThat(metric(again, "warden_zookeeper_rollbacks_detected_total")).isEqualTo(1.0);

        // The operator raises the token floor above what the gateway says it saw; the gateway serves again by itself.
        long mark = assertRollbackProblem(acquire, highest);
        assertThat(floorCommand("raise", "--above", Long.toString(mark))).as("the command: %s", lastFloorOutput).isZero();
        assertThat(lastFloorOutput).contains("raised the token floor");
        WardenFixture.await("the gateway to serve the cell again", Duration.ofSeconds(30),
                () -> again.get("/health/ready").status() == 200);
        assertThat(metric(again, "warden_zookeeper_rolled_back")).isEqualTo(0.0);

        // Every token from now on is above every token handed out before, the lost ones included; the session's
        // keepalive is acknowledged again; a watch sees the new grants with their tokens.
        HttpTestClient.Reply ka = again.post("/v1/sessions/" + session + "/keepalive", "{}");
        assertThat(ka.status()).as(ka.toString()).isEqualTo(200);
        List<Long> after = grantAndRelease(again, session, "pay/ledger", 5);
        assertThat(after).allSatisfy(t -> assertThat(t).isGreaterThan(highest));
        assertThat(after).doesNotContainAnyElementsOf(lost).doesNotContainAnyElementsOf(before);
        for (int i = 1; i < after.size(); i++) {
            assertThat(after.get(i)).isGreaterThan(after.get(i - 1));
        }

        // A hold taken now keeps its token across a further raise; holds after that raise are above it again.
        HttpTestClient.Reply held = again.postJson("/v1/acquire", "session_id", session, "name", "pay/held");
        long heldToken = held.json().get("token").asLong();
        assertThat(floorCommand("raise", "--to", Long.toString(second.cellGuard().tokens().current() + 1_000_000)))
                .as("the command: %s", lastFloorOutput).isZero();
        WardenFixture.await("the gateway to know the second raise", Duration.ofSeconds(30),
                () -> metric(again, "warden_token_floor") >= 1_000_000);
        assertThat(again.get("/v1/check?name=pay/held&token=" + heldToken).json().path("current").asBoolean()).isTrue();
        assertThat(again.get("/v1/locks/pay/held").json().path("holders").get(0).path("token").asLong()).isEqualTo(heldToken);
        HttpTestClient.Reply released = again.postJson("/v1/release", "session_id", session, "name", "pay/held",
                "token", heldToken);
        assertThat(released.json().path("released").asBoolean()).as(released.toString()).isTrue();
        List<Long> later = grantAndRelease(again, session, "pay/held", 1);
        assertThat(later.get(0)).isGreaterThan(heldToken + 1_000_000);
    }

    /**
     * When other clients' writes have carried the cell's zxids past what the gateway saw, {@code token-floor raise
     * --above} has nothing to raise ("nothing changed"); the refusing gateway must check the cell again all the same
     * and serve it, not wait for a reconnection that may never come.
     */
    @Test
    void aRaiseThatFindsNothingToRaise_stillHasTheRefusingGatewayCheckAgain_andServe() throws Exception {
        RolledBack rb = rollBack();
        long mark = assertRollbackProblem(rb.acquire(), rb.highest());
        // Writes of another ZooKeeper client (a new one: it has seen nothing of the lost history), until the cell's
        // zxid is past the mark.
        try (var other = org.apache.curator.framework.CuratorFrameworkFactory.newClient(fx.server.getConnectString(),
                new org.apache.curator.retry.RetryOneTime(100))) {
            other.start();
            other.create().orSetData().forPath("/scratch");
            long zxid = 0;
            while (zxid <= mark) {
                zxid = other.setData().forPath("/scratch", new byte[0]).getMzxid();
            }
        }
        assertThat(rb.http().get("/health/ready").status()).as("still refused: nothing told it").isEqualTo(503);

        assertThat(floorCommand("raise", "--above", Long.toString(mark))).as("the command: %s", lastFloorOutput).isZero();
        assertThat(lastFloorOutput).contains("nothing to raise");
        WardenFixture.await("the gateway to serve the cell again", Duration.ofSeconds(30),
                () -> rb.http().get("/health/ready").status() == 200);
        List<Long> after = grantAndRelease(rb.http(), rb.session(), "pay/ledger", 3);
        assertThat(after).allSatisfy(t -> assertThat(t).isGreaterThan(mark));
    }

    /**
     * An ensemble that lost all its data under a running gateway (every server started empty): the cell has no token
     * floor node, so no check can be made. The gateway serves nothing, its readiness says why and what to run (it
     * logged "could not check" every half second and said nothing more before), and the operator's raise brings it
     * back with every token above what it saw.
     */
    @Test
    void anEnsembleWipedUnderARunningGateway_saysWhyItServesNothing_untilTheTokenFloorIsRaised() throws Exception {
        Gateway gw = fx.gateway(fx.config().toBuilder().dataDir(gatewayData).build());
        HttpTestClient http = new HttpTestClient(gw.httpPort(), OpenApiContract.load());
        List<Long> before = grantAndRelease(http, openSession(http, "before"), "pay/ledger", 20);

        Path zkData = fx.server.getTempDirectory().toPath();
        fx.server.stop();
        deleteRecursively(zkData);
        Files.createDirectories(zkData);
        fx.server.restart();

        WardenFixture.await("the gateway to say its cell has no token floor", Duration.ofSeconds(60),
                () -> http.get("/health/ready").json().path("detail").asText().contains("no token floor node"));
        HttpTestClient.Reply ready = http.get("/health/ready");
        assertThat(ready.status()).isEqualTo(503);
        String detail = ready.json().path("detail").asText();
        assertThat(detail).contains("token-floor raise --above ");
        long mark = Long.parseLong(detail.replaceAll("(?s).*--above (\\d+).*", "$1"));
        assertThat(mark).as("the highest token the gateway saw").isGreaterThanOrEqualTo(before.get(before.size() - 1));

        assertThat(floorCommand("raise", "--above", Long.toString(mark))).as("the command: %s", lastFloorOutput).isZero();
        WardenFixture.await("the gateway to serve the cell again", Duration.ofSeconds(30),
                () -> http.get("/health/ready").status() == 200);
        List<Long> after = grantAndRelease(http, openSession(http, "after"), "pay/ledger", 3);
        assertThat(after).allSatisfy(t -> assertThat(t).isGreaterThan(mark));
    }

    /** Checks the refusal and returns the token the gateway says to raise the floor above. */
    private static long assertRollbackProblem(HttpTestClient.Reply reply, long highestToken) {
        assertThat(reply.isProblem()).as(reply.toString()).isTrue();
        JsonNode problem = reply.json();
        assertThat(problem.path("code").asText()).isEqualTo("UNAVAILABLE");
        String detail = problem.path("detail").asText();
        assertThat(detail).as("the cause").contains("rolled back");
        assertThat(detail).as("what to do").contains("token-floor raise --above ");
        long mark = Long.parseLong(detail.replaceAll("(?s).*--above (\\d+).*", "$1"));
        assertThat(mark).as("the highest token the gateway has seen").isGreaterThanOrEqualTo(highestToken);
        return mark;
    }

    private static String openSession(HttpTestClient http, String client) {
        HttpTestClient.Reply r = http.postJson("/v1/sessions", "client_id", client, "ttl_ms", 60_000);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("session_id").asText();
    }

    /** {@code n} grants of {@code name}, each released at once; their tokens in order. */
    private static List<Long> grantAndRelease(HttpTestClient http, String session, String name, int n) {
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", session, "name", name,
                    "request_id", UUID.randomUUID().toString());
            assertThat(r.status()).as(r.toString()).isEqualTo(200);
            assertThat(r.json().get("status").asText()).isEqualTo("GRANTED");
            long token = r.json().get("token").asLong();
            tokens.add(token);
            HttpTestClient.Reply rel = http.postJson("/v1/release", "session_id", session, "name", name, "token", token);
            assertThat(rel.json().get("released").asBoolean()).as(rel.toString()).isTrue();
        }
        return tokens;
    }

    private static double metric(HttpTestClient http, String name) {
        for (String line : http.get("/metrics").text().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no metric " + name);
    }

    private static void copy(Path from, Path to) throws IOException {
        try (var paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        try (var paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
