package io.warden.zkconfig;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker catches what ZooKeeper lets through silently, and lets valid configurations pass. */
class ZooCfgCheckTest {
    @TempDir
    Path temp;

    private static List<ZooCfgCheck.Problem> check(String... lines) {
        return ZooCfgCheck.check(List.of(lines));
    }

    @Test
    void misspeltKey_isAnUnknownKey_withTheClosestKnownKey() {
        assertThat(check("tickTme=2000")).singleElement().satisfies(p -> {
            assertThat(p.line()).isEqualTo(1);
            assertThat(p.key()).isEqualTo("tickTme");
            assertThat(p.message()).contains("unknown key", "zookeeper.tickTme", "did you mean tickTime?");
        });
        assertThat(check("extendedTypesEnable=true")).singleElement()
                .extracting(ZooCfgCheck.Problem::message).asString().contains("did you mean extendedTypesEnabled?");
        assertThat(check("4lw.command.whitelist=srvr")).singleElement()
                .extracting(ZooCfgCheck.Problem::message).asString().contains("did you mean 4lw.commands.whitelist?");
    }

    @Test
    void misspeltKey_isCaughtThoughZooKeeperItselfAcceptsIt() throws Exception {
        String text = ParsedConfig.shipped("conf/ensemble-3/zoo.cfg").replace("extendedTypesEnabled=true", "extendedTypesEnable=true");
        ParsedConfig parsed = ParsedConfig.parse(text, 1, temp);
        // ZooKeeper parses it happily, and TTL nodes would silently be off ...
        assertThat(parsed.systemProperties()).containsEntry("zookeeper.extendedTypesEnable", "true")
                .doesNotContainKey("zookeeper.extendedTypesEnabled");
        // ... which is what the check is for.
        assertThat(parsed.problems()).extracting(ZooCfgCheck.Problem::key).containsExactly("extendedTypesEnable");
    }

    @Test
    void wrongValues_areProblems() {
        assertThat(check("tickTime=abc")).singleElement().extracting(ZooCfgCheck.Problem::message).isEqualTo("expected an integer >= 1");
        assertThat(check("extendedTypesEnabled=yes")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .isEqualTo("expected true or false");
        assertThat(check("forceSync=true")).singleElement().extracting(ZooCfgCheck.Problem::message).isEqualTo("expected yes or no");
        assertThat(check("4lw.commands.whitelist=srvr, ruok,stats")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().startsWith("unknown four-letter word(s) [stats]");
        assertThat(check("clientPort=70000")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .isEqualTo("expected a port number 0-65535");
        assertThat(check("ssl.clientAuth=always")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .isEqualTo("expected none, want or need");
        assertThat(check("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactry")).singleElement()
                .extracting(ZooCfgCheck.Problem::message).asString().contains("is not on the server's class path");
    }

    @Test
    void wrongValue_isAlsoRejectedByZooKeepersParser() {
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> ParsedConfig.parse(
                ParsedConfig.shipped("conf/ensemble-3/zoo.cfg").replace("tickTime=2000", "tickTime=abc"), 1, temp)))
                .isInstanceOf(org.apache.zookeeper.server.quorum.QuorumPeerConfig.ConfigException.class)
                .hasRootCauseInstanceOf(NumberFormatException.class);
    }

    @Test
    void keySetTwice_isAProblemOnTheSecondLine() {
        assertThat(check("clientPort=2181", "# comment", "clientPort=2182")).singleElement().satisfies(p -> {
            assertThat(p.line()).isEqualTo(3);
            assertThat(p.message()).contains("first on line 1");
        });
    }

    @Test
    void jvmOnlySettings_inZooCfg_sayWhereTheyBelong() {
        assertThat(check("znode.container.checkIntervalMs=1000")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().contains("-Dznode.container.checkIntervalMs", "java.env");
        assertThat(check("jute.maxbuffer=4194304")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().contains("-Djute.maxbuffer");
        assertThat(check("zookeeper.snapCount=1000")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().contains("write snapCount");
    }

    @Test
    void metricsProviderKeys_areCheckedAgainstTheProvider() {
        String ours = "metricsProvider.className=io.warden.zkconfig.metrics.PrometheusMetricsProvider";
        assertThat(check(ours, "metricsProvider.httpPort=7000", "metricsProvider.httpHost=127.0.0.1",
                "metricsProvider.exportJvmInfo=false")).isEmpty();
        assertThat(check(ours, "metricsProvider.httpPrt=7000")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().startsWith("not a setting of io.warden.zkconfig.metrics.PrometheusMetricsProvider");
        assertThat(check(ours, "metricsProvider.exportJvmInfo=yes")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .isEqualTo("expected true or false");
        assertThat(check("metricsProvider.httpPort=7000")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().contains("DefaultMetricsProvider");
    }

    @Test
    void tlsAndAuthFamilies_acceptKnownSuffixesOnly() {
        assertThat(check("ssl.quorum.keyStore.location=/k.p12", "ssl.keyStore.passwordPath=/p", "ssl.authProvider=x509",
                "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider")).isEmpty();
        assertThat(check("ssl.quorum.keystore.location=/k.p12")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().startsWith("unknown key; ssl.quorum.* keys are");
        assertThat(check("ssl.quorum.authProvider=x509")).hasSize(1);
        assertThat(check("authProvider.sasl=org.example.NoSuchProvider")).hasSize(1);
    }

    @Test
    void serverIdsAbove254_withExtendedTypes_areAProblem() {
        assertThat(check("extendedTypesEnabled=true", "server.254=a:1:2")).isEmpty();
        assertThat(check("extendedTypesEnabled=true", "server.255=a:1:2")).singleElement()
                .extracting(ZooCfgCheck.Problem::message).asString().contains("1-254");
        assertThat(check("server.255=a:1:2")).isEmpty();
    }

    @Test
    void propertiesSyntax_isReadAsJavaPropertiesReadsIt() {
        List<ZooCfgCheck.Entry> entries = ZooCfgCheck.read(List.of("  tickTime = 2000 ", "initLimit:10", "syncLimit 3",
                "! bang comment", "# hash comment", ""), new java.util.ArrayList<>());
        assertThat(entries).extracting(ZooCfgCheck.Entry::key, ZooCfgCheck.Entry::value)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("tickTime", "2000"),
                        org.assertj.core.groups.Tuple.tuple("initLimit", "10"),
                        org.assertj.core.groups.Tuple.tuple("syncLimit", "3"));
        assertThat(check("dataDir=C:\\zk")).singleElement().extracting(ZooCfgCheck.Problem::message)
                .asString().contains("backslashes");
    }

    @Test
    void main_validConfig_exitsZeroWithASummary() throws Exception {
        Path cfg = writeWithMyid(ParsedConfig.shipped("conf/ensemble-5/zoo.cfg"), 4);
        Result r = run(cfg);
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("is valid: server 4 of 5 voting members, tickTime 2000 ms, session timeouts 4000-30000 ms");
    }

    @Test
    void main_problemsOrARejectedConfig_exitTwoWithOneLineEach() throws Exception {
        Result typo = run(writeWithMyid(ParsedConfig.shipped("conf/ensemble-3/zoo.cfg").replace("tickTime=", "tickTme="), 1));
        assertThat(typo.status()).isEqualTo(2);
        assertThat(typo.err()).contains("tickTme: unknown key");
        // Only ZooKeeper's parser knows this one: min above max.
        Result rejected = run(writeWithMyid(ParsedConfig.shipped("conf/ensemble-3/zoo.cfg")
                .replace("minSessionTimeout=4000", "minSessionTimeout=40000"), 1));
        assertThat(rejected.status()).isEqualTo(2);
        assertThat(rejected.err()).contains("ZooKeeper rejects it", "minSessionTimeout must not be larger than maxSessionTimeout");
        Result missing = run(temp.resolve("nothing.cfg"));
        assertThat(missing.status()).isEqualTo(1);
    }

    private Path writeWithMyid(String text, int myid) throws Exception {
        Path data = Files.createDirectories(temp.resolve("data"));
        Files.writeString(data.resolve("myid"), myid + "\n");
        Path cfg = temp.resolve("zoo.cfg");
        Files.writeString(cfg, text.replaceAll("(?m)^dataDir=.*$", "dataDir=" + data));
        return cfg;
    }

    private record Result(int status, String out, String err) {
    }

    private static Result run(Path cfg) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        java.util.Properties before = (java.util.Properties) System.getProperties().clone();
        try {
            int status = ZooCfgCheck.run(new String[] {cfg.toString()}, new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setProperties(before);
        }
    }
}
