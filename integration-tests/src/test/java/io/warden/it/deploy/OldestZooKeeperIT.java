package io.warden.it.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.it.support.Await;
import io.warden.it.support.ChildProcess;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.WardenClient;
import io.warden.it.support.ZkEnsemble;
import io.warden.it.support.ZooKeeperRelease;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The oldest ZooKeeper release docs/running-without-ansible.md claims, tested: a gateway (with the build's ZooKeeper
 * client) on a three-server ensemble of that release's servers does what it needs of the servers. Its start-up check
 * of the cell (a {@code /probe} write, the token floor's listing, its watches) passes; a session's acquire is granted
 * with a token, a second one queues behind it and is handed the lock with a larger token on release (multi
 * transactions, container nodes); a watch stream gets the events with their revisions, which are the zxids the servers
 * put on watch events (the gateway warns when they do not). Then the servers are restored from a backup taken before
 * the locks: the gateway, started again with its data directory, refuses the cell until the token floor is raised
 * ({@code token-floor raise}, a multi), and then its tokens are above every earlier one.
 *
 * <p>Costs about 40 s: three servers started three times, a gateway twice, one floor raise.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class OldestZooKeeperIT {
    private static final String NAME = "compat/ledger";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void aGateway_onServersOfTheOldestReleaseClaimed_locksQueuesWatches_andRefusesACellRestoredFromABackup()
            throws Exception {
        ZooKeeperRelease oldest = ZooKeeperRelease.oldestClaimed();
        JavaLauncher launcher = JavaLauncher.forRun("OldestZooKeeperIT");
        Path gatewayData = Files.createTempDirectory("warden-oldest-zk-gw-");
        ZkEnsemble.Options options = new ZkEnsemble.Options(500, false, List.of("-Xms32m", "-Xmx128m", "-XX:+UseSerialGC"))
                .withServerClasspath(oldest.serverClasspath());
        Path logback = launcher.logbackConfig("gateway", "INFO",
                Map.of("io.warden", "DEBUG", "org.apache.zookeeper", "WARN", "org.eclipse.jetty", "WARN"));
        List<String> gatewayJvm = List.of("-Xms64m", "-Xmx256m", "-Dlogback.configurationFile=" + logback);
        List<String> gatewayArgs = List.of("--data-dir", gatewayData.toString());
        try (ZkEnsemble zk = ZkEnsemble.start(launcher, 3, options)) {
            zk.awaitQuorum(Duration.ofSeconds(60));
            for (int i = 0; i < zk.size(); i++) {
                assertThat(ZkEnsemble.fourLetterWord(zk.clientPort(i), "srvr"))
                        .as("zk%d's srvr: the servers run the release under test", i + 1)
                        .contains("Zookeeper version: " + oldest.version() + "-");
            }

            long highest;
            try (GatewayProcess gw = GatewayProcess.start(launcher, "gw1", zk.connectString(), 4000, gatewayJvm,
                    gatewayArgs)) {
                // Ready only once the start-up check of the cell has decided (the probe write, the floor's listing).
                gw.awaitReady(Duration.ofSeconds(60));
                // A backup of the servers' data, the cell made but nothing locked yet: restored below, it is an
                // ensemble that lost every write after it.
                copyData(zk, "version-2", "backup");
                gw.awaitReady(Duration.ofSeconds(60));
                URI base = gw.baseUri();
                WardenClient client = new WardenClient(WardenClient.newHttpClient(), List.of(base), 0,
                        Duration.ofSeconds(10));

                List<String> watched = new CopyOnWriteArrayList<>();
                CompletableFuture<Void> watch = http.sendAsync(
                        HttpRequest.newBuilder(base.resolve("/v1/watch?name=" + NAME + "&since_revision=0")).GET().build(),
                        HttpResponse.BodyHandlers.ofLines()).thenAccept(r -> r.body().forEach(watched::add));
                Await.until("the watch's RESYNC", Duration.ofSeconds(30), Duration.ofMillis(50),
                        () -> watched.contains("event: RESYNC"));

                String alice = client.openSession("alice", 60_000).id();
                String bob = client.openSession("bob", 60_000).id();
                WardenClient.Acquired first = client.acquire(alice, NAME, "EXCLUSIVE", 0, "alice-1", null);
                assertThat(first.status()).isEqualTo("GRANTED");
                WardenClient.Acquired waiting = client.acquire(bob, NAME, "EXCLUSIVE", 0, "bob-1", "KEEP");
                assertThat(waiting.status()).isEqualTo("QUEUED");
                assertThat(waiting.position()).isEqualTo(1);

                assertThat(client.release(alice, NAME, first.token()).released()).isTrue();
                WardenClient.Acquired handedOver = client.acquire(bob, NAME, "EXCLUSIVE", 10_000, "bob-1", "KEEP");
                assertThat(handedOver.status()).isEqualTo("GRANTED");
                assertThat(handedOver.token()).as("the next holder's token").isGreaterThan(first.token());
                JsonNode lock = client.lock(NAME);
                assertThat(lock.path("holders").get(0).path("token").asLong()).isEqualTo(handedOver.token());

                // alice's GRANTED and RELEASED, bob's QUEUED and GRANTED, each transaction's last event with its id.
                Await.until("the watch's events", Duration.ofSeconds(30), Duration.ofMillis(50),
                        () -> watched.stream().filter(l -> l.equals("event: GRANTED")).count() == 2
                                && watched.contains("event: RELEASED"));
                List<Long> ids = watched.stream().filter(l -> l.startsWith("id: "))
                        .map(l -> Long.parseLong(l.substring(4).trim())).toList();
                assertThat(ids).as("the watch's revisions (zxids of the servers' watch events)").isSorted()
                        .doesNotHaveDuplicates().allMatch(id -> id > 0);
                assertThat(ids.get(ids.size() - 1)).as("the revision of the grant to bob")
                        .isGreaterThanOrEqualTo(handedOver.token());
                assertThat(Files.readString(gw.process().log(), StandardCharsets.UTF_8))
                        .as("the gateway's log").doesNotContain("reports no zxid with watch events");
                watch.cancel(true);

                assertThat(client.release(bob, NAME, handedOver.token()).released()).isTrue();
                // More grants, so that the writes the restore below loses are many: the restored cell's own writes
                // (sessions, probes) cannot catch up with them during the test.
                highest = handedOver.token();
                for (int i = 0; i < 25; i++) {
                    WardenClient.Acquired more = client.acquire(alice, NAME, "EXCLUSIVE", 0, "alice-more-" + i, null);
                    assertThat(more.token()).isGreaterThan(highest);
                    highest = more.token();
                    assertThat(client.release(alice, NAME, highest).released()).isTrue();
                }
                // Stopped as systemd or docker stop would: it drains and writes its mark of the cell.
                gw.terminate();
                assertThat(gw.process().awaitExit(Duration.ofSeconds(30))).as("the gateway stops on SIGTERM").isTrue();
            }

            // The servers are restored from the backup: every write since it is gone.
            copyData(zk, "backup", "version-2");

            // The gateway starts again with its data directory: it reads its mark of the cell and refuses the cell.
            try (GatewayProcess gw = GatewayProcess.start(launcher, "gw1", zk.connectString(), 4000, gatewayJvm,
                    gatewayArgs)) {
                String refusal = awaitRefused(gw.baseUri(), "at start");
                long above = Long.parseLong(refusal.replaceAll("(?s).*--above (\\d+).*", "$1"));
                assertThat(above).as("the token the gateway says to raise the floor above").isGreaterThanOrEqualTo(highest);

                ChildProcess raise = launcher.startJar("token-floor-raise", List.of("-Xmx128m"),
                        GatewayProcess.serviceJar(), List.of("token-floor", "raise", "--above", Long.toString(above),
                                "--zk", zk.connectString()));
                assertThat(raise.awaitExit(Duration.ofSeconds(60))).as("the raise ends").isTrue();
                assertThat(raise.exitValue()).as(raise.logTail(20)).isZero();

                gw.awaitReady(Duration.ofSeconds(60));
                WardenClient client = new WardenClient(WardenClient.newHttpClient(), List.of(gw.baseUri()), 0,
                        Duration.ofSeconds(10));
                String carol = client.openSession("carol", 60_000).id();
                WardenClient.Acquired after = client.acquire(carol, NAME, "EXCLUSIVE", 0, "carol-1", null);
                assertThat(after.status()).isEqualTo("GRANTED");
                assertThat(after.token()).as("a token after the floor raise").isGreaterThan(highest);
            }
        } finally {
            deleteRecursively(gatewayData);
        }
    }

    /**
     * Stops every server (kill -9), replaces each one's data directory {@code to} with a copy of {@code from}, and
     * starts them again.
     */
    private static void copyData(ZkEnsemble zk, String from, String to) throws IOException {
        for (int i = 0; i < zk.size(); i++) {
            zk.kill(i);
        }
        for (int i = 0; i < zk.size(); i++) {
            Path dir = zk.dataRoot().resolve("zk" + (i + 1));
            deleteRecursively(dir.resolve(to));
            copyRecursively(dir.resolve(from), dir.resolve(to));
            zk.restart(i);
        }
        zk.awaitQuorum(Duration.ofSeconds(60));
    }

    private static void copyRecursively(Path from, Path to) throws IOException {
        try (var paths = Files.walk(from)) {
            for (Path p : paths.toList()) {
                Files.copy(p, to.resolve(from.relativize(p).toString()));
            }
        }
    }

    /** Waits until {@code /health/ready} answers 503 for a rolled-back cell; returns its body. Fails on a 200. */
    private String awaitRefused(URI base, String when) {
        String[] body = new String[1];
        Await.until("the gateway to refuse the cell " + when, Duration.ofSeconds(60), Duration.ofMillis(200), () -> {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/health/ready"))
                        .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 503 && r.body().contains("rolled back")) {
                    body[0] = r.body();
                    return true;
                }
                return false; // not connected yet, or connected on its old session: not decided
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
        assertThat(body[0]).contains("token-floor raise");
        return body[0];
    }

    static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
