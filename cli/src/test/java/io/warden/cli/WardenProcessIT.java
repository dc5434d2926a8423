package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

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
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged CLI as a user runs it: {@code cli/bin/warden} (and the shaded jar it starts) as a real process, through
 * a symlink, against a real gateway on a real ZooKeeper.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class WardenProcessIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private WardenFixture fx;
    private Gateway gateway;
    private final List<Process> started = new ArrayList<>();
    /** Commands the CLI started: killed after the test if they outlived it (as they did before the fix). */
    private final List<Long> commands = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        started.forEach(Process::destroyForcibly);
        commands.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        if (gateway != null) {
            gateway.close();
        }
        if (fx != null) {
            fx.close();
        }
    }

    private static Path script() {
        String s = System.getProperty("warden.cli.script");
        assertThat(s).as("system property warden.cli.script (set by the cli pom)").isNotNull();
        return Path.of(s);
    }

    /** cli/bin/warden linked as {@code <tmp>/bin/warden}, as a user puts it on PATH. */
    private Path linkedWarden() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        return Files.createSymbolicLink(bin.resolve("warden"), script());
    }

    private static String run(ProcessBuilder pb) throws Exception {
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    @Test
    void symlinkedOntoPath_wardenRuns_andPrintsTheArtifactVersion() throws Exception {
        Path link = linkedWarden();
        String expected = System.getProperty("warden.expected.version");
        assertThat(expected).as("system property warden.expected.version (set by the cli pom)").isNotBlank();

        // by the link's path, from a directory far from the repository
        assertThat(run(new ProcessBuilder(link.toString(), "--version").directory(tmp.toFile()))).isEqualTo(expected + "\n");

        // by name, with the link's directory on PATH (a shell looks it up, as in a terminal)
        ProcessBuilder byName = new ProcessBuilder("sh", "-c", "warden --version").directory(tmp.toFile());
        byName.environment().put("PATH", link.getParent() + ":" + System.getenv("PATH"));
        assertThat(run(byName)).isEqualTo(expected + "\n");

        // and through a link to the link
        Path second = Files.createSymbolicLink(Files.createDirectories(tmp.resolve("other")).resolve("w"), link);
        assertThat(run(new ProcessBuilder(second.toString(), "--version").directory(tmp.toFile()))).isEqualTo(expected + "\n");
    }

    /**
     * SIGKILL to {@code warden lock} (no shutdown hook runs, as with the OOM killer): its command must die with it at
     * once, while the lock is still held, and must never run once the lock is free. Without the parent-death signal the
     * command was re-parented and went on writing, and the lock went free when the session expired.
     */
    @Test
    void lock_cliKilledWithSigkill_theCommandDiesWithIt_andNeverRunsUnlocked() throws Exception {
        fx = new WardenFixture();
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").build());
        String url = "http://127.0.0.1:" + gateway.httpPort();
        Path pidFile = tmp.resolve("pid");
        Path beats = tmp.resolve("beats");
        Path log = tmp.resolve("cli.log");
        ProcessBuilder pb = new ProcessBuilder(linkedWarden().toString(), "--endpoints", url, "--ttl", "3s",
                "lock", "it/killed", "--", "sh", "-c",
                "echo $$ > \"$0.tmp\" && mv \"$0.tmp\" \"$0\"; i=0; while :; do i=$((i+1)); echo $i >> \"$1\"; sleep 0.1; done",
                pidFile.toString(), beats.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        Process cli = pb.start();
        started.add(cli);
        WardenFixture.await("the command runs and beats", Duration.ofSeconds(30),
                () -> Files.exists(pidFile) && lines(beats) >= 3);
        long commandPid = Long.parseLong(Files.readString(pidFile).trim());
        commands.add(commandPid);
        assertThat(alive(commandPid)).isTrue();
        assertThat(lockMode(url, "it/killed")).isEqualTo("EXCLUSIVE");

        cli.destroyForcibly(); // SIGKILL
        assertThat(cli.waitFor(10, TimeUnit.SECONDS)).isTrue();
        long killed = System.nanoTime();
        WardenFixture.await("the command is gone", Duration.ofSeconds(5), () -> !alive(commandPid));
        long goneAfterMillis = (System.nanoTime() - killed) / 1_000_000;
        String atDeath = Files.readString(beats);
        assertThat(lockMode(url, "it/killed")).as("the command died while the lock was still held (its session "
                + "outlives the CLI by up to the TTL)").isEqualTo("EXCLUSIVE");
        assertThat(goneAfterMillis).as("the command died promptly").isLessThan(2_000);

        WardenFixture.await("the lock goes free when the session expires", Duration.ofSeconds(30),
                () -> "FREE".equals(lockMode(url, "it/killed")));
        Thread.sleep(500);
        assertThat(Files.readString(beats)).as("no heartbeat after the command died, so none while the lock was free")
                .isEqualTo(atDeath);
        assertThat(alive(commandPid)).isFalse();
    }

    private static int lines(Path p) {
        try {
            return Files.exists(p) ? Files.readAllLines(p).size() : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    /** Whether {@code pid} is a running process (a zombie, dead but not yet reaped, is not). */
    static boolean alive(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            char state = stat.substring(stat.lastIndexOf(')') + 2).charAt(0);
            return state != 'Z' && state != 'X';
        } catch (IOException e) {
            return false;
        }
    }

    private static String lockMode(String url, String name) {
        try {
            HttpResponse<String> r = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(HttpRequest.newBuilder(URI.create(url + "/v1/locks/"
                    + name)).GET().build(), HttpResponse.BodyHandlers.ofString());
            JsonNode b = JSON.readTree(r.body());
            return b.path("mode").asText();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
