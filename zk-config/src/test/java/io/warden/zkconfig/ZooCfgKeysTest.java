package io.warden.zkconfig;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ZooCfgKeys} against the ZooKeeper jar on the class path, so that upgrading ZooKeeper shows which entries
 * went stale: a key listed as parsed must not end up as a system property, and every system property the table
 * names must occur as a string in ZooKeeper's classes (the property names are string constants there).
 */
class ZooCfgKeysTest {
    /** Sample values for parsed keys that the shipped configurations do not set. */
    private static final Map<String, String> SAMPLES = Map.ofEntries(
            Map.entry("dataLogDir", "/tmp/zk-datalog"), Map.entry("secureClientPort", "2281"),
            Map.entry("secureClientPortAddress", "127.0.0.1\nsecureClientPort=2281"),
            Map.entry("clientPortAddress", "127.0.0.1"),
            Map.entry("observerMasterPort", "2191"), Map.entry("clientPortListenBacklog", "50"),
            Map.entry("connectToLearnerMasterLimit", "10"), Map.entry("electionAlg", "3"),
            Map.entry("peerType", "participant"), Map.entry("syncEnabled", "true"),
            Map.entry("localSessionsEnabled", "false"), Map.entry("localSessionsUpgradingEnabled", "false"),
            Map.entry("sslQuorum", "false"), Map.entry("portUnification", "false"),
            Map.entry("sslQuorumReloadCertFiles", "false"), Map.entry("quorum.auth.enableSasl", "false"),
            Map.entry("quorum.auth.serverRequireSasl", "false"), Map.entry("quorum.auth.learnerRequireSasl", "false"),
            Map.entry("quorum.auth.learner.saslLoginContext", "QuorumLearner"),
            Map.entry("quorum.auth.server.saslLoginContext", "QuorumServer"),
            Map.entry("quorum.auth.kerberos.servicePrincipal", "zkquorum/localhost"),
            Map.entry("quorum.cnxn.threads.size", "20"), Map.entry("multiAddress.enabled", "false"),
            Map.entry("multiAddress.reachabilityCheckTimeoutMs", "1000"),
            Map.entry("multiAddress.reachabilityCheckEnabled", "true"), Map.entry("oraclePath", "/tmp/zk-oracle"),
            Map.entry("jvm.pause.sleep.time.ms", "500"));
    /** Parsed keys whose sample would change what is parsed (a separate dynamic file). */
    private static final java.util.Set<String> NOT_SAMPLED = java.util.Set.of("dynamicConfigFile");

    private static String zookeeperClasses;

    @TempDir
    Path temp;

    @BeforeAll
    static void readZooKeeperJar() throws Exception {
        Path jar = Path.of(QuorumPeerConfig.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        StringBuilder all = new StringBuilder(8 << 20);
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            for (ZipEntry e : java.util.Collections.list(zip.entries())) {
                if (e.getName().endsWith(".class")) {
                    try (var in = zip.getInputStream(e)) {
                        all.append(new String(in.readAllBytes(), StandardCharsets.ISO_8859_1)).append('\n');
                    }
                }
            }
        }
        zookeeperClasses = all.toString();
        assertThat(zookeeperClasses).contains("zookeeper.snapCount");
    }

    @Test
    void parsedKeys_areConsumedByQuorumPeerConfig_notTurnedIntoSystemProperties() throws Exception {
        String base = ParsedConfig.shipped("conf/ensemble-3/zoo.cfg");
        int checked = 0;
        for (ZooCfgKeys.Key key : ZooCfgKeys.all()) {
            if (key.kind() != ZooCfgKeys.Kind.PARSED || NOT_SAMPLED.contains(key.name())) {
                continue;
            }
            String text = base.contains("\n" + key.name() + "=") ? base : base + "\n" + key.name() + "=" + sample(key) + "\n";
            ParsedConfig parsed = ParsedConfig.parse(text, 1, temp);
            assertThat(parsed.problems()).as(key.name()).isEmpty();
            assertThat(parsed.systemProperties()).as("parsing " + key.name()).doesNotContainKey("zookeeper." + key.name());
            checked++;
        }
        assertThat(checked).isGreaterThan(40);
    }

    @Test
    void systemPropertyKeys_areReadByZooKeeper() {
        for (ZooCfgKeys.Key key : ZooCfgKeys.all()) {
            if (key.kind() == ZooCfgKeys.Kind.SYSTEM_PROPERTY) {
                assertThat(zookeeperClasses.contains(key.systemProperty())).as(key.systemProperty() + " (" + key.section() + ")").isTrue();
            }
        }
    }

    @Test
    void tlsAndAuthProviderFamilies_areReadByZooKeeper() {
        assertThat(zookeeperClasses).contains("zookeeper.ssl.", "zookeeper.ssl.quorum.", "zookeeper.authProvider.");
        for (String suffix : ZooCfgKeys.SSL_SUFFIXES.keySet()) {
            assertThat(zookeeperClasses.contains(suffix)).as("ssl suffix " + suffix).isTrue();
        }
        for (String suffix : ZooCfgKeys.SSL_CLIENT_ONLY_SUFFIXES.keySet()) {
            assertThat(zookeeperClasses.contains(suffix)).as("ssl suffix " + suffix).isTrue();
        }
    }

    @Test
    void jvmOnlyKeys_areReadWithoutTheZooKeeperPrefix() {
        for (String name : new String[] {"znode.container.checkIntervalMs", "znode.container.maxPerMinute",
                "znode.container.maxNeverUsedIntervalMs", "jute.maxbuffer", "readonlymode.enabled"}) {
            assertThat(ZooCfgKeys.MISPLACED).containsKey(name);
            assertThat(zookeeperClasses.contains("\"" + name) || zookeeperClasses.contains(name)).as(name).isTrue();
            assertThat(zookeeperClasses.contains("zookeeper." + name)).as("zookeeper." + name).isFalse();
        }
        assertThat(zookeeperClasses).doesNotContain("requireClientAuthScheme");
    }

    @Test
    void fourLetterWords_comeFromZooKeeper() {
        assertThat(ValueType.FOUR_LETTER_WORD_NAMES).contains("srvr", "ruok", "mntr", "conf", "isro", "stat", "dump");
    }

    private static String sample(ZooCfgKeys.Key key) {
        String sample = SAMPLES.get(key.name());
        if (sample != null) {
            return sample;
        }
        return switch (key.type()) {
            case BOOL -> "false";
            case LONG, POSITIVE_INT, NON_NEGATIVE_INT, INT -> "1000";
            default -> throw new AssertionError("no sample for " + key.name());
        };
    }
}
