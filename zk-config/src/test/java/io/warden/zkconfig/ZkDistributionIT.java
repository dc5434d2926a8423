package io.warden.zkconfig;

import static io.warden.zkconfig.ItSupport.DEV_ENSEMBLE;
import static io.warden.zkconfig.ItSupport.DIST_NAME;
import static io.warden.zkconfig.ItSupport.MODULE;
import static io.warden.zkconfig.ItSupport.TARBALL;
import static io.warden.zkconfig.ItSupport.awaitTrue;
import static io.warden.zkconfig.ItSupport.fourLetterWord;
import static io.warden.zkconfig.ItSupport.run;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The server distribution as an operator uses it (the commands of zk-config/README.md): the tarball's layout,
 * {@code bin/zk-server --check}, and a real 3-server ensemble on loopback started by {@code bin/dev-ensemble} from
 * the tarball with {@code bin/zk-server}, then used through a ZooKeeper client: TTL and container nodes (and their
 * removal), multi, sync and a persistent recursive watch with event zxids, the four-letter words, the
 * AdminServer and the Prometheus endpoint. Runs in {@code mvn verify} after {@code package} built the tarball.
 */
// "try": ZooKeeper.close() may throw InterruptedException; the tests declare it anyway.
@SuppressWarnings("try")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ZkDistributionIT {

    private static Path work;
    private static Path home;
    private static Path ensemble;
    private static java.util.Map<String, String> env;
    private static int[] clientPorts;
    private static int[] adminPorts;
    private static int[] metricsPorts;
    private static final List<Long> serverPids = new ArrayList<>();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(TARBALL).as("the distribution; build it with mvn -pl zk-config package").isRegularFile();
        work = ItSupport.workDir("distribution");
        ItSupport.Result untar = run(java.util.Map.of(), "tar", "-xzf", TARBALL.toString(), "-C", work.toString());
        assertThat(untar.status()).as(untar.output()).isZero();
        home = work.resolve(DIST_NAME);
        ensemble = work.resolve("ensemble");
        int[] bases = ItSupport.freePortBlocks(5, 3);
        clientPorts = ItSupport.block(bases[0]);
        adminPorts = ItSupport.block(bases[3]);
        metricsPorts = ItSupport.block(bases[4]);
        env = new HashMap<>();
        env.put("DEV_ZK_DIST", TARBALL.toString());
        env.put("DEV_ZK_BASE_PORT", Integer.toString(bases[0]));
        env.put("DEV_ZK_QUORUM_BASE_PORT", Integer.toString(bases[1]));
        env.put("DEV_ZK_ELECTION_BASE_PORT", Integer.toString(bases[2]));
        env.put("DEV_ZK_ADMIN_BASE_PORT", Integer.toString(bases[3]));
        env.put("DEV_ZK_METRICS_BASE_PORT", Integer.toString(bases[4]));
        env.put("JAVA_HOME", System.getProperty("java.home"));
    }

    @AfterAll
    static void stopEverything() throws Exception {
        ItSupport.stopEnsemble(ensemble, env, serverPids);
    }

    @Test
    @Order(1)
    void tarball_holdsTheServerJarsTheConfigurationAndAnExecutableLauncher() throws Exception {
        assertThat(Files.readString(home.resolve("VERSION"))).contains("warden-zookeeper 3.9.5", "Apache ZooKeeper 3.9.5");
        List<String> jars;
        try (Stream<Path> lib = Files.list(home.resolve("lib"))) {
            jars = lib.map(p -> p.getFileName().toString()).toList();
        }
        assertThat(jars).contains("zookeeper-3.9.5.jar", "zookeeper-jute-3.9.5.jar", "snappy-java-1.1.10.5.jar",
                "metrics-core-4.1.12.1.jar", "slf4j-api-2.0.20.jar")
                .anyMatch(j -> j.startsWith("logback-classic-")).anyMatch(j -> j.startsWith("netty-handler-"))
                .anyMatch(j -> j.startsWith("jetty-server-9.4.")).anyMatch(j -> j.startsWith("warden-zk-config-"))
                .noneMatch(j -> j.startsWith("junit") || j.startsWith("assertj") || j.contains("tcnative"));
        Path launcher = home.resolve("bin/zk-server");
        assertThat(Files.getPosixFilePermissions(launcher)).contains(PosixFilePermission.OWNER_EXECUTE,
                PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);
        ItSupport.Result listing = run(java.util.Map.of(), "tar", "-tvzf", TARBALL.toString());
        assertThat(listing.output().lines().filter(l -> l.endsWith(DIST_NAME + "/bin/zk-server")))
                .singleElement().asString().startsWith("-rwxr-xr-x");
        for (String conf : List.of("zoo-common.cfg", "ensemble-3/zoo.cfg", "ensemble-5/zoo.cfg", "tls/zoo-tls.cfg",
                "sasl/zoo-sasl.cfg", "sasl/jaas.conf", "java.env", "logback.xml")) {
            assertThat(home.resolve("conf").resolve(conf)).as(conf).hasSameBinaryContentAs(MODULE.resolve("conf").resolve(conf));
        }
    }

    @Test
    @Order(2)
    void zkServerCheck_acceptsAGeneratedConfig_andNamesAMisspeltKey() throws Exception {
        Path checks = work.resolve("checks");
        ItSupport.Result init = run(env, "bash", DEV_ENSEMBLE, "init", checks.toString());
        assertThat(init.status()).as(init.output()).isZero();
        ItSupport.Result valid = run(env, home.resolve("bin/zk-server").toString(), "--check", checks.resolve("zk2").toString());
        assertThat(valid.status()).as(valid.output()).isZero();
        assertThat(valid.output()).contains("is valid: server 2 of 3 voting members, tickTime 2000 ms");

        Path cfg = checks.resolve("zk1/zoo.cfg");
        Files.writeString(cfg, Files.readString(cfg).replace("extendedTypesEnabled=true", "extendedTypesEnable=true"));
        ItSupport.Result invalid = run(env, home.resolve("bin/zk-server").toString(), "--check", checks.resolve("zk1").toString());
        assertThat(invalid.status()).isEqualTo(2);
        assertThat(invalid.output()).contains("extendedTypesEnable: unknown key", "did you mean extendedTypesEnabled?");

        ItSupport.Result noConfig = run(env, home.resolve("bin/zk-server").toString(), work.toString());
        assertThat(noConfig.status()).isEqualTo(1);
        assertThat(noConfig.output().strip()).isEqualTo("zk-server: no zoo.cfg in " + work);
    }

    @Test
    @Order(3)
    void devEnsemble_startsThreeServersFromTheTarball_andWaitsForALeader() throws Exception {
        ItSupport.Result start = run(env, "bash", DEV_ENSEMBLE, "start", ensemble.toString());
        serverPids.addAll(ItSupport.serverPids(ensemble, 3));
        assertThat(start.status()).as(start.output()).isZero();
        assertThat(start.output()).contains("connect string: " + connectString());
        assertThat(serverPids).hasSize(3);
        for (long pid : serverPids) {
            String command = ProcessHandle.of(pid).flatMap(p -> p.info().commandLine()).orElse("");
            assertThat(command).contains("org.apache.zookeeper.server.quorum.QuorumPeerMain", ensemble.resolve("dist").toString());
        }
        List<String> modes = new ArrayList<>();
        for (int port : clientPorts) {
            modes.add(fourLetterWord(port, "srvr").lines().filter(l -> l.startsWith("Mode: ")).findFirst().orElse("?"));
        }
        assertThat(modes).containsExactlyInAnyOrder("Mode: leader", "Mode: follower", "Mode: follower");
        ItSupport.Result status = run(env, "bash", DEV_ENSEMBLE, "status", ensemble.toString());
        assertThat(status.status()).as(status.output()).isZero();
        assertThat(status.output()).contains("leader", "connect string: " + connectString());
    }

    @Test
    @Order(4)
    void ensemble_servesWhatWardenNeeds_ttlAndContainerNodesMultiSyncAndEventZxids() throws Exception {
        try (ZooKeeper zk = connect()) {
            byte[] data = "warden".getBytes(StandardCharsets.UTF_8);
            // A TTL node needs extendedTypesEnabled=true; it goes once it is older than its TTL and childless.
            Stat ttlStat = new Stat();
            zk.create("/it-ttl", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_WITH_TTL, ttlStat, 500);
            assertThat(zk.getData("/it-ttl", false, null)).isEqualTo(data);
            // A CONTAINER node (Warden's lock nodes) goes once its last child is gone.
            zk.create("/it-lock", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER);
            // Warden's event revisions: a persistent recursive watch reports the zxid of each change (3.9 servers).
            java.util.concurrent.BlockingQueue<WatchedEvent> events = new LinkedBlockingQueue<>();
            zk.addWatch("/it-lock", events::add, AddWatchMode.PERSISTENT_RECURSIVE);
            var results = zk.multi(List.of(
                    Op.create("/it-lock/_c_1-__WRIT__", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL),
                    Op.setData("/it-lock", data, -1)));
            String queueNode = ((org.apache.zookeeper.OpResult.CreateResult) results.get(0)).getPath();
            Stat queueStat = zk.exists(queueNode, false);
            WatchedEvent created = events.poll(10, TimeUnit.SECONDS);
            assertThat(created).isNotNull();
            assertThat(created.getType()).isEqualTo(Watcher.Event.EventType.NodeCreated);
            assertThat(created.getZxid()).isEqualTo(queueStat.getCzxid()).isPositive();
            CountDownLatch synced = new CountDownLatch(1);
            zk.sync("/it-lock", (rc, path, ctx) -> synced.countDown(), null);
            assertThat(synced.await(10, TimeUnit.SECONDS)).isTrue();
            zk.delete(queueNode, -1);
            // Reaped by the container manager (every second in dev-ensemble's java.env).
            awaitTrue("the empty container /it-lock is removed", Duration.ofSeconds(30), () -> !exists(zk, "/it-lock"));
            awaitTrue("the expired TTL node /it-ttl is removed", Duration.ofSeconds(30), () -> !exists(zk, "/it-ttl"));
        }
    }

    @Test
    @Order(5)
    void ensemble_answersWhitelistedFourLetterWordsTheAdminServerAndPrometheus() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(fourLetterWord(clientPorts[i], "ruok").strip()).isEqualTo("imok");
            assertThat(fourLetterWord(clientPorts[i], "isro").strip()).isEqualTo("rw");
            assertThat(fourLetterWord(clientPorts[i], "mntr")).contains("zk_znode_count");
            assertThat(fourLetterWord(clientPorts[i], "stat")).contains("not in the whitelist");
            HttpResponse<String> admin = get("http://127.0.0.1:" + adminPorts[i] + "/commands/srvr");
            assertThat(admin.statusCode()).isEqualTo(200);
            assertThat(admin.body()).containsPattern("\"server_state\" : \"(leader|follower)\"");
            HttpResponse<String> restore = get("http://127.0.0.1:" + adminPorts[i] + "/commands/restore");
            assertThat(restore.body()).doesNotContain("\"error\" : null");
            HttpResponse<String> metrics = get("http://127.0.0.1:" + metricsPorts[i] + "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body()).containsPattern("(?m)^zk_znode_count \\d+$")
                    .containsPattern("(?m)^zk_uptime \\d+$").contains("jvm_memory_bytes_used{area=\"heap\"}");
        }
        // java.env's JVM flag reached the leader's container manager; each server logs to its ZK_LOG_DIR.
        List<String> containerManagerLines = new ArrayList<>();
        for (int n = 1; n <= 3; n++) {
            assertThat(ensemble.resolve("zk" + n + "/log/gc.log")).isRegularFile();
            Files.readString(ensemble.resolve("zk" + n + "/log/zookeeper.log")).lines()
                    .filter(l -> l.contains("Using checkIntervalMs=")).forEach(containerManagerLines::add);
        }
        assertThat(containerManagerLines).isNotEmpty().allMatch(l -> l.contains("Using checkIntervalMs=1000 "));
    }

    @Test
    @Order(6)
    void devEnsembleStop_stopsEveryServer() throws Exception {
        ItSupport.Result stop = run(env, "bash", DEV_ENSEMBLE, "stop", ensemble.toString());
        assertThat(stop.status()).as(stop.output()).isZero();
        for (long pid : serverPids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("server pid " + pid).isFalse();
        }
        ItSupport.Result status = run(env, "bash", DEV_ENSEMBLE, "status", ensemble.toString());
        assertThat(status.status()).isEqualTo(3);
        assertThat(status.output()).contains("zk1 stopped", "zk2 stopped", "zk3 stopped");
    }

    private static String connectString() {
        return ItSupport.connectString(clientPorts);
    }

    private static ZooKeeper connect() throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connectString(), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(20, TimeUnit.SECONDS)) {
            zk.close();
            throw new AssertionError("no ZooKeeper connection to " + connectString());
        }
        return zk;
    }

    private static boolean exists(ZooKeeper zk, String path) {
        try {
            return zk.exists(path, false) != null;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
