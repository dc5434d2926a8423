package io.warden.it.jepsen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.it.support.Await;
import io.warden.it.support.ChildProcess;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.ZkEnsemble;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A rolled-back ensemble, with real processes: three ZooKeeper servers and a gateway.
 *
 * <p>The story, as it was measured: a server (C) is down for maintenance while the two others (A, B) commit grants;
 * A crashes and B's disk is replaced (an empty data directory, the same id, as docs/operations.md describes replacing a
 * failed server). B and the stale C form a quorum and C leads: every write since C stopped is gone, and since C had
 * not seen the epoch A and B were in, the new leader counts zxids (the tokens) over the same range again. Before the
 * fix, the 60 grants after the rollback reused the 60 tokens of the lost ones.
 *
 * <p>Each step waits for its condition (server modes by {@code srvr}, the gateway's answers), never for a time. The
 * gateway remembers the highest zxid it saw; once its ZooKeeper client gets a new session on the rolled-back cell
 * (the servers refuse its old one: they have not seen its zxid), it must refuse grants, keepalives and watches with a
 * 503 naming the cause, and serve again only once the operator has raised the token floor; every token after that is
 * above every token before.
 */
class RollbackIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NAME = "pay/ledger";
    private static final int GRANTS = 30;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void aRolledBackEnsemble_isRefused_andAfterTheFloorIsRaisedEveryTokenIsAboveEveryEarlierOne() throws Exception {
        JavaLauncher launcher = JavaLauncher.forRun("rollback");
        Path gatewayData = Files.createTempDirectory("warden-gw-data-");
        try (ZkEnsemble zk = ZkEnsemble.start(launcher, 3, new ZkEnsemble.Options(500, false,
                List.of("-Xms32m", "-Xmx128m", "-XX:+UseSerialGC")))) {
            zk.awaitQuorum(Duration.ofSeconds(60));
            Path logback = launcher.logbackConfig("gateway", "INFO",
                    Map.of("io.warden", "DEBUG", "org.apache.zookeeper", "WARN", "org.eclipse.jetty", "WARN"));
            try (GatewayProcess gw = GatewayProcess.start(launcher, "gw1", zk.connectString(), 4000,
                    List.of("-Xms64m", "-Xmx256m", "-Dlogback.configurationFile=" + logback),
                    List.of("--data-dir", gatewayData.toString()))) {
                gw.awaitReady(Duration.ofSeconds(60));
                URI base = gw.baseUri();
                String session = openSession(base);
                List<Long> before = new ArrayList<>();
                // Grants every server has: the session and these survive the rollback.
                for (int i = 0; i < GRANTS / 3; i++) {
                    long token = grant(base, session).orElseThrow(() -> new AssertionError("no grant with all servers up"));
                    before.add(token);
                    release(base, session, token);
                }

                // C, the leader, goes down for maintenance: A and B elect a leader of a new epoch, one C never sees.
                int c = awaitLeader(zk);
                int a = (c + 1) % 3;
                int b = (c + 2) % 3;
                zk.kill(c);
                awaitExit(zk.server(c));
                zk.awaitQuorum(Duration.ofSeconds(60));
                gw.awaitReady(Duration.ofSeconds(60));
                for (int i = 0; i < GRANTS; i++) {
                    long token = grant(base, session).orElseThrow(() -> new AssertionError("no grant before the rollback"));
                    before.add(token);
                    release(base, session, token);
                }
                long highest = Collections.max(before);
                // A watch open across the rollback: it must end, never show the cell's revisions going back.
                List<String> watched = new java.util.concurrent.CopyOnWriteArrayList<>();
                java.util.concurrent.CompletableFuture<Void> watchEnded = http.sendAsync(HttpRequest.newBuilder(
                                base.resolve("/v1/watch?name=" + NAME + "&since_revision=0")).GET().build(),
                        HttpResponse.BodyHandlers.ofLines()).thenAccept(r -> r.body().forEach(watched::add));
                Await.until("the watch's RESYNC", Duration.ofSeconds(30), Duration.ofMillis(50),
                        () -> watched.stream().anyMatch(l -> l.equals("event: RESYNC")));

                // A crashes; B's disk is replaced; C comes back from maintenance and leads B.
                zk.kill(a);
                zk.kill(b);
                awaitExit(zk.server(a));
                awaitExit(zk.server(b));
                Path bData = zk.dataRoot().resolve("zk" + (b + 1)).resolve("version-2");
                deleteRecursively(bData);
                zk.restart(b);
                zk.restart(c);
                zk.awaitQuorum(Duration.ofSeconds(60));
                assertThat(zk.mode(c)).as("the stale server leads: %s", zk.describe()).isEqualTo(ZkEnsemble.Mode.LEADER);

                // The gateway's ZooKeeper client cannot resume its session (the servers have not seen its zxid); once
                // it has a new one, an acquire must be refused for the rollback, never granted.
                String[] refusal = new String[1];
                Await.until("the gateway to answer an acquire on the rolled-back cell", Duration.ofSeconds(60),
                        Duration.ofMillis(200), () -> {
                            Reply r = post(base, "/v1/acquire", Map.of("session_id", session, "name", NAME,
                                    "request_id", UUID.randomUUID().toString()));
                            if (r.status == 200) {
                                long t = r.json().path("token").asLong();
                                throw new AssertionError("granted " + NAME + " with token " + t + " on the rolled-back cell"
                                        + (before.contains(t) ? ", a token already given before the rollback" : "")
                                        + "; tokens before: " + before.get(0) + ".." + highest);
                            }
                            if (r.status == 404 || r.status == 400 || r.status == 500) {
                                throw new AssertionError("unexpected answer on the rolled-back cell: " + r.status + " "
                                        + r.text);
                            }
                            if (r.status == 503 && r.text.contains("rolled back")) {
                                refusal[0] = r.json().path("detail").asText();
                                return true;
                            }
                            return false; // 503 for another reason (no session yet, no quorum): not decided yet
                        }, zk::describe);
                assertThat(refusal[0]).contains("token-floor raise");
                long reported = Long.parseLong(refusal[0].replaceAll("(?s).*--above (\\d+).*", "$1"));
                assertThat(reported).as("the token the gateway says to raise the floor above").isGreaterThanOrEqualTo(highest);

                // The open watch was ended with the cause, and its revisions never went back.
                Await.until("the open watch to end", Duration.ofSeconds(30), Duration.ofMillis(100), watchEnded::isDone);
                assertThat(watched).anyMatch(l -> l.startsWith(": closing: the ZooKeeper cell was rolled back"));
                List<Long> ids = watched.stream().filter(l -> l.startsWith("id: "))
                        .map(l -> Long.parseLong(l.substring(4).trim())).toList();
                assertThat(ids).as("the watch's revisions").isSorted();

                Reply keepalive = post(base, "/v1/sessions/" + session + "/keepalive", Map.of());
                assertThat(keepalive.status).as(keepalive.text).isEqualTo(503);
                assertThat(keepalive.text).contains("rolled back");
                Reply watch = get(base, "/v1/watch?name=" + NAME + "&since_revision=0");
                assertThat(watch.status).as(watch.text).isEqualTo(503);
                assertThat(watch.text).contains("rolled back");
                Reply ready = get(base, "/health/ready");
                assertThat(ready.status).isEqualTo(503);
                assertThat(ready.text).contains("rolled back");
                assertThat(get(base, "/metrics").text).contains("warden_zookeeper_rolled_back{cell=\"default\"} 1.0");

                // The operator raises the token floor above the highest token the gateway reports.
                ChildProcess raise = launcher.startJar("token-floor-raise", List.of("-Xmx128m"),
                        GatewayProcess.serviceJar(), List.of("token-floor", "raise", "--above", Long.toString(reported),
                                "--zk", zk.connectString()));
                assertThat(raise.awaitExit(Duration.ofSeconds(60))).as("the command ends").isTrue();
                assertThat(raise.exitValue()).as(raise.logTail(20)).isZero();

                gw.awaitReady(Duration.ofSeconds(60));
                String after = openSession(base);
                for (int i = 0; i < GRANTS; i++) {
                    long token = grant(base, after).orElseThrow(() -> new AssertionError("no grant after the floor raise"));
                    assertThat(token).as("a token after the floor raise").isGreaterThan(highest);
                    assertThat(before).doesNotContain(token);
                    release(base, after, token);
                }
            }
        } finally {
            deleteRecursively(gatewayData);
        }
    }

    private static int awaitLeader(ZkEnsemble zk) {
        int[] leader = new int[1];
        Await.until("a ZooKeeper leader", Duration.ofSeconds(60), Duration.ofMillis(100), () -> {
            Optional<Integer> l = zk.leader();
            l.ifPresent(i -> leader[0] = i);
            return l.isPresent();
        }, zk::describe);
        return leader[0];
    }

    private static void awaitExit(ChildProcess process) {
        assertThat(process.awaitExit(Duration.ofSeconds(30))).as(process + " exits").isTrue();
    }

    private String openSession(URI base) {
        Reply r = post(base, "/v1/sessions", Map.of("client_id", "rollback-it", "ttl_ms", 120_000));
        assertThat(r.status).as(r.text).isEqualTo(201);
        return r.json().path("session_id").asText();
    }

    /** A try-lock of {@link #NAME}: its token when granted. */
    private Optional<Long> grant(URI base, String session) {
        Reply r = post(base, "/v1/acquire", Map.of("session_id", session, "name", NAME,
                "request_id", UUID.randomUUID().toString()));
        assertThat(r.status).as(r.text).isEqualTo(200);
        JsonNode json = r.json();
        return "GRANTED".equals(json.path("status").asText()) ? Optional.of(json.path("token").asLong()) : Optional.empty();
    }

    private void release(URI base, String session, long token) {
        Reply r = post(base, "/v1/release", Map.of("session_id", session, "name", NAME, "token", token));
        assertThat(r.status).as(r.text).isEqualTo(200);
        assertThat(r.json().path("released").asBoolean()).as(r.text).isTrue();
    }

    private record Reply(int status, String text) {
        JsonNode json() {
            try {
                return JSON.readTree(text);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + text, e);
            }
        }
    }

    private Reply post(URI base, String path, Map<String, Object> body) {
        try {
            return send(HttpRequest.newBuilder(base.resolve(path)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private Reply get(URI base, String path) {
        return send(HttpRequest.newBuilder(base.resolve(path)).GET());
    }

    private Reply send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r = http.send(request.timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body());
        } catch (IOException e) {
            return new Reply(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
