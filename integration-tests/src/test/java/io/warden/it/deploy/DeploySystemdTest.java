package io.warden.it.deploy;

import io.warden.it.support.RepoRoot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.warden.service.Settings;
import io.warden.service.config.ConfigLoader;
import io.warden.service.config.WardenConfig;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.Version;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The systemd unit and environment file of docs/running-without-ansible.md, as shipped in {@code deploy/systemd/}:
 * systemd accepts the unit, the gateway accepts the settings, the JVM accepts the flags, and the ZooKeeper version the
 * page claims is the one the tests run.
 */
class DeploySystemdTest {
    private static final Path REPO = RepoRoot.path();
    private static final Path UNIT = REPO.resolve("deploy/systemd/warden.service");
    private static final Path ENV = REPO.resolve("deploy/systemd/warden.env");
    private static final Path DOC = REPO.resolve("docs/running-without-ansible.md");
    private static final String UNIT_JAVA = "/usr/bin/java";


    @Test
    void systemdAnalyzeVerify_acceptsTheUnit_withoutAWarning(@TempDir Path dir) throws Exception {
        String analyze = onPath("systemd-analyze");
        if (analyze == null) {
            fail("systemd-analyze is not on the PATH: install the Debian package systemd (apt-get install systemd)");
        }
        String unit = Files.readString(UNIT, StandardCharsets.UTF_8);
        assertThat(unit).contains("ExecStart=" + UNIT_JAVA + " $JAVA_OPTS -jar /opt/warden/warden-service.jar");
        // systemd-analyze checks that ExecStart's program exists; a machine whose Java is elsewhere checks the same
        // unit with its own.
        if (!Files.isExecutable(Path.of(UNIT_JAVA))) {
            unit = unit.replace("ExecStart=" + UNIT_JAVA + " ", "ExecStart=" + javaOfThisJvm() + " ");
        }
        Path copy = dir.resolve("warden.service");
        Files.writeString(copy, unit, StandardCharsets.UTF_8);

        Result r = run(List.of(analyze, "verify", "--man=no", copy.toString()));
        assertThat(r.output()).as("systemd-analyze verify's complaints").isEmpty();
        assertThat(r.exit()).as("systemd-analyze verify's exit status; output:\n" + r.output()).isZero();
    }

    @Test
    void theGatewayAccepts_theUnitsAndTheEnvironmentFilesSettings() throws IOException {
        Map<String, String> env = new LinkedHashMap<>(unitEnvironment());
        env.putAll(environmentFile(ENV)); // systemd: EnvironmentFile= overrides Environment=
        assertThat(env).containsKeys("WARDEN_ZK_CONNECT", "WARDEN_DATA_DIR", "JAVA_OPTS");

        ConfigLoader loader = Settings.loader(env);
        WardenConfig config = loader.load();
        assertThat(loader.unknownEnvironmentVariables()).as("WARDEN_* variables that are no setting").isEmpty();
        assertThat(config.zkConnect()).isEqualTo(env.get("WARDEN_ZK_CONNECT"));
        assertThat(config.dataDir()).isEqualTo(Path.of("/var/lib/warden"));
        assertThat(config.gatewayId()).isEqualTo("gw1");
    }

    @Test
    void theJvmAccepts_JAVA_OPTS_ofTheUnitAndOfTheEnvironmentFile() throws Exception {
        for (String opts : List.of(unitEnvironment().get("JAVA_OPTS"), environmentFile(ENV).get("JAVA_OPTS"))) {
            assertThat(opts).contains("-Xmx").contains("-XX:+ExitOnOutOfMemoryError");
            List<String> command = new ArrayList<>();
            command.add(javaOfThisJvm());
            command.addAll(List.of(opts.trim().split("\\s+"))); // as systemd splits an unbraced $JAVA_OPTS
            command.add("-version");
            Result r = run(command);
            assertThat(r.exit()).as(String.join(" ", command) + "\n" + r.output()).isZero();
        }
    }

    @Test
    void theZooKeeperVersionsThePageClaims_areTheOnesTheTestsRun_andTheNewestIsTheOneAnsibleInstalls() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("ZooKeeper (\\d+\\.\\d+\\.\\d+) to (\\d+\\.\\d+\\.\\d+) servers; tested with both")
                .matcher(doc);
        assertThat(m.find()).as("docs/running-without-ansible.md states the versions up front").isTrue();
        String oldest = m.group(1);
        String newest = m.group(2);

        String onClassPath = Version.getFullVersion().replaceFirst("[-, ].*$", "");
        assertThat(newest).as("the ZooKeeper of the tests' class path (zookeeper.version in pom.xml)")
                .isEqualTo(onClassPath);
        String ansible = Files.readString(REPO.resolve("ansible/roles/zookeeper/defaults/main.yml"));
        Matcher a = Pattern.compile("(?m)^zookeeper_version:\\s*(\\S+)").matcher(ansible);
        assertThat(a.find()).isTrue();
        assertThat(newest).as("zookeeper_version of the Ansible role").isEqualTo(a.group(1));

        // OldestZooKeeperIT runs its servers from the release named by this property.
        String pom = Files.readString(REPO.resolve("pom.xml"), StandardCharsets.UTF_8);
        Matcher p = Pattern.compile("<zookeeper\\.oldest\\.version>([^<]+)</zookeeper\\.oldest\\.version>").matcher(pom);
        assertThat(p.find()).as("zookeeper.oldest.version in pom.xml").isTrue();
        assertThat(oldest).as("zookeeper.oldest.version in pom.xml, the servers of OldestZooKeeperIT").isEqualTo(p.group(1));
        assertThat(oldest.substring(0, oldest.lastIndexOf('.'))).as("the same minor release")
                .isEqualTo(newest.substring(0, newest.lastIndexOf('.')));
    }

    @Test
    void thePagesCommands_installWhereTheUnitLooks() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        String unit = Files.readString(UNIT, StandardCharsets.UTF_8);
        for (String path : List.of("/opt/warden/warden-service.jar", "/etc/warden/warden.env", "/var/lib/warden")) {
            assertThat(unit).contains(path);
            assertThat(doc).contains(path);
        }
        assertThat(doc).contains("install -D -m 0644 deploy/systemd/warden.service /etc/systemd/system/warden.service")
                .contains("install -D -m 0600 deploy/systemd/warden.env /etc/warden/warden.env");
    }

    /** The unit's {@code Environment=} assignments, unquoted as systemd does for these simple forms. */
    private static Map<String, String> unitEnvironment() throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Files.readAllLines(UNIT, StandardCharsets.UTF_8)) {
            if (!line.startsWith("Environment=")) continue;
            String assignment = line.substring("Environment=".length()).strip();
            if (assignment.startsWith("\"") && assignment.endsWith("\"")) {
                assignment = assignment.substring(1, assignment.length() - 1);
            }
            int eq = assignment.indexOf('=');
            env.put(assignment.substring(0, eq), assignment.substring(eq + 1));
        }
        return env;
    }

    /** An EnvironmentFile: {@code NAME=value} lines; blank lines and {@code #} comments skipped. */
    private static Map<String, String> environmentFile(Path file) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#") || l.startsWith(";")) continue;
            int eq = l.indexOf('=');
            assertThat(eq).as(file + ": not NAME=value: " + line).isPositive();
            String name = l.substring(0, eq).strip();
            assertThat(name).as(file + ": a variable name").matches("[A-Za-z_][A-Za-z0-9_]*");
            String value = l.substring(eq + 1).strip();
            assertThat(value).as(file + ": " + name + " is read by systemd, which expands no $").doesNotContain("$");
            env.put(name, value);
        }
        return env;
    }

    private static String javaOfThisJvm() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isExecutable(p)) return p.toString();
        }
        for (String dir : List.of("/usr/bin", "/bin")) {
            Path p = Path.of(dir, program);
            if (Files.isExecutable(p)) return p.toString();
        }
        return null;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("timed out: " + String.join(" ", command));
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8).strip());
    }
}
