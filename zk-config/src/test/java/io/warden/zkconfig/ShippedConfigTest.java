package io.warden.zkconfig;

import static io.warden.zkconfig.ParsedConfig.shipped;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.zkconfig.metrics.PrometheusMetricsProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every configuration zk-config ships, read by ZooKeeper 3.9.5's own {@link QuorumPeerConfig} and by
 * {@link ZooCfgCheck}: no unknown or misplaced key, no bad value, and the values Warden relies on.
 */
class ShippedConfigTest {
    /** What a gateway asks for by default (--zk-session-timeout-ms, docs/configuration.md). */
    private static final int GATEWAY_ZK_SESSION_TIMEOUT_MS = 10_000;
    private static final List<String> PER_SERVER_KEYS = List.of("dataDir", "dataLogDir", "clientPort", "clientPortAddress",
            "secureClientPort", "secureClientPortAddress", "admin.serverPort", "admin.serverAddress",
            "metricsProvider.httpPort", "metricsProvider.httpHost");

    @TempDir
    Path temp;

    static Stream<Arguments> shippedConfigs() {
        String tls = shipped("conf/tls/zoo-tls.cfg") + "\nsecureClientPort=2281\n";
        String sasl = shipped("conf/sasl/zoo-sasl.cfg");
        return Stream.of(3, 5).flatMap(n -> {
            String base = shipped("conf/ensemble-" + n + "/zoo.cfg");
            return Stream.of(
                    Arguments.of("ensemble-" + n + "/zoo.cfg", base, n),
                    Arguments.of("ensemble-" + n + "/zoo.cfg + tls/zoo-tls.cfg", base + "\n" + tls, n),
                    Arguments.of("ensemble-" + n + "/zoo.cfg + sasl/zoo-sasl.cfg", base + "\n" + sasl, n),
                    Arguments.of("ensemble-" + n + "/zoo.cfg + both", base + "\n" + tls + "\n" + sasl, n));
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shippedConfigs")
    void shippedConfig_parsesWithoutProblems_andHasWardensTuning(String name, String text, int servers) throws Exception {
        for (int myid = 1; myid <= servers; myid++) {
            ParsedConfig parsed = ParsedConfig.parse(text, myid, temp);
            assertThat(parsed.problems()).as(name).isEmpty();
            assertWardenTuning(parsed, servers, myid);
        }
    }

    @Test
    void tlsFragment_turnsOnNettyClientTlsAndQuorumTls() throws Exception {
        String text = shipped("conf/ensemble-3/zoo.cfg") + "\n" + shipped("conf/tls/zoo-tls.cfg") + "\nsecureClientPort=2281\n";
        ParsedConfig parsed = ParsedConfig.parse(text, 1, temp);
        assertThat(parsed.config().isSslQuorum()).isTrue();
        assertThat(parsed.config().getSecureClientPortAddress().getPort()).isEqualTo(2281);
        assertThat(parsed.systemProperties())
                .containsEntry("zookeeper.serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory")
                .containsEntry("zookeeper.ssl.clientAuth", "need")
                .containsEntry("zookeeper.ssl.quorum.hostnameVerification", "true")
                .containsKeys("zookeeper.ssl.keyStore.location", "zookeeper.ssl.trustStore.location",
                        "zookeeper.ssl.quorum.keyStore.location", "zookeeper.ssl.quorum.trustStore.location");
    }

    @Test
    void saslFragment_requiresSaslBetweenServersAndFromClients() throws Exception {
        String text = shipped("conf/ensemble-3/zoo.cfg") + "\n" + shipped("conf/sasl/zoo-sasl.cfg");
        ParsedConfig parsed = ParsedConfig.parse(text, 2, temp);
        assertThat(parsed.config().quorumSaslEnabled()).isTrue();
        assertThat(parsed.config().quorumServerRequiresSasl()).isTrue();
        assertThat(parsed.config().quorumLearnerRequiresSasl()).isTrue();
        assertThat(parsed.systemProperties())
                .containsEntry("zookeeper.authProvider.sasl", "org.apache.zookeeper.server.auth.SASLAuthenticationProvider")
                .containsEntry("zookeeper.enforce.auth.enabled", "true")
                .containsEntry("zookeeper.enforce.auth.schemes", "sasl")
                .containsEntry("zookeeper.fips-mode", "false");
    }

    @Test
    void jaasConf_hasTheSectionsTheSaslFragmentNames_andOnlyPlaceholderPasswords() {
        String jaas = shipped("conf/sasl/jaas.conf");
        assertThat(jaas).contains("Server {", "QuorumServer {", "QuorumLearner {",
                "org.apache.zookeeper.server.auth.DigestLoginModule required");
        var secrets = java.util.regex.Pattern.compile("(?:user_\\w+|password)=\"([^\"]*)\"").matcher(jaas);
        int count = 0;
        while (secrets.find()) {
            assertThat(secrets.group(1)).as("a secret in jaas.conf").startsWith("CHANGE-ME-");
            count++;
        }
        assertThat(count).isEqualTo(4);
    }

    @Test
    void zooCommon_holdsNoPerServerKey() {
        List<ZooCfgCheck.Entry> entries = ZooCfgCheck.read(shipped("conf/zoo-common.cfg").lines().toList(), new java.util.ArrayList<>());
        assertThat(entries).extracting(ZooCfgCheck.Entry::key)
                .doesNotContainAnyElementsOf(PER_SERVER_KEYS)
                .noneMatch(k -> k.startsWith("server.") || k.startsWith("group.") || k.startsWith("weight."));
        assertThat(ZooCfgCheck.check(shipped("conf/zoo-common.cfg").lines().toList())).isEmpty();
    }

    @Test
    void fragments_holdNoPerServerKeyAndNothingOfZooCommon() {
        List<String> common = ZooCfgCheck.read(shipped("conf/zoo-common.cfg").lines().toList(), new java.util.ArrayList<>())
                .stream().map(ZooCfgCheck.Entry::key).toList();
        for (String fragment : List.of("conf/tls/zoo-tls.cfg", "conf/sasl/zoo-sasl.cfg")) {
            assertThat(ZooCfgCheck.read(shipped(fragment).lines().toList(), new java.util.ArrayList<>()))
                    .as(fragment).extracting(ZooCfgCheck.Entry::key)
                    .doesNotContainAnyElementsOf(PER_SERVER_KEYS).doesNotContainAnyElementsOf(common);
        }
    }

    @ParameterizedTest
    @MethodSource("ensembleSizes")
    void ensembleExample_startsWithZooCommonVerbatim(int servers) {
        assertThat(shipped("conf/ensemble-" + servers + "/zoo.cfg")).startsWith(shipped("conf/zoo-common.cfg"));
    }

    static Stream<Integer> ensembleSizes() {
        return Stream.of(3, 5);
    }

    /** dev-ensemble's configs are zoo-common.cfg verbatim plus generated per-server lines, as the Ansible role writes them. */
    @Test
    void devEnsembleInit_writesConfigsThatParse() throws Exception {
        Path dir = temp.resolve("dev");
        ProcessBuilder pb = new ProcessBuilder("bash", ParsedConfig.moduleDir().resolve("bin/dev-ensemble").toString(), "init",
                dir.toString()).redirectErrorStream(true);
        pb.environment().keySet().removeIf(name -> name.startsWith("DEV_ZK_"));
        Process p = pb.start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(output).isZero();
        for (int myid = 1; myid <= 3; myid++) {
            String text = Files.readString(dir.resolve("zk" + myid + "/zoo.cfg"), StandardCharsets.ISO_8859_1);
            assertThat(text).startsWith(shipped("conf/zoo-common.cfg"));
            assertThat(Files.readString(dir.resolve("zk" + myid + "/data/myid")).trim()).isEqualTo(Integer.toString(myid));
            ParsedConfig parsed = ParsedConfig.parse(text, myid, temp);
            assertThat(parsed.problems()).isEmpty();
            assertWardenTuning(parsed, 3, myid);
            assertThat(parsed.config().getClientPortAddress().getPort()).isEqualTo(2180 + myid);
            assertThat(parsed.config().getClientPortAddress().getAddress().isLoopbackAddress()).isTrue();
            assertThat(parsed.systemProperties()).containsEntry("zookeeper.admin.serverAddress", "127.0.0.1");
            assertThat(Files.readString(dir.resolve("zk" + myid + "/java.env")))
                    .contains("-Dznode.container.checkIntervalMs=1000", "ZK_HEAP=256m");
        }
    }

    @Test
    void javaEnv_setsHeapShortPauseG1AndTheContainerInterval() {
        String env = shipped("conf/java.env");
        assertThat(env).containsPattern("(?m)^ZK_HEAP=1g$").containsPattern("(?m)^ZK_LOG_DIR=/var/log/zookeeper$");
        String opts = env.lines().filter(l -> l.startsWith("JVM_OPTS=")).findFirst().orElseThrow();
        assertThat(opts).contains("-XX:+UseG1GC", "-XX:MaxGCPauseMillis=50", "-XX:+ExitOnOutOfMemoryError",
                "-Dznode.container.checkIntervalMs=10000").doesNotContain("jute.maxbuffer");
    }

    @Test
    void logbackXml_configuresWithoutWarnings_withAndWithoutALogDir() throws Exception {
        for (boolean withDir : new boolean[] {false, true}) {
            var context = new ch.qos.logback.classic.LoggerContext();
            if (withDir) {
                context.putProperty("zk.log.dir", temp.resolve("log").toString());
            }
            var configurator = new ch.qos.logback.classic.joran.JoranConfigurator();
            configurator.setContext(context);
            configurator.doConfigure(ParsedConfig.moduleDir().resolve("conf/logback.xml").toFile());
            var statuses = context.getStatusManager().getCopyOfStatusList();
            assertThat(statuses).as("logback status with zk.log.dir=" + withDir)
                    .allMatch(s -> s.getLevel() < ch.qos.logback.core.status.Status.WARN);
            ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
            assertThat(root.getAppender("CONSOLE")).isNotNull();
            assertThat(root.getAppender("FILE") != null).isEqualTo(withDir);
            context.stop();
        }
    }

    private static void assertWardenTuning(ParsedConfig parsed, int servers, int myid) {
        ParsedConfig.Qpc c = parsed.config();
        assertThat(c.getServerId()).isEqualTo(myid);
        assertThat(c.getQuorumVerifier().getVotingMembers()).hasSize(servers);
        assertThat(c.getTickTime()).isEqualTo(2000);
        assertThat(c.getInitLimit()).isEqualTo(10);
        assertThat(c.getSyncLimit()).isEqualTo(3);
        assertThat(c.getMinSessionTimeout()).isEqualTo(4000);
        assertThat(c.getMaxSessionTimeout()).isEqualTo(30000);
        // The gateways' default ZooKeeper session timeout is granted as asked, not clamped.
        assertThat(GATEWAY_ZK_SESSION_TIMEOUT_MS).isBetween(c.getMinSessionTimeout(), c.getMaxSessionTimeout());
        // A silent leader is given up before a gateway's own read timeout (2/3 of its session timeout) runs out.
        assertThat(c.getSyncLimit() * c.getTickTime()).isLessThan(GATEWAY_ZK_SESSION_TIMEOUT_MS * 2 / 3);
        assertThat(c.getSnapRetainCount()).isEqualTo(5);
        assertThat(c.getPurgeInterval()).isEqualTo(1);
        assertThat(QuorumPeerConfig.isStandaloneEnabled()).isFalse();
        assertThat(QuorumPeerConfig.isReconfigEnabled()).isFalse();
        assertThat(c.getQuorumListenOnAllIPs()).isFalse();
        assertThat(c.getMaxClientCnxns()).isEqualTo(60);
        assertThat(c.getMetricsProviderClassName()).isEqualTo(PrometheusMetricsProvider.class.getName());
        assertThat(c.getMetricsProviderConfiguration()).containsEntry("exportJvmInfo", "true").containsKey("httpPort");
        Map<String, String> props = parsed.systemProperties();
        assertThat(props)
                .containsEntry("zookeeper.extendedTypesEnabled", "true")
                .containsEntry("zookeeper.admin.enableServer", "true")
                .containsEntry("zookeeper.admin.snapshot.enabled", "false")
                .containsEntry("zookeeper.admin.restore.enabled", "false")
                .containsEntry("zookeeper.4lw.commands.whitelist", "srvr,ruok,mntr,conf,isro")
                .containsEntry("zookeeper.snapCount", "50000")
                .containsEntry("zookeeper.forceSync", "yes")
                .containsKey("zookeeper.admin.serverPort")
                .doesNotContainKey("zookeeper.znode.container.checkIntervalMs");
        assertThat(Duration.ofMillis((long) c.getInitLimit() * c.getTickTime())).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void everyShippedCfgFile_isCovered() throws IOException {
        try (Stream<Path> files = Files.walk(ParsedConfig.moduleDir().resolve("conf"))) {
            assertThat(files.filter(f -> f.toString().endsWith(".cfg")).map(f -> ParsedConfig.moduleDir().resolve("conf").relativize(f).toString()))
                    .containsExactlyInAnyOrder("zoo-common.cfg", "ensemble-3/zoo.cfg", "ensemble-5/zoo.cfg",
                            "tls/zoo-tls.cfg", "sasl/zoo-sasl.cfg");
        }
    }
}
