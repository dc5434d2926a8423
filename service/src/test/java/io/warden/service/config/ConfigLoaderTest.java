package io.warden.service.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ConfigLoaderTest {
    @TempDir
    Path dir;

    private final Map<String, String> env = new HashMap<>();

    private WardenConfig load(String... args) {
        return io.warden.service.Settings.loader(env).load(args);
    }

    private ConfigException failure(String... args) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> load(args));
        assertThat(e).as("expected a ConfigException for %s with env %s", Arrays.toString(args), env).isNotNull();
        assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("\r");
        return e;
    }

    private Path yaml(String text) throws IOException {
        Path file = dir.resolve("warden.yaml");
        Files.writeString(file, text);
        return file;
    }

    // ---- defaults and each source ----------------------------------------------------------------------------

    @Test
    void noSettings_givesTheDefaults() {
        assertThat(load()).isEqualTo(WardenConfig.defaults());
    }

    @Test
    void defaults_matchTheContract() {
        WardenConfig d = WardenConfig.defaults();
        assertThat(d.httpPort()).isEqualTo(7070);
        assertThat(d.zkConnect()).isNull();
        assertThat(d.dataDir()).isEqualTo(Path.of("data"));
        assertThat(d.chroot()).isEqualTo("/warden");
        assertThat(d.sessionTtlMin()).isEqualTo(Duration.ofMillis(2000));
        assertThat(d.sessionTtlMax()).isEqualTo(Duration.ofMillis(120_000));
        assertThat(d.leaseNamespace()).isEqualTo("default");
    }

    @Test
    void everyFlag_setsItsComponent_inBothSpellings() {
        String[] args = {
            "--http-host", "127.0.0.1",
            "--http-port=8080",
            "--zk", "zk1:2181,zk2:2181,[::1]:2182",
            "--chroot=/cells/eu-1",
            "--data-dir", "/var/lib/warden",
            "--embedded-zk-port=0",
            "--zk-session-timeout-ms", "5000",
            "--zk-connection-timeout-ms=800",
            "--session-ttl-min-ms", "1000",
            "--session-ttl-max-ms=60000",
            "--session-ttl-default-ms", "3000",
            "--max-requests-per-session=7",
            "--max-waiters-per-lock", "8",
            "--max-entries-per-lock=12",
            "--max-sessions-per-gateway=9",
            "--lease-namespace", "leases-2",
            "--drain-timeout-ms=2500",
            "--max-body-bytes", "1024",
            "--gateway-id=gw-a.1",
            "--advertise-host=gw-a.example.net",
            "--console-admin-token", "s3cret-admin-token-0123",
            "--watch-buffer-bytes", "8388608",
            "--max-watches", "250",
            "--allowed-hosts", "warden.example.com, *.cell.example.net,10.0.0.7",
            "--allowed-origins=https://ops.example.com:8443",
            "--max-connections-per-ip", "64",
            "--http-threads", "48",
            "--body-read-timeout-ms", "4000",
            "--zk-max-packet-bytes", "2097152",
            "--watch-mirror-bytes=16777216",
        };
        WardenConfig c = load(args);
        assertThat(c).isEqualTo(new WardenConfig("127.0.0.1", 8080, "zk1:2181,zk2:2181,[::1]:2182", "/cells/eu-1",
                Path.of("/var/lib/warden"), 0, Duration.ofMillis(5000), Duration.ofMillis(800), Duration.ofMillis(1000),
                Duration.ofMillis(60_000), Duration.ofMillis(3000), 7, 8, 12, 9, "leases-2", Duration.ofMillis(2500), 1024,
                "gw-a.1", "gw-a.example.net", "s3cret-admin-token-0123", 8L << 20, 250, null, false, 10_000, 100_000, null, null, null, "cn",
                java.util.List.of("warden.example.com", "*.cell.example.net", "10.0.0.7"),
                java.util.List.of("https://ops.example.com:8443"), 64, 48, Duration.ofMillis(4000),
                null, null, null, null, true, null, null, "auto", 2 << 20, 16L << 20, java.util.List.of(),
                java.util.Map.of()));
    }

    @Test
    void everySetting_hasAFlagAnEnvVarAndAYamlKey() throws IOException {
        for (Setting s : Setting.values()) {
            assertThat(s.flag()).isEqualTo("--" + s.key());
            assertThat(s.envVar()).startsWith("WARDEN_");
            assertThat(ConfigLoader.usage()).contains(s.flag()).contains(s.envVar());
        }
        // one record component per setting, in the record's order
        assertThat(WardenConfig.class.getRecordComponents()).hasSize(Setting.values().length);
        assertThat(Setting.ZK.envVar()).isEqualTo("WARDEN_ZK_CONNECT");
        assertThat(Setting.HTTP_PORT.envVar()).isEqualTo("WARDEN_HTTP_PORT");
        assertThat(Setting.DATA_DIR.envVar()).isEqualTo("WARDEN_DATA_DIR");
        assertThat(Setting.ZK_SESSION_TIMEOUT_MS.envVar()).isEqualTo("WARDEN_ZK_SESSION_TIMEOUT_MS");
    }

    @Test
    void environment_setsSettings() {
        env.put("WARDEN_HTTP_PORT", "9090");
        env.put("WARDEN_ZK_CONNECT", "localhost:2181");
        env.put("WARDEN_DATA_DIR", "/tmp/w");
        env.put("WARDEN_SESSION_TTL_DEFAULT_MS", "4000");
        env.put("WARDEN_LEASE_NAMESPACE", "jobs");
        WardenConfig c = load();
        assertThat(c.httpPort()).isEqualTo(9090);
        assertThat(c.zkConnect()).isEqualTo("localhost:2181");
        assertThat(c.dataDir()).isEqualTo(Path.of("/tmp/w"));
        assertThat(c.sessionTtlDefault()).isEqualTo(Duration.ofMillis(4000));
        assertThat(c.leaseNamespace()).isEqualTo("jobs");
    }

    @Test
    void emptyEnvironmentVariable_countsAsUnset() {
        env.put("WARDEN_ZK_CONNECT", "");
        env.put("WARDEN_HTTP_PORT", "  ");
        assertThat(load()).isEqualTo(WardenConfig.defaults());
    }

    @Test
    void yamlFile_setsSettings_byFlagOrEnv() throws IOException {
        Path file = yaml("""
                # a comment
                http-port: 7171
                zk: "zk1:2181,zk2:2181"
                chroot: /warden-test
                session-ttl-max-ms: 90000
                max-body-bytes: 2048
                gateway-id: gw-7
                """);
        WardenConfig viaFlag = load("--config", file.toString());
        assertThat(viaFlag.httpPort()).isEqualTo(7171);
        assertThat(viaFlag.zkConnect()).isEqualTo("zk1:2181,zk2:2181");
        assertThat(viaFlag.chroot()).isEqualTo("/warden-test");
        assertThat(viaFlag.sessionTtlMax()).isEqualTo(Duration.ofMillis(90_000));
        assertThat(viaFlag.maxBodyBytes()).isEqualTo(2048);
        assertThat(viaFlag.gatewayId()).isEqualTo("gw-7");

        env.put("WARDEN_CONFIG", file.toString());
        assertThat(load()).isEqualTo(viaFlag);
    }

    @Test
    void emptyYamlFile_setsNothing() throws IOException {
        Path file = yaml("# nothing yet\n");
        assertThat(load("--config=" + file)).isEqualTo(WardenConfig.defaults());
    }

    // ---- precedence ------------------------------------------------------------------------------------------

    @Test
    void precedence_flagBeatsEnvBeatsFileBeatsDefault() throws IOException {
        Path file = yaml("""
                http-port: 1001
                max-waiters-per-lock: 1002
                max-requests-per-session: 999
                """);
        env.put("WARDEN_CONFIG", file.toString());
        env.put("WARDEN_HTTP_PORT", "2001");
        env.put("WARDEN_MAX_WAITERS_PER_LOCK", "2002");
        WardenConfig c = load("--http-port", "3001");
        assertThat(c.httpPort()).as("flag over env and file").isEqualTo(3001);
        assertThat(c.maxWaitersPerLock()).as("env over file").isEqualTo(2002);
        assertThat(c.maxRequestsPerSession()).as("file over default").isEqualTo(999);
        assertThat(c.maxSessionsPerGateway()).as("default").isEqualTo(WardenConfig.defaults().maxSessionsPerGateway());
    }

    @Test
    void configFlag_beatsConfigEnv() throws IOException {
        Path fromFlag = yaml("http-port: 1111\n");
        Path fromEnv = dir.resolve("other.yaml");
        Files.writeString(fromEnv, "http-port: 2222\n");
        env.put("WARDEN_CONFIG", fromEnv.toString());
        assertThat(load("--config", fromFlag.toString()).httpPort()).isEqualTo(1111);
    }

    @Test
    void crossChecks_useTheWinningValues() throws IOException {
        // the file alone would be inconsistent (default below min), the flag makes it consistent
        Path file = yaml("session-ttl-min-ms: 5000\nsession-ttl-default-ms: 3000\n");
        WardenConfig c = load("--config", file.toString(), "--session-ttl-default-ms", "6000");
        assertThat(c.sessionTtlMin()).isEqualTo(Duration.ofMillis(5000));
        assertThat(c.sessionTtlDefault()).isEqualTo(Duration.ofMillis(6000));
    }

    // ---- bad settings: one line naming the setting, the source and what is allowed ------------------------------

    @ParameterizedTest(name = "--{0} {1}")
    @CsvSource(delimiter = '|', value = {
        "http-port                | 70x           | a port number 0-65535",
        "http-port                | 65536         | a port number 0-65535",
        "http-port                | -1            | a port number 0-65535",
        "embedded-zk-port         | 99999         | a port number 0-65535",
        "http-host                | 'bad host'    | a host name or IP address",
        "zk                       | 'zk1:2181/warden' | without a chroot suffix",
        "zk                       | 'zk1:0'       | host:port",
        "zk                       | 'zk1:2181,'   | host:port",
        "zk                       | 'zk 1:2181'   | host:port",
        "chroot                   | warden        | starts with '/'",
        "chroot                   | /warden/      | no trailing '/'",
        "chroot                   | /             | starts with '/'",
        "chroot                   | /a//b         | no empty",
        "chroot                   | /a/../b       | '..'",
        "chroot                   | /zookeeper/x  | not under /zookeeper",
        "zk-session-timeout-ms    | 0             | a whole number of milliseconds 1-86400000",
        "zk-connection-timeout-ms | -5            | a whole number of milliseconds 1-86400000",
        "session-ttl-min-ms       | 1.5           | a whole number of milliseconds",
        "session-ttl-max-ms       | 10s           | a whole number of milliseconds",
        "drain-timeout-ms         | 86400001      | a whole number of milliseconds 1-86400000",
        "max-requests-per-session | 0             | a whole number 1-1000",
        "max-requests-per-session | 1001          | a whole number 1-1000",
        "max-waiters-per-lock     | 10001         | a whole number 1-10000",
        "max-waiters-per-lock     | 2147483648    | a whole number 1-10000",
        "max-entries-per-lock     | 0             | a whole number 1-10000",
        "max-entries-per-lock     | 10001         | a whole number 1-10000",
        "zk-max-packet-bytes      | 16383         | a whole number of bytes 16384-268435456",
        "zk-max-packet-bytes      | 268435457     | a whole number of bytes 16384-268435456",
        "watch-mirror-bytes       | 1048575       | 0 (automatic) or a whole number of bytes",
        "max-sessions-per-gateway | many          | a whole number 1-2147483647",
        "max-body-bytes           | -1            | a whole number 1-2147483647",
        "lease-namespace          | Default       | [a-z][a-z0-9-]{0,62}",
        "lease-namespace          | 9lives        | [a-z][a-z0-9-]{0,62}",
        "lease-namespace          | a/b           | [a-z][a-z0-9-]{0,62}",
        "gateway-id               | -gw           | [A-Za-z0-9._-]",
        "gateway-id               | gw/1          | [A-Za-z0-9._-]",
        "allowed-hosts            | 'a b'         | a comma list of host names",
        "allowed-hosts            | a,,b          | a comma list of host names",
        "allowed-hosts            | a/b           | a comma list of host names",
        "allowed-origins          | evil.example  | a comma list of origins",
        "allowed-origins          | https://a/b   | a comma list of origins",
        "allowed-origins          | ftp://a       | a comma list of origins",
    })
    void badFlagValue_namesSettingSourceAndWhatIsAllowed(String key, String value, String allowed) {
        ConfigException e = failure("--" + key, value);
        assertThat(e.setting()).isEqualTo(key);
        assertThat(e.getMessage())
                .startsWith("invalid " + key + " \"" + value + "\"")
                .contains("(from flag --" + key + ")")
                .contains("expected ")
                .contains(allowed);
    }

    @Test
    void badAdminToken_isRejected_withoutEchoingIt() {
        ConfigException e = failure("--console-admin-token", "short-secret");
        assertThat(e.setting()).isEqualTo("console-admin-token");
        assertThat(e.getMessage())
                .isEqualTo("invalid console-admin-token (value hidden, 12 characters) (from flag --console-admin-token): "
                        + "expected 16-256 printable ASCII characters without spaces")
                .doesNotContain("short-secret");
    }

    @Test
    void aBadAuthFile_stopsStartUp_withOneLineNamingTheEntry() throws IOException {
        java.nio.file.Path file = dir.resolve("auth.yaml");
        java.nio.file.Files.writeString(file, "principals:\n  - name: ci\n    grants: [{namespace: builds, role: boss}]\n");
        ConfigException e = failure("--auth-file", file.toString());
        assertThat(e.setting()).isEqualTo("auth-file");
        assertThat(e.getMessage()).isEqualTo("auth file " + file + ": principals[0] (ci): grants[0]: role must be read, "
                + "lock or admin (auth-file from flag --auth-file)");
        assertThat(failure("--auth-file", dir.resolve("missing.yaml").toString()).getMessage()).contains("cannot be read");
        assertThat(failure("--metrics-auth", "true").getMessage()).contains("needs auth-file");
        java.nio.file.Files.writeString(file, "principals:\n  - name: ci\n    grants: [{namespace: builds, role: lock}]\n");
        assertThat(load("--auth-file", file.toString(), "--metrics-auth=true").metricsAuth()).isTrue();
    }

    @Test
    void zooKeeperSecurity_settingsThatNeedEachOther_stopStartUp_withOneLineNamingThem() throws IOException {
        java.nio.file.Path pem = dir.resolve("ca.pem");
        java.nio.file.Files.writeString(pem, "not a certificate\n");
        java.nio.file.Path password = dir.resolve("zk.password");
        java.nio.file.Files.writeString(password, "s3cret\n");
        assertThat(failure("--zk-tls-truststore", pem.toString()).getMessage())
                .isEqualTo("zk-tls-truststore " + pem + " (from flag --zk-tls-truststore) needs zk: the embedded ZooKeeper "
                        + "is reached over loopback without TLS or SASL");
        assertThat(failure("--zk", "zk1:2281", "--zk-tls-keystore", dir.resolve("gw.p12").toString()).getMessage())
                .contains("zk-tls-keystore", "needs zk-tls-truststore too");
        assertThat(failure("--zk", "zk1:2281", "--zk-sasl-user", "warden").getMessage())
                .contains("needs zk-sasl-password-file too");
        assertThat(failure("--zk", "zk1:2281", "--zk-sasl-password-file", password.toString()).getMessage())
                .contains("needs zk-sasl-user too");
        assertThat(failure("--zk", "zk1:2281", "--zk-tls-truststore", dir.resolve("ca.txt").toString()).getMessage())
                .contains("expected a .pem, .p12, .pfx or .jks file");
        ConfigException badStore = failure("--zk", "zk1:2281", "--zk-tls-truststore", pem.toString());
        assertThat(badStore.setting()).isEqualTo("zk-tls-truststore");
        assertThat(badStore.getMessage()).startsWith("zk-tls: ").doesNotContain("\n");
        ConfigException missingPassword = failure("--zk", "zk1:2281", "--zk-sasl-user", "warden",
                "--zk-sasl-password-file", dir.resolve("missing").toString());
        assertThat(missingPassword.setting()).isEqualTo("zk-sasl-password-file");
        assertThat(missingPassword.getMessage()).contains("cannot be read");
        assertThat(failure("--zk-acl", "sasl:warden").getMessage()).contains("invalid zk-acl");
        WardenConfig ok = load("--zk", "zk1:2281", "--zk-sasl-user", "warden", "--zk-sasl-password-file", password.toString(),
                "--zk-acl", "sasl:warden:cdrwa,sasl:operator:r");
        assertThat(ok.zkSaslUser()).isEqualTo("warden");
        assertThat(ok.zkAcl()).isEqualTo("sasl:warden:cdrwa,sasl:operator:r");
    }

    @Test
    void adminToken_isNeverPrinted() {
        WardenConfig c = load("--console-admin-token", "s3cret-admin-token-0123");
        assertThat(c.consoleAdminToken()).isEqualTo("s3cret-admin-token-0123");
        assertThat(c.toString()).doesNotContain("s3cret").contains("consoleAdminToken=(set, hidden)");
    }

    @Test
    void badEnvValue_namesTheVariable() {
        env.put("WARDEN_HTTP_PORT", "http");
        ConfigException e = failure();
        assertThat(e.setting()).isEqualTo("http-port");
        assertThat(e.getMessage()).isEqualTo(
                "invalid http-port \"http\" (from env WARDEN_HTTP_PORT): expected a port number 0-65535");
    }

    @Test
    void badFileValue_namesTheKeyAndTheFile() throws IOException {
        Path file = yaml("max-waiters-per-lock: 0\n");
        ConfigException e = failure("--config", file.toString());
        assertThat(e.setting()).isEqualTo("max-waiters-per-lock");
        assertThat(e.getMessage()).isEqualTo("invalid max-waiters-per-lock \"0\" (from key max-waiters-per-lock in file "
                + file + "): expected a whole number 1-10000 (a lock's queue is read in one ZooKeeper reply)");
    }

    @Test
    void badValueThatLosesToABetterSource_isNeverRead() {
        env.put("WARDEN_HTTP_PORT", "not-a-port");
        assertThat(load("--http-port", "7000").httpPort()).isEqualTo(7000);
    }

    @Test
    void valueWithControlCharacters_isShownEscapedOnOneLine() {
        env.put("WARDEN_LEASE_NAMESPACE", "a\nb");
        ConfigException e = failure();
        assertThat(e.getMessage()).contains("\"a\\u000ab\"").contains("env WARDEN_LEASE_NAMESPACE");
    }

    @Test
    void ttlMinAboveMax_namesBothAndTheirSources() {
        env.put("WARDEN_SESSION_TTL_MIN_MS", "200000");
        ConfigException e = failure();
        assertThat(e.setting()).isEqualTo("session-ttl-min-ms");
        assertThat(e.getMessage()).isEqualTo("session-ttl-min-ms 200000 (from env WARDEN_SESSION_TTL_MIN_MS) is greater"
                + " than session-ttl-max-ms 120000 (from default): expected session-ttl-min-ms <= session-ttl-max-ms");
    }

    @Test
    void maxEntriesPerLock_thatTheGatewayCouldNotList_isRejected_namingBothSettings() {
        ConfigException e = failure("--zk-max-packet-bytes", "1048575");
        assertThat(e.setting()).isEqualTo("max-entries-per-lock");
        assertThat(e.getMessage()).isEqualTo("max-entries-per-lock 10000 (from default) is more than zk-max-packet-bytes "
                + "1048575 (from flag --zk-max-packet-bytes) lets the gateway list (8439 entries: half the packet, 62 bytes "
                + "an entry): expected zk-max-packet-bytes of at least 1242048, or a lower max-entries-per-lock");
        // the same arithmetic as the gateway's (zk.PacketLimit)
        assertThat(new io.warden.service.zk.PacketLimit(1048575).listable()).isEqualTo(8439);
        assertThat(new io.warden.service.zk.PacketLimit(1242048).listable()).isEqualTo(10_000);
        assertThat(load("--zk-max-packet-bytes", "1048575", "--max-entries-per-lock", "8439").maxEntriesPerLock())
                .isEqualTo(8439);
        assertThat(load("--zk-max-packet-bytes", "1242048").maxEntriesPerLock()).isEqualTo(10_000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"1000", "130000"})
    void ttlDefaultOutsideMinMax_isRejected(String ttl) {
        ConfigException e = failure("--session-ttl-default-ms", ttl);
        assertThat(e.setting()).isEqualTo("session-ttl-default-ms");
        assertThat(e.getMessage())
                .startsWith("session-ttl-default-ms " + ttl + " (from flag --session-ttl-default-ms) is outside"
                        + " session-ttl-min-ms 2000 (from default) .. session-ttl-max-ms 120000 (from default)")
                .endsWith("expected session-ttl-min-ms <= session-ttl-default-ms <= session-ttl-max-ms");
    }

    @Test
    void ttlBoundsEqual_areAllowed() {
        WardenConfig c = load("--session-ttl-min-ms=5000", "--session-ttl-max-ms=5000", "--session-ttl-default-ms=5000");
        assertThat(c.sessionTtlMin()).isEqualTo(c.sessionTtlMax()).isEqualTo(c.sessionTtlDefault());
    }

    @Test
    void embeddedZkPortSameAsHttpPort_isRejected_onlyWhenEmbedded() {
        ConfigException e = failure("--http-port", "2181");
        assertThat(e.setting()).isEqualTo("embedded-zk-port");
        assertThat(e.getMessage()).contains("embedded-zk-port 2181 (from default)")
                .contains("http-port 2181 (from flag --http-port)");
        assertThat(load("--http-port", "2181", "--zk", "zk1:2181").httpPort()).isEqualTo(2181);
        assertThat(load("--http-port", "0", "--embedded-zk-port", "0").httpPort()).isZero();
    }

    @Test
    void unknownFlag_isRejected_withASuggestion() {
        ConfigException e = failure("--htp-port", "7070");
        assertThat(e.getMessage()).isEqualTo("unknown flag \"--htp-port\" (did you mean --http-port?) (see --help)");
        assertThat(failure("--frobnicate").getMessage()).isEqualTo("unknown flag \"--frobnicate\" (see --help)");
        assertThat(failure("--zk-connect=x:1").getMessage()).contains("unknown flag \"--zk-connect\"");
    }

    @Test
    void positionalArgumentOrSingleDash_isRejected() {
        assertThat(failure("7070").getMessage()).startsWith("unexpected argument \"7070\"");
        assertThat(failure("-p", "7070").getMessage()).startsWith("unexpected argument \"-p\"");
        assertThat(failure("--").getMessage()).startsWith("unexpected argument \"--\"");
    }

    @Test
    void flagWithoutValue_isRejected() {
        ConfigException e = failure("--http-port");
        assertThat(e.setting()).isEqualTo("http-port");
        assertThat(e.getMessage()).isEqualTo("flag --http-port needs a value: --http-port PORT or --http-port=...");
        assertThat(failure("--zk", "--http-port", "1").getMessage()).startsWith("flag --zk needs a value");
        assertThat(failure("--config").getMessage()).startsWith("flag --config needs a value");
    }

    @Test
    void emptyFlagValue_isRejected() {
        ConfigException e = failure("--zk=");
        assertThat(e.getMessage()).startsWith("invalid zk \"\" (from flag --zk): expected a ZooKeeper connect string");
    }

    @Test
    void repeatedFlag_isRejected() {
        assertThat(failure("--http-port", "1", "--http-port=2").getMessage())
                .isEqualTo("flag --http-port is given more than once");
    }

    @Test
    void unknownYamlKey_isRejected_namingKeyAndFile() throws IOException {
        Path file = yaml("http-port: 7070\nzk-connect: localhost:2181\n");
        ConfigException e = failure("--config", file.toString());
        assertThat(e.getMessage()).startsWith("unknown key \"zk-connect\" in config file " + file
                + " (from flag --config)");
        Path dashed = yaml("--http-port: 7070\n");
        assertThat(failure("--config", dashed.toString()).getMessage()).contains("without the leading --");
        Path config = yaml("config: other.yaml\n");
        assertThat(failure("--config", config.toString()).getMessage()).startsWith("unknown key \"config\"");
    }

    @Test
    void yamlShapeErrors_areOneLine() throws IOException {
        assertThat(failure("--config", yaml("- a\n- b\n").toString()).getMessage())
                .endsWith("must be a YAML mapping of setting: value, e.g. 'http-port: 7070'");
        assertThat(failure("--config", yaml("http-port:\n").toString()).getMessage())
                .startsWith("setting http-port (key http-port in file ").contains("has no value");
        assertThat(failure("--config", yaml("zk:\n  - a:1\n").toString()).getMessage())
                .contains("must be a single value, not a list");
        assertThat(failure("--config", yaml("http-port: 1\nhttp-port: 2\n").toString()).getMessage())
                .contains("is not valid YAML").contains("http-port");
        assertThat(failure("--config", yaml("http-port: [1\nzk: x\n").toString()).getMessage())
                .contains("is not valid YAML at line");
    }

    @Test
    void missingConfigFile_isOneLine() {
        Path missing = dir.resolve("nope.yaml");
        assertThat(failure("--config", missing.toString()).getMessage())
                .isEqualTo("config file " + missing + " (from flag --config) does not exist");
        env.put("WARDEN_CONFIG", missing.toString());
        assertThat(failure().getMessage()).isEqualTo("config file " + missing + " (from env WARDEN_CONFIG) does not exist");
        assertThat(failure("--config", dir.toString()).getMessage()).endsWith("is a directory: expected a YAML file");
    }

    @Test
    void yamlNonStringScalars_areReadAsTheirText() throws IOException {
        assertThat(failure("--config", yaml("http-port: true\n").toString()).getMessage())
                .startsWith("invalid http-port \"true\"");
        assertThat(failure("--config", yaml("drain-timeout-ms: 2.5\n").toString()).getMessage())
                .startsWith("invalid drain-timeout-ms \"2.5\"");
    }

    // ---- help and leftovers ----------------------------------------------------------------------------------

    @Test
    void help_isRecognised_andListsEverySettingWithEnvAndDefault() {
        assertThat(ConfigLoader.helpRequested("--http-port", "1", "--help")).isTrue();
        assertThat(ConfigLoader.helpRequested("-h")).isTrue();
        assertThat(ConfigLoader.helpRequested("--http-port", "1")).isFalse();
        String usage = ConfigLoader.usage();
        assertThat(usage).contains("--config FILE").contains("WARDEN_CONFIG").contains("--help");
        assertThat(usage).contains("--http-port PORT").contains("env WARDEN_HTTP_PORT, default 7070");
        assertThat(usage).contains("--zk HOST:PORT,...").contains("env WARDEN_ZK_CONNECT, default (unset: embedded ZooKeeper)");
        assertThat(usage).contains("env WARDEN_SESSION_TTL_MAX_MS, default 120000");
        assertThat(usage).contains("env WARDEN_DATA_DIR, default data");
        // --help among other flags is skipped by load too
        assertThat(load("--help")).isEqualTo(WardenConfig.defaults());
    }

    @Test
    void unknownWardenEnvironmentVariables_areReported_notFatal() {
        env.put("WARDEN_HTTP_PROT", "1");
        env.put("WARDEN_CONFIG", "");
        env.put("PATH", "/bin");
        ConfigLoader loader = new ConfigLoader(env);
        assertThat(loader.load()).isEqualTo(WardenConfig.defaults());
        assertThat(loader.unknownEnvironmentVariables()).isEqualTo(List.of("WARDEN_HTTP_PROT"));
    }

    @Test
    void builder_roundTrips() {
        WardenConfig c = WardenConfig.defaults().toBuilder().httpPort(1).gatewayId("g").build();
        assertThat(c).isEqualTo(WardenConfig.defaults().withHttpPort(1).toBuilder().gatewayId("g").build());
        assertThatThrownBy(() -> new ConfigLoader(null)).isInstanceOf(NullPointerException.class);
    }
}
