package io.warden.zkconfig;

import static io.warden.zkconfig.ValueType.BOOL;
import static io.warden.zkconfig.ValueType.CLASS;
import static io.warden.zkconfig.ValueType.CLIENT_AUTH;
import static io.warden.zkconfig.ValueType.FOUR_LETTER_WORDS;
import static io.warden.zkconfig.ValueType.HOST;
import static io.warden.zkconfig.ValueType.INT;
import static io.warden.zkconfig.ValueType.LONG;
import static io.warden.zkconfig.ValueType.NON_NEGATIVE_INT;
import static io.warden.zkconfig.ValueType.PATH;
import static io.warden.zkconfig.ValueType.PORT;
import static io.warden.zkconfig.ValueType.POSITIVE_INT;
import static io.warden.zkconfig.ValueType.TEXT;
import static io.warden.zkconfig.ValueType.YES_NO;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code zoo.cfg} keys of ZooKeeper 3.9 that {@link ZooCfgCheck} accepts.
 *
 * <p>{@code QuorumPeerConfig.parseProperties} handles some keys itself ({@link Kind#PARSED}); every other key it
 * silently turns into the system property {@code zookeeper.<key>} ({@link Kind#SYSTEM_PROPERTY}), which works only
 * if some ZooKeeper class reads that exact property. So a misspelt key is not an error to ZooKeeper: it is simply
 * ignored. This table is the allow-list of the second kind, each with the section of the ZooKeeper 3.9
 * Administrator's Guide (zookeeperAdmin.md) that documents it. {@code ZooCfgKeysTest} checks both kinds against the
 * ZooKeeper jar on the class path: parsed keys must not become system properties, and every system property named
 * here must occur in ZooKeeper's class files.
 */
final class ZooCfgKeys {
    /** How ZooKeeper 3.9 takes a key. */
    enum Kind {
        /** {@code QuorumPeerConfig.parseProperties} reads it (and rejects a bad number or boolean itself). */
        PARSED,
        /** Set as the system property {@code zookeeper.<key>} and read from there by the server. */
        SYSTEM_PROPERTY
    }

    /** One accepted key (or, for a family, the key's prefix). */
    record Key(String name, Kind kind, ValueType type, String section) {
        /** The system property ZooKeeper reads, for {@link Kind#SYSTEM_PROPERTY}. */
        String systemProperty() {
            return "zookeeper." + name;
        }
    }

    // Sections of the Administrator's Guide, "Configuration Parameters".
    static final String MINIMUM = "Admin Guide: Minimum Configuration";
    static final String ADVANCED = "Admin Guide: Advanced Configuration";
    static final String CLUSTER = "Admin Guide: Cluster Options";
    static final String AUTH = "Admin Guide: Encryption, Authentication, Authorization Options";
    static final String UNSAFE = "Admin Guide: Unsafe Options";
    static final String DATADIR_AUTOCREATE = "Admin Guide: Disabling data directory autocreation";
    static final String DB_VALIDATION = "Admin Guide: Enabling db existence validation";
    static final String ADMIN = "Admin Guide: AdminServer configuration";
    static final String QUORUM_TLS = "Admin Guide: Quorum TLS";
    static final String METRICS = "Admin Guide: Metrics Providers (metricsProvider.*)";
    static final String JVM_PAUSE = "QuorumPeerConfig (JvmPauseMonitor keys)";

    private static final Map<String, Key> EXACT = new LinkedHashMap<>();

    static {
        // --- Parsed by QuorumPeerConfig.parseProperties itself (ZooKeeper 3.9.5) ---
        parsed("dataDir", PATH, MINIMUM);
        parsed("dataLogDir", PATH, ADVANCED);
        parsed("clientPort", PORT, MINIMUM);
        parsed("secureClientPort", PORT, MINIMUM);
        parsed("clientPortAddress", HOST, ADVANCED);
        parsed("secureClientPortAddress", HOST, ADVANCED);
        parsed("observerMasterPort", PORT, MINIMUM);
        parsed("clientPortListenBacklog", POSITIVE_INT, ADVANCED);
        parsed("tickTime", POSITIVE_INT, MINIMUM);
        parsed("maxClientCnxns", NON_NEGATIVE_INT, ADVANCED);
        parsed("minSessionTimeout", POSITIVE_INT, ADVANCED);
        parsed("maxSessionTimeout", POSITIVE_INT, ADVANCED);
        parsed("initLimit", POSITIVE_INT, CLUSTER);
        parsed("syncLimit", POSITIVE_INT, CLUSTER);
        parsed("connectToLearnerMasterLimit", POSITIVE_INT, CLUSTER);
        parsed("electionAlg", POSITIVE_INT, CLUSTER);
        parsed("quorumListenOnAllIPs", BOOL, UNSAFE);
        parsed("peerType", TEXT, CLUSTER);
        parsed("syncEnabled", BOOL, ADVANCED);
        parsed("localSessionsEnabled", BOOL, CLUSTER);
        parsed("localSessionsUpgradingEnabled", BOOL, CLUSTER);
        parsed("dynamicConfigFile", PATH, CLUSTER);
        parsed("autopurge.snapRetainCount", POSITIVE_INT, ADVANCED);
        parsed("autopurge.purgeInterval", NON_NEGATIVE_INT, ADVANCED);
        parsed("standaloneEnabled", BOOL, CLUSTER);
        parsed("reconfigEnabled", BOOL, CLUSTER);
        parsed("sslQuorum", BOOL, AUTH);
        parsed("portUnification", BOOL, QUORUM_TLS);
        parsed("sslQuorumReloadCertFiles", BOOL, AUTH);
        parsed("quorum.auth.enableSasl", BOOL, AUTH);
        parsed("quorum.auth.serverRequireSasl", BOOL, AUTH);
        parsed("quorum.auth.learnerRequireSasl", BOOL, AUTH);
        parsed("quorum.auth.learner.saslLoginContext", TEXT, AUTH);
        parsed("quorum.auth.server.saslLoginContext", TEXT, AUTH);
        parsed("quorum.auth.kerberos.servicePrincipal", TEXT, AUTH);
        parsed("quorum.cnxn.threads.size", POSITIVE_INT, AUTH);
        parsed("jvm.pause.info-threshold.ms", LONG, JVM_PAUSE);
        parsed("jvm.pause.warn-threshold.ms", LONG, JVM_PAUSE);
        parsed("jvm.pause.sleep.time.ms", LONG, JVM_PAUSE);
        parsed("jvm.pause.monitor", BOOL, JVM_PAUSE);
        parsed("metricsProvider.className", CLASS, METRICS);
        parsed("multiAddress.enabled", BOOL, CLUSTER);
        parsed("multiAddress.reachabilityCheckTimeoutMs", POSITIVE_INT, CLUSTER);
        parsed("multiAddress.reachabilityCheckEnabled", BOOL, UNSAFE);
        parsed("oraclePath", PATH, CLUSTER);

        // --- Become system properties zookeeper.<key>, read by the server ---
        // Advanced Configuration
        property("globalOutstandingLimit", POSITIVE_INT, ADVANCED);
        property("preAllocSize", POSITIVE_INT, ADVANCED);
        property("snapCount", POSITIVE_INT, ADVANCED);
        property("commitLogCount", POSITIVE_INT, ADVANCED);
        property("snapSizeLimitInKb", LONG, ADVANCED);
        property("txnLogSizeLimitInKb", LONG, ADVANCED);
        property("maxCnxns", NON_NEGATIVE_INT, ADVANCED);
        property("fsync.warningthresholdms", LONG, ADVANCED);
        property("maxResponseCacheSize", INT, ADVANCED);
        property("maxGetChildrenResponseCacheSize", INT, ADVANCED);
        property("extendedTypesEnabled", BOOL, ADVANCED);
        property("emulate353TTLNodes", BOOL, ADVANCED);
        property("watchManagerName", CLASS, ADVANCED);
        property("watcherCleanThreadsNum", POSITIVE_INT, ADVANCED);
        property("watcherCleanThreshold", POSITIVE_INT, ADVANCED);
        property("watcherCleanIntervalInSeconds", POSITIVE_INT, ADVANCED);
        property("maxInProcessingDeadWatchers", INT, ADVANCED);
        property("fastleader.minNotificationInterval", POSITIVE_INT, ADVANCED);
        property("fastleader.maxNotificationInterval", POSITIVE_INT, ADVANCED);
        property("serverCnxnFactory", CLASS, ADVANCED);
        property("flushDelay", LONG, ADVANCED);
        property("maxWriteQueuePollTime", LONG, ADVANCED);
        property("maxBatchSize", POSITIVE_INT, ADVANCED);
        property("request_throttle_max_requests", NON_NEGATIVE_INT, ADVANCED);
        property("request_throttle_stall_time", POSITIVE_INT, ADVANCED);
        property("request_throttle_drop_stale", BOOL, ADVANCED);
        property("request_stale_latency_check", BOOL, ADVANCED);
        property("request_stale_connection_check", BOOL, ADVANCED);
        property("netty.advancedFlowControl.enabled", BOOL, ADVANCED);
        property("enableEagerACLCheck", BOOL, ADVANCED);
        property("leader.maxConcurrentSnapSyncs", POSITIVE_INT, ADVANCED);
        property("leader.maxConcurrentDiffSyncs", POSITIVE_INT, ADVANCED);
        property("digest.enabled", BOOL, ADVANCED);
        property("snapshot.trust.empty", BOOL, ADVANCED);
        property("audit.enable", BOOL, ADVANCED);
        property("audit.impl.class", CLASS, ADVANCED);
        property("largeRequestMaxBytes", POSITIVE_INT, ADVANCED);
        property("largeRequestThreshold", INT, ADVANCED);
        property("netty.server.outstandingHandshake.limit", POSITIVE_INT, ADVANCED);
        property("throttled_op_wait_time", NON_NEGATIVE_INT, ADVANCED);
        property("learner.closeSocketAsync", BOOL, ADVANCED);
        property("leader.closeSocketAsync", BOOL, ADVANCED);
        property("snapshot.compression.method", TEXT, ADVANCED);
        // Cluster Options
        property("leader.maxTimeToWaitForEpoch", INT, CLUSTER);
        property("leaderServes", YES_NO, CLUSTER);
        property("cnxTimeout", POSITIVE_INT, CLUSTER);
        property("quorumCnxnTimeoutMs", INT, CLUSTER);
        property("4lw.commands.whitelist", FOUR_LETTER_WORDS, CLUSTER);
        property("tcpKeepAlive", BOOL, CLUSTER);
        property("clientTcpKeepAlive", BOOL, CLUSTER);
        property("electionPortBindRetry", NON_NEGATIVE_INT, CLUSTER);
        property("observer.reconnectDelayMs", LONG, CLUSTER);
        property("observer.election.DelayMs", LONG, CLUSTER);
        property("observerMaster.sizeLimit", INT, CLUSTER);
        // Encryption, Authentication, Authorization Options
        property("DigestAuthenticationProvider.enabled", BOOL, AUTH);
        property("DigestAuthenticationProvider.digestAlg", TEXT, AUTH);
        property("DigestAuthenticationProvider.superDigest", TEXT, AUTH);
        property("X509AuthenticationProvider.superUser", TEXT, AUTH);
        property("superUser", TEXT, AUTH);
        property("sessionRequireClientSASLAuth", BOOL, AUTH);
        property("enforce.auth.enabled", BOOL, AUTH);
        property("enforce.auth.schemes", TEXT, AUTH);
        property("ensembleAuthName", TEXT, AUTH);
        property("allowSaslFailedClients", BOOL, AUTH);
        property("client.portUnification", BOOL, AUTH);
        property("fips-mode", BOOL, AUTH);
        property("kerberos.removeHostFromPrincipal", BOOL, AUTH);
        property("kerberos.removeRealmFromPrincipal", BOOL, AUTH);
        // Unsafe Options
        property("forceSync", YES_NO, UNSAFE);
        property("skipACL", YES_NO, UNSAFE);
        // Data directory and database creation
        property("datadir.autocreate", BOOL, DATADIR_AUTOCREATE);
        property("db.autocreate", BOOL, DB_VALIDATION);
        // AdminServer configuration
        property("admin.enableServer", BOOL, ADMIN);
        property("admin.serverAddress", HOST, ADMIN);
        property("admin.serverPort", PORT, ADMIN);
        property("admin.idleTimeout", POSITIVE_INT, ADMIN);
        property("admin.commandURL", TEXT, ADMIN);
        property("admin.httpVersion", POSITIVE_INT, ADMIN);
        property("admin.portUnification", BOOL, ADMIN);
        property("admin.forceHttps", BOOL, ADMIN);
        property("admin.needClientAuth", BOOL, ADMIN);
        property("admin.snapshot.enabled", BOOL, ADMIN);
        property("admin.restore.enabled", BOOL, ADMIN);
        property("admin.rateLimiterIntervalInMS", POSITIVE_INT, ADMIN);
    }

    /**
     * TLS settings: {@code ssl.<suffix>} (client connections, Netty) and {@code ssl.quorum.<suffix>} (between
     * servers) become {@code zookeeper.ssl[.quorum].<suffix>}, read by ZooKeeper's {@code X509Util}.
     */
    static final Map<String, ValueType> SSL_SUFFIXES = sslSuffixes();
    /** Client-side only ({@code ClientX509Util}): {@code ssl.authProvider}, {@code ssl.sslProvider}. */
    static final Map<String, ValueType> SSL_CLIENT_ONLY_SUFFIXES = Map.of("authProvider", TEXT, "sslProvider", TEXT);

    /** Keys that look right but do nothing in zoo.cfg, with what to do instead. */
    static final Map<String, String> MISPLACED = misplaced();

    private ZooCfgKeys() {
    }

    static Optional<Key> exact(String name) {
        return Optional.ofNullable(EXACT.get(name));
    }

    static List<Key> all() {
        return List.copyOf(EXACT.values());
    }

    private static void parsed(String name, ValueType type, String section) {
        EXACT.put(name, new Key(name, Kind.PARSED, type, section));
    }

    private static void property(String name, ValueType type, String section) {
        EXACT.put(name, new Key(name, Kind.SYSTEM_PROPERTY, type, section));
    }

    private static Map<String, ValueType> sslSuffixes() {
        Map<String, ValueType> m = new LinkedHashMap<>();
        m.put("protocol", TEXT);
        m.put("enabledProtocols", TEXT);
        m.put("ciphersuites", TEXT);
        m.put("keyStore.location", PATH);
        m.put("keyStore.password", TEXT);
        m.put("keyStore.passwordPath", PATH);
        m.put("keyStore.type", TEXT);
        m.put("trustStore.location", PATH);
        m.put("trustStore.password", TEXT);
        m.put("trustStore.passwordPath", PATH);
        m.put("trustStore.type", TEXT);
        m.put("context.supplier.class", CLASS);
        m.put("hostnameVerification", BOOL);
        m.put("clientHostnameVerification", BOOL);
        m.put("allowReverseDnsLookup", BOOL);
        m.put("crl", BOOL);
        m.put("ocsp", BOOL);
        m.put("clientAuth", CLIENT_AUTH);
        m.put("handshakeDetectionTimeoutMillis", POSITIVE_INT);
        return Map.copyOf(m);
    }

    private static Map<String, String> misplaced() {
        Map<String, String> m = new LinkedHashMap<>();
        String container = "ZooKeeper reads it as the JVM system property of this exact name (no zookeeper. prefix), "
                + "so zoo.cfg cannot set it: put -D%s=... in JVM_OPTS in java.env";
        m.put("znode.container.checkIntervalMs", container.formatted("znode.container.checkIntervalMs"));
        m.put("znode.container.maxPerMinute", container.formatted("znode.container.maxPerMinute"));
        m.put("znode.container.maxNeverUsedIntervalMs", container.formatted("znode.container.maxNeverUsedIntervalMs"));
        m.put("jute.maxbuffer", "the server reads the JVM system property jute.maxbuffer, which zoo.cfg cannot set: "
                + "put -Djute.maxbuffer=... in JVM_OPTS in java.env (and give clients the same value)");
        m.put("java.security.auth.login.config", "a JVM system property: bin/zk-server sets it when CONF_DIR/jaas.conf exists");
        m.put("client.secure", "a client-side setting (the ZooKeeper client's JVM): it does nothing on a server");
        m.put("clientCnxnSocket", "a client-side setting (the ZooKeeper client's JVM): it does nothing on a server");
        m.put("sasl.client", "a client-side setting (the ZooKeeper client's JVM): it does nothing on a server");
        m.put("sasl.clientconfig", "a client-side setting (the ZooKeeper client's JVM): it does nothing on a server");
        m.put("readonlymode.enabled", "read as the JVM system property readonlymode.enabled (no zookeeper. prefix): "
                + "put -Dreadonlymode.enabled=true in JVM_OPTS in java.env");
        m.put("requireClientAuthScheme", "not read by ZooKeeper 3.9: use enforce.auth.enabled=true and "
                + "enforce.auth.schemes=sasl");
        return Map.copyOf(m);
    }
}
