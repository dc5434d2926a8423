package io.warden.zkconfig;

import static io.warden.zkconfig.ItSupport.DEV_ENSEMBLE;
import static io.warden.zkconfig.ItSupport.MODULE;
import static io.warden.zkconfig.ItSupport.TARBALL;
import static io.warden.zkconfig.ItSupport.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ClientInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shipped TLS and SASL fragments at work: a 3-server ensemble (dev-ensemble, from the tarball) with
 * conf/tls/zoo-tls.cfg and conf/sasl/zoo-sasl.cfg appended and conf/sasl/jaas.conf (placeholders replaced), and a
 * test CA made with keytool. The servers only form a quorum if quorum TLS and quorum SASL work; a client gets in
 * over mutual TLS with SASL DIGEST-MD5, and one without SASL is refused — the settings a gateway would be given
 * as JVM flags.
 */
// "try": ZooKeeper.close() may throw InterruptedException; the tests declare it anyway.
@SuppressWarnings("try")
class ZkSecureEnsembleIT {
    private static final String STORE_PASSWORD = "it-store-password";
    private static Path work;
    private static Path tls;
    private static Path ensemble;
    private static Map<String, String> env;
    private static int[] securePorts;
    private static final List<Long> serverPids = new ArrayList<>();
    private static Configuration previousJaas;

    @BeforeAll
    static void startSecureEnsemble() throws Exception {
        work = ItSupport.workDir("secure");
        tls = Files.createDirectories(work.resolve("tls"));
        makeTestCa();
        Path tlsCfg = work.resolve("zoo-tls.cfg");
        Files.writeString(tlsCfg, Files.readString(MODULE.resolve("conf/tls/zoo-tls.cfg")).replace("/etc/zookeeper/tls/", tls + "/"));
        Path jaas = work.resolve("jaas.conf");
        Files.writeString(jaas, Files.readString(MODULE.resolve("conf/sasl/jaas.conf"))
                .replace("CHANGE-ME-warden-gateway-password", "it-warden-password")
                .replace("CHANGE-ME-operator-password", "it-operator-password")
                .replace("CHANGE-ME-quorum-password", "it-quorum-password"));
        int[] bases = ItSupport.freePortBlocks(6, 3);
        securePorts = ItSupport.block(bases[5]);
        ensemble = work.resolve("ensemble");
        env = new HashMap<>();
        env.put("DEV_ZK_DIST", TARBALL.toString());
        env.put("DEV_ZK_BASE_PORT", Integer.toString(bases[0]));
        env.put("DEV_ZK_QUORUM_BASE_PORT", Integer.toString(bases[1]));
        env.put("DEV_ZK_ELECTION_BASE_PORT", Integer.toString(bases[2]));
        env.put("DEV_ZK_ADMIN_BASE_PORT", Integer.toString(bases[3]));
        env.put("DEV_ZK_METRICS_BASE_PORT", Integer.toString(bases[4]));
        env.put("DEV_ZK_SECURE_BASE_PORT", Integer.toString(bases[5]));
        env.put("DEV_ZK_EXTRA_CFG", tlsCfg + ":" + MODULE.resolve("conf/sasl/zoo-sasl.cfg"));
        env.put("DEV_ZK_JAAS", jaas.toString());
        env.put("JAVA_HOME", System.getProperty("java.home"));
        ItSupport.Result start = run(env, "bash", DEV_ENSEMBLE, "start", ensemble.toString());
        serverPids.addAll(ItSupport.serverPids(ensemble, 3));
        assertThat(start.status()).as(start.output()).isZero();

        // The client's JAAS "Client" section, as a gateway's -Djava.security.auth.login.config file would give it.
        previousJaas = Configuration.getConfiguration();
        Configuration.setConfiguration(new Configuration() {
            @Override
            public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
                return "Client".equals(name) ? new AppConfigurationEntry[] {new AppConfigurationEntry(
                        "org.apache.zookeeper.server.auth.DigestLoginModule",
                        AppConfigurationEntry.LoginModuleControlFlag.REQUIRED,
                        Map.of("username", "warden", "password", "it-warden-password"))} : null;
            }
        });
    }

    @AfterAll
    static void stop() throws Exception {
        if (previousJaas != null) {
            Configuration.setConfiguration(previousJaas);
        }
        ItSupport.stopEnsemble(ensemble, env, serverPids);
        for (long pid : serverPids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("server pid " + pid).isFalse();
        }
    }

    @Test
    void everyServer_appliesTheFragmentsAndTheJaasFile() throws Exception {
        for (int n = 1; n <= 3; n++) {
            assertThat(Files.readString(ensemble.resolve("zk" + n + "/zoo.cfg")))
                    .contains("sslQuorum=true", "quorum.auth.serverRequireSasl=true", "enforce.auth.enabled=true",
                            "secureClientPort=" + securePorts[n - 1]);
            assertThat(ensemble.resolve("zk" + n + "/jaas.conf")).isRegularFile();
            String command = ProcessHandle.of(serverPids.get(n - 1)).flatMap(p -> p.info().commandLine()).orElse("");
            assertThat(command).contains("-Djava.security.auth.login.config=" + ensemble.resolve("zk" + n + "/jaas.conf"));
        }
    }

    @Test
    void clientWithCertificateAndSasl_isAuthenticatedByBoth() throws Exception {
        try (ZooKeeper zk = connect(tlsClientConfig(true))) {
            zk.create("/it-secure", "x".getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            assertThat(zk.getData("/it-secure", false, null)).isEqualTo("x".getBytes(StandardCharsets.UTF_8));
            List<ClientInfo> whoAmI = zk.whoAmI();
            assertThat(whoAmI).extracting(ClientInfo::getAuthScheme, ClientInfo::getUser)
                    .contains(org.assertj.core.groups.Tuple.tuple("sasl", "warden"),
                            org.assertj.core.groups.Tuple.tuple("x509", "CN=warden-it"));
        }
    }

    @Test
    void clientWithoutSasl_isRefused() throws Exception {
        ZKClientConfig config = tlsClientConfig(false);
        CountDownLatch connected = new CountDownLatch(1);
        try (ZooKeeper zk = new ZooKeeper(ItSupport.connectString(securePorts), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, config)) {
            assertThat(connected.await(20, TimeUnit.SECONDS)).isTrue();
            Throwable refused = catchThrowable(() -> zk.create("/it-no-sasl", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT));
            assertThat(refused).isInstanceOfAny(KeeperException.SessionClosedRequireAuthException.class,
                    KeeperException.ConnectionLossException.class, KeeperException.SessionExpiredException.class);
        }
        try (ZooKeeper zk = connect(tlsClientConfig(true))) {
            assertThat(zk.exists("/it-no-sasl", false)).isNull();
        }
    }

    private static ZKClientConfig tlsClientConfig(boolean sasl) {
        ZKClientConfig c = new ZKClientConfig();
        c.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "org.apache.zookeeper.ClientCnxnSocketNetty");
        c.setProperty("zookeeper.ssl.keyStore.location", tls.resolve("server.p12").toString());
        c.setProperty("zookeeper.ssl.keyStore.password", STORE_PASSWORD);
        c.setProperty("zookeeper.ssl.keyStore.type", "PKCS12");
        c.setProperty("zookeeper.ssl.trustStore.location", tls.resolve("ca.p12").toString());
        c.setProperty("zookeeper.ssl.trustStore.password", STORE_PASSWORD);
        c.setProperty("zookeeper.ssl.trustStore.type", "PKCS12");
        c.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, Boolean.toString(sasl));
        // DIGEST-MD5 needs ZooKeeper's FIPS mode off on the client too (zoo-sasl.cfg explains).
        c.setProperty("zookeeper.fips-mode", "false");
        return c;
    }

    private static ZooKeeper connect(ZKClientConfig config) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(ItSupport.connectString(securePorts), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, config);
        if (!connected.await(20, TimeUnit.SECONDS)) {
            zk.close();
            throw new AssertionError("no TLS connection to " + ItSupport.connectString(securePorts));
        }
        return zk;
    }

    /**
     * A CA, and one key pair signed by it for 127.0.0.1 / localhost, used by the servers (client and quorum TLS)
     * and by the test's client; password files for the passwordPath settings of zoo-tls.cfg.
     */
    private static void makeTestCa() throws Exception {
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        String ca = tls.resolve("ca-key.p12").toString();
        String server = tls.resolve("server.p12").toString();
        String[][] steps = {
            {"-genkeypair", "-alias", "ca", "-dname", "CN=warden-it-ca", "-ext", "bc:c", "-keystore", ca},
            {"-exportcert", "-rfc", "-alias", "ca", "-keystore", ca, "-file", tls.resolve("ca.pem").toString()},
            {"-importcert", "-noprompt", "-alias", "ca", "-file", tls.resolve("ca.pem").toString(),
                "-keystore", tls.resolve("ca.p12").toString()},
            {"-genkeypair", "-alias", "server", "-dname", "CN=warden-it", "-keystore", server},
            {"-certreq", "-alias", "server", "-keystore", server, "-file", tls.resolve("server.csr").toString()},
            {"-gencert", "-alias", "ca", "-keystore", ca, "-infile", tls.resolve("server.csr").toString(),
                "-outfile", tls.resolve("server.pem").toString(), "-ext", "san=ip:127.0.0.1,dns:localhost"},
            {"-importcert", "-noprompt", "-alias", "ca", "-file", tls.resolve("ca.pem").toString(), "-keystore", server},
            {"-importcert", "-alias", "server", "-file", tls.resolve("server.pem").toString(), "-keystore", server},
        };
        for (String[] step : steps) {
            List<String> command = new ArrayList<>(List.of(keytool));
            command.addAll(List.of(step));
            if (step[0].equals("-genkeypair")) {
                command.addAll(List.of("-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2"));
            }
            if (step[0].equals("-gencert")) {
                command.addAll(List.of("-validity", "2"));
            }
            command.addAll(List.of("-storetype", "PKCS12", "-storepass", STORE_PASSWORD));
            ItSupport.Result r = run(Map.of(), command.toArray(String[]::new));
            assertThat(r.status()).as(String.join(" ", command) + ": " + r.output()).isZero();
        }
        Files.writeString(tls.resolve("keystore.pass"), STORE_PASSWORD + "\n");
        Files.writeString(tls.resolve("truststore.pass"), STORE_PASSWORD + "\n");
    }
}
