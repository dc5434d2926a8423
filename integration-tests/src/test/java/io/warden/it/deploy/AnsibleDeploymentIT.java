package io.warden.it.deploy;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deployment test as part of {@code mvn verify}: runs {@code ansible/tests/deploy-test.sh} against the artifacts of
 * this build. The script deploys 3 ZooKeeper servers and 2 gateways on this machine with Ansible (connection local,
 * a sandbox under /tmp, a process supervisor), checks a lock across both gateways, keeps a {@code warden lock} held
 * through rolling restarts of the gateways and of the ensemble, checks a second run changes nothing, and tears
 * everything down (its own trap does, also when it fails). It needs {@code ansible-core} and {@code ansible-lint}
 * (Debian packages; {@code .ci/run} installs them) and fails with a clear line when they are missing.
 *
 * <p>Its output goes to {@code it-logs/deploy-test.log} and, line by line, to this test's output.
 */
class AnsibleDeploymentIT {
    /**
     * The script is stopped as hung when its log has not grown for this long: its longest step (a rolling restart of
     * the ensemble) writes its lines within about two minutes on a quiet machine and within three under heavy load.
     * A run that keeps making progress is slow, not hung, and is let finish up to {@link #LIMIT}.
     */
    private static final Duration SILENCE = Duration.ofMinutes(6);
    /** Whatever happens, the script is stopped after this long (about five minutes on a quiet machine). */
    private static final Duration LIMIT = Duration.ofMinutes(30);

    @Test
    void playbooks_deployACellOnThisMachine_keepAHeldLockThroughRollingRestarts_andAreIdempotent() throws Exception {
        Path repo = Path.of(System.getProperty("warden.repo.root", "..")).toRealPath();
        Path logs = Path.of(System.getProperty("warden.it.logs", "target/it-logs"));
        Files.createDirectories(logs);
        Path log = logs.resolve("deploy-test.log");
        ProcessBuilder pb = new ProcessBuilder("bash", repo.resolve("ansible/tests/deploy-test.sh").toString())
                .directory(repo.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("WARDEN_JAR", artifact("warden.service.jar", repo, "service/target/warden-service.jar"));
        pb.environment().put("WARDEN_CLI_JAR", artifact("warden.cli.jar", repo, "cli/target/warden-cli.jar"));
        pb.environment().put("ZK_DIST", artifact("warden.zk.dist", repo, "zk-config/target/warden-zookeeper-3.9.5.tar.gz"));
        Process p = pb.start();
        String hung = awaitEnd(p, log);
        boolean ended = hung == null;
        if (!ended) {
            p.destroy(); // SIGTERM: the script's trap stops what it started
            p.waitFor(2, TimeUnit.MINUTES);
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        lines.forEach(System.out::println);
        String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        assertThat(ended).as("deploy-test.sh %s; its last lines:%n%s", hung, tail).isTrue();
        assertThat(p.exitValue()).as("deploy-test.sh exit status; its last lines:%n%s", tail).isZero();
        assertThat(lines).anyMatch(l -> l.startsWith("== deploy-test: passed"));
    }

    /**
     * Waits for the script to end: null when it did, or why it is taken for hung (its log silent for {@link #SILENCE},
     * or running for {@link #LIMIT}).
     */
    private static String awaitEnd(Process p, Path log) throws InterruptedException, IOException {
        long start = System.nanoTime();
        long lastGrowth = start;
        long size = -1;
        while (!p.waitFor(5, TimeUnit.SECONDS)) {
            long now = System.nanoTime();
            long grown = Files.exists(log) ? Files.size(log) : 0;
            if (grown != size) {
                size = grown;
                lastGrowth = now;
            }
            if (now - lastGrowth > SILENCE.toNanos()) {
                return "wrote nothing for " + SILENCE.toMinutes() + " minutes (hung)";
            }
            if (now - start > LIMIT.toNanos()) {
                return "did not end within " + LIMIT.toMinutes() + " minutes";
            }
        }
        return null;
    }

    private static String artifact(String property, Path repo, String fallback) throws IOException {
        String given = System.getProperty(property);
        return (given == null || given.isBlank() ? repo.resolve(fallback) : Path.of(given)).toAbsolutePath().normalize()
                .toString();
    }
}
