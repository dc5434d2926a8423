package io.warden.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.warden.it.support.Await;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.LoopbackPorts;
import io.warden.it.support.WardenClient;
import io.warden.service.support.TestCa;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Gateways against the ensemble zk-config ships for production: its {@code tls/zoo-tls.cfg} (mutual TLS for clients
 * and quorum) and {@code sasl/zoo-sasl.cfg} (DIGEST-MD5, every client must log in) appended to every server's zoo.cfg
 * by {@code dev-ensemble}, its {@code sasl/jaas.conf} with the placeholders filled, and certificates of a test CA
 * (openssl). The gateways are the shaded jar with {@code --zk-tls-*} and {@code --zk-sasl-*} settings, told only the
 * servers' TLS ports (TLS-only as far as they can see).
 *
 * <p>What it shows: a gateway serves locks over TLS and SASL; the console's health panel reaches the TLS-only
 * servers; a client without a login is refused by the ensemble, and another ZooKeeper identity, logged in and with a
 * certificate of the cell's CA, can neither read nor change the cell's nodes ({@code zk-acl auto}); and a cell made open ({@code --zk-acl open}, where that same identity can
 * change everything: the weakness this guards against, seen) is closed at the next start with ACLs.
 */
// "try": ZooKeeper.close() may throw InterruptedException; the tests declare it anyway.
@SuppressWarnings("try")
class SecureZooKeeperIT {
    private static final String STORE_PASSWORD = "it-store-password";
    private static final String WARDEN_PASSWORD = "it-warden-password";
    private static final String OPERATOR_PASSWORD = "it-operator-password";
    private static final Path REPO = Path.of(System.getProperty("warden.repo.root", "..")).toAbsolutePath().normalize();
    private static final Path DIST = Path.of(System.getProperty("warden.zk.dist",
            REPO.resolve("zk-config/target/warden-zookeeper-3.9.5.tar.gz").toString()));

    private static Path work;
    private static TestCa ca;
    private static Path ensemble;
    private static Map<String, String> env;
    private static int[] securePorts;
    private static JavaLauncher launcher;
    private static Configuration previousJaas;

    @BeforeAll
    static void startSecureEnsemble() throws Exception {
        work = Files.createTempDirectory("warden-secure-zk-");
        launcher = JavaLauncher.forRun("secure-zk");
        ca = new TestCa(Files.createDirectories(work.resolve("tls")));
        ca.ca("cell-ca").issue("cell-ca", "zk-server", "IP:127.0.0.1,DNS:localhost")
                .issue("cell-ca", "warden-gateway", "IP:127.0.0.1,DNS:localhost")
                .issue("cell-ca", "operator", "IP:127.0.0.1,DNS:localhost");
        Path tls = ca.dir();
        // The servers' stores, as zoo-tls.cfg names them: server.p12 (key and chain), ca.p12 (the CA), password files.
        run(Map.of(), tls, "openssl", "pkcs12", "-export", "-in", "zk-server.pem", "-inkey", "zk-server.key",
                "-certfile", "cell-ca.pem", "-name", "server", "-out", "server.p12", "-passout", "pass:" + STORE_PASSWORD);
        run(Map.of(), tls, Path.of(System.getProperty("java.home"), "bin", "keytool").toString(), "-importcert",
                "-noprompt", "-alias", "ca", "-file", "cell-ca.pem", "-keystore", "ca.p12", "-storetype", "PKCS12",
                "-storepass", STORE_PASSWORD);
        Files.writeString(tls.resolve("keystore.pass"), STORE_PASSWORD + "\n");
        Files.writeString(tls.resolve("truststore.pass"), STORE_PASSWORD + "\n");
        // The gateway's: PEM, its key and certificate in one file; the CA's certificate as the trust store.
        for (String who : List.of("warden-gateway", "operator")) {
            Files.writeString(tls.resolve(who + "-keystore.pem"),
                    Files.readString(ca.key(who)) + Files.readString(ca.pem(who)));
        }
        Files.writeString(work.resolve("warden.password"), WARDEN_PASSWORD + "\n");

        Path tlsCfg = work.resolve("zoo-tls.cfg");
        Files.writeString(tlsCfg, Files.readString(REPO.resolve("zk-config/conf/tls/zoo-tls.cfg"))
                .replace("/etc/zookeeper/tls/", tls + "/"));
        Path jaas = work.resolve("jaas.conf");
        Files.writeString(jaas, Files.readString(REPO.resolve("zk-config/conf/sasl/jaas.conf"))
                .replace("CHANGE-ME-warden-gateway-password", WARDEN_PASSWORD)
                .replace("CHANGE-ME-operator-password", OPERATOR_PASSWORD)
                .replace("CHANGE-ME-quorum-password", "it-quorum-password"));
        String[] names = {"BASE", "QUORUM_BASE", "ELECTION_BASE", "ADMIN_BASE", "METRICS_BASE", "SECURE_BASE"};
        env = new HashMap<>();
        int[] bases = LoopbackPorts.freeBlocks(names.length, 3);
        for (int i = 0; i < names.length; i++) {
            env.put("DEV_ZK_" + names[i] + "_PORT", Integer.toString(bases[i]));
        }
        securePorts = IntStream.range(0, 3).map(i -> bases[5] + i).toArray();
        ensemble = work.resolve("ensemble");
        env.put("DEV_ZK_DIST", DIST.toString());
        env.put("DEV_ZK_EXTRA_CFG", tlsCfg + ":" + REPO.resolve("zk-config/conf/sasl/zoo-sasl.cfg"));
        env.put("DEV_ZK_JAAS", jaas.toString());
        env.put("JAVA_HOME", System.getProperty("java.home"));
        run(env, work, "bash", REPO.resolve("zk-config/bin/dev-ensemble").toString(), "start", ensemble.toString());

        // This JVM's ZooKeeper clients (the attacker's) log in with JAAS sections of their own.
        previousJaas = Configuration.getConfiguration();
        Configuration.setConfiguration(new Configuration() {
            @Override
            public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
                return "Operator".equals(name) ? new AppConfigurationEntry[] {new AppConfigurationEntry(
                        "org.apache.zookeeper.server.auth.DigestLoginModule",
                        AppConfigurationEntry.LoginModuleControlFlag.REQUIRED,
                        Map.of("username", "operator", "password", OPERATOR_PASSWORD))} : null;
            }
        });
    }

    @AfterAll
    static void stopEnsemble() throws Exception {
        if (previousJaas != null) {
            Configuration.setConfiguration(previousJaas);
        }
        if (ensemble != null) {
            run(env, work, "bash", REPO.resolve("zk-config/bin/dev-ensemble").toString(), "stop", ensemble.toString());
        }
    }

    @Test
    void aGatewayOverTlsAndSasl_servesLocks_theConsoleSeesTheServers_andAnotherIdentityCannotTouchTheCell() throws Exception {
        try (GatewayProcess gw = startGateway("gw-secure", "/secure-cell", List.of())) {
            assertThat(gw.process().logTail(200)).contains("TLS (trust store", "SASL DIGEST-MD5 as warden",
                    "ACL sasl:warden:cdrwa");
            WardenClient client = new WardenClient(WardenClient.newHttpClient(), List.of(gw.baseUri()), 0, Duration.ofSeconds(10));
            WardenClient.Session session = client.openSession("secure-it", 30_000);
            WardenClient.Acquired held = client.acquire(session.id(), "orders/o-1", "EXCLUSIVE", 0, "r-1", "CANCEL");
            assertThat(held.granted()).isTrue();

            // The console's health panel asks every server (TLS-only, as far as the gateway knows) with srvr.
            HttpClient http = HttpClient.newHttpClient();
            Await.until("the console sees all three TLS-only servers", Duration.ofSeconds(20), Duration.ofMillis(500), () -> {
                String page = get(http, gw.baseUri().resolve("/console"));
                return page.contains("3/3 servers answer") && !page.contains("leader unknown");
            }, () -> get(http, gw.baseUri().resolve("/console")));

            // Another identity of the same cell: logged in (operator), with a certificate of the cell's CA.
            try (ZooKeeper other = connect("operator")) {
                String lock = "/secure-cell" + io.warden.service.zk.CellPaths.lock(io.warden.service.api.LockName.parse("orders/o-1"));
                assertNoAuth(() -> other.exists(lock, false), "see whether a lock is there");
                String sessionRecord = sessionRecordPath(session.id());
                assertNoAuth(() -> other.getChildren("/secure-cell/locks", false), "list the cell's locks");
                assertNoAuth(() -> other.getChildren(lock, false), "read a lock's queue");
                assertNoAuth(() -> other.getData(sessionRecord, false, null), "read a session record");
                assertNoAuth(() -> other.create("/secure-cell/locks/orders/o-2", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT), "make a lock");
                assertNoAuth(() -> other.create(lock + "/_c_00000000-0000-0000-0000-000000000000-__WRIT__",
                        new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL), "queue for a lock");
                assertNoAuth(() -> other.setData(sessionRecord, "{}".getBytes(StandardCharsets.UTF_8), -1),
                        "change a session record");
                assertNoAuth(() -> other.delete(sessionRecord, -1), "delete a session record");
                assertNoAuth(() -> other.delete("/secure-cell/locks/orders", -1), "delete a namespace");
                assertNoAuth(() -> other.setACL("/secure-cell", ZooDefs.Ids.OPEN_ACL_UNSAFE, -1), "open the cell");
            }
            // A client without a SASL login (a certificate of the cell's CA, nothing else) gets no session at all.
            assertUnauthenticatedIsRefused("/secure-cell/locks/orders/o-3");
            // ... and the hold is as it was.
            assertThat(client.lock("orders/o-1").path("holders").get(0).path("token").asLong()).isEqualTo(held.token());
            assertThat(client.release(session.id(), "orders/o-1", held.token()).released()).isTrue();
        }
    }

    @Test
    void aCellMadeOpen_canBeChangedByAnyone_untilAGatewayStartsWithAnAcl() throws Exception {
        String chroot = "/migrated-cell";
        try (GatewayProcess gw = startGateway("gw-open", chroot, List.of("--zk-acl", "open"))) {
            WardenClient client = new WardenClient(WardenClient.newHttpClient(), List.of(gw.baseUri()), 0, Duration.ofSeconds(10));
            client.openSession("open-it", 30_000);
            try (ZooKeeper other = connect("operator")) {
                // The weakness: any logged-in identity may queue for any lock, or delete the cell's nodes.
                other.create(chroot + "/locks/forged", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                other.delete(chroot + "/locks/forged", -1);
            }
        }
        try (GatewayProcess gw = startGateway("gw-closed", chroot, List.of())) {
            assertThat(gw.process().logTail(200)).contains("ZooKeeper nodes of " + chroot + " the ACL sasl:warden:cdrwa");
            try (ZooKeeper other = connect("operator")) {
                assertNoAuth(() -> other.create(chroot + "/locks/forged", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT), "make a lock after the ACL");
                assertNoAuth(() -> other.create(chroot + "/sessions/00/forged", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT), "forge a session record in a shard");
                assertNoAuth(() -> other.getChildren(chroot, false), "read the cell");
            }
            WardenClient client = new WardenClient(WardenClient.newHttpClient(), List.of(gw.baseUri()), 0, Duration.ofSeconds(10));
            WardenClient.Session session = client.openSession("closed-it", 30_000);
            assertThat(client.acquire(session.id(), "orders/o-9", "EXCLUSIVE", 0, "r-9", "CANCEL").granted()).isTrue();
        }
    }

    @Test
    void aGatewayWithTheWrongSaslPassword_doesNotStart_andSaysWhy() throws Exception {
        Path wrong = work.resolve("wrong.password");
        Files.writeString(wrong, "not-the-password\n");
        List<String> args = new ArrayList<>(secureArgs("/wrong-cell"));
        args.set(args.indexOf("--zk-sasl-password-file") + 1, wrong.toString());
        GatewayProcess gw = GatewayProcess.start(launcher, "gw-wrong", zkConnect(), 4000, List.of("-Xmx256m"), args);
        try {
            assertThat(gw.process().awaitExit(Duration.ofSeconds(60))).as("the gateway exits").isTrue();
            assertThat(gw.process().exitValue()).isNotZero();
        } finally {
            gw.close();
        }
    }

    private static GatewayProcess startGateway(String id, String chroot, List<String> more) {
        List<String> args = new ArrayList<>(secureArgs(chroot));
        args.addAll(more);
        return GatewayProcess.start(launcher, id, zkConnect(), 4000, List.of("-Xmx256m"), args)
                .awaitReady(Duration.ofSeconds(60));
    }

    private static List<String> secureArgs(String chroot) {
        return List.of("--chroot", chroot,
                "--zk-tls-truststore", ca.pem("cell-ca").toString(),
                "--zk-tls-keystore", ca.dir().resolve("warden-gateway-keystore.pem").toString(),
                "--zk-sasl-user", "warden",
                "--zk-sasl-password-file", work.resolve("warden.password").toString());
    }

    private static String zkConnect() {
        return IntStream.of(securePorts).mapToObj(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    /** A session record's path: the shard is the first two characters of the id (CellPaths). */
    private static String sessionRecordPath(String sessionId) {
        return "/secure-cell" + io.warden.service.zk.CellPaths.session(sessionId);
    }

    /** A TLS client's configuration with {@code who}'s certificate of the cell's CA. */
    private static ZKClientConfig tlsClient(String who) {
        ZKClientConfig c = new ZKClientConfig();
        c.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "org.apache.zookeeper.ClientCnxnSocketNetty");
        c.setProperty("zookeeper.ssl.keyStore.location", ca.dir().resolve(who + "-keystore.pem").toString());
        c.setProperty("zookeeper.ssl.trustStore.location", ca.pem("cell-ca").toString());
        return c;
    }

    private static ZooKeeper connect(String who) throws Exception {
        ZKClientConfig c = tlsClient(who);
        c.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, "Operator");
        c.setProperty("zookeeper.fips-mode", "false");
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(zkConnect(), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, c);
        if (!connected.await(20, TimeUnit.SECONDS)) {
            zk.close();
            throw new AssertionError("no TLS connection to " + zkConnect());
        }
        assertThat(zk.whoAmI()).anySatisfy(id -> assertThat(id.getAuthScheme() + ":" + id.getUser()).isEqualTo("sasl:operator"));
        return zk;
    }

    /** A TLS client with the gateway's own certificate but no SASL login: the ensemble ends its session unused. */
    private static void assertUnauthenticatedIsRefused(String path) throws Exception {
        ZKClientConfig c = tlsClient("warden-gateway");
        c.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        CountDownLatch connected = new CountDownLatch(1);
        try (ZooKeeper anonymous = new ZooKeeper(zkConnect(), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, c)) {
            // TLS lets it in (the certificate is the cell's): only the missing login is refused.
            assertThat(connected.await(20, TimeUnit.SECONDS)).as("TLS connection without a login").isTrue();
            Throwable refused = catchThrowable(() -> anonymous.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT));
            assertThat(refused).as("a client without a login").isInstanceOfAny(
                    KeeperException.SessionClosedRequireAuthException.class, KeeperException.ConnectionLossException.class,
                    KeeperException.SessionExpiredException.class, KeeperException.NoAuthException.class);
        }
    }

    private interface ZkCall {
        void run() throws Exception;
    }

    private static void assertNoAuth(ZkCall call, String what) {
        Throwable t = catchThrowable(call::run);
        assertThat(t).as("another identity tried to " + what).isInstanceOf(KeeperException.NoAuthException.class);
    }

    private static String get(HttpClient http, URI uri) {
        try {
            return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e.toString();
        }
    }

    private static void run(Map<String, String> environment, Path dir, String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().putAll(environment);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " failed:\n" + out);
        }
    }
}
