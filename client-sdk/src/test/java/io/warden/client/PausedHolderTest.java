package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.client.direct.DirectLocks;
import io.warden.service.Gateway;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Direct mode had no local deadline. Validity followed Curator's asynchronous state events: after
 * a SIGSTOP of the client JVM past its ZooKeeper session, another client got the lock, and on SIGCONT the paused
 * client's {@code isValid()} stayed true for 205 ms (187 samples). Direct holds now have a local deadline from the last
 * ZooKeeper answer, as HTTP holds have one from the last acknowledged keepalive. Both modes run here: a holder in a JVM
 * of its own ({@link PausedHolder}) is stopped with SIGSTOP until another client holds the lock, then continued; not
 * one sample after the pause may say valid.
 */
class PausedHolderTest {
    private static final Pattern RESUMED = Pattern.compile(
            "RESUMED gap_ms=(\\d+) valid_samples=(\\d+) valid_for_us=(-?\\d+) lost_after_ms=(-?\\d+)");

    private Cell cell;
    private Process child;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
    }

    @AfterEach
    void tearDown() {
        if (child != null && child.isAlive()) {
            signal("CONT");
            child.destroyForcibly();
        }
        cell.close();
    }

    @Test
    void direct_holderStoppedPastItsZooKeeperSession_isNotValidTheMomentItResumes() throws Exception {
        String name = "jobs/paused-direct";
        BlockingQueue<String> out = start("direct", cell.fx.server.getConnectString(), name, 2000);
        long token = held(out);

        signal("STOP");
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(cell.fx.server.getConnectString())
                .sessionTimeoutMs(10_000).retryPolicy(new RetryNTimes(50, 100)).build();
        curator.start();
        try (DirectLocks other = DirectLocks.of(curator);
             Hold next = other.lock(name).acquire(Duration.ofSeconds(30))) {
            assertThat(next.token()).isGreaterThan(token);
            signal("CONT");
            Matcher m = resumed(out);
            assertThat(Integer.parseInt(m.group(2))).as("samples of isValid() after the pause that said true (%s)", m.group())
                    .isZero();
        } finally {
            curator.close();
        }
    }

    @Test
    void http_holderStoppedPastItsSession_isNotValidTheMomentItResumes() throws Exception {
        String name = "jobs/paused-http";
        Gateway gw = cell.gateway();
        BlockingQueue<String> out = start("http", Cell.url(gw), name, 2000);
        long token = held(out);

        signal("STOP");
        WardenClient other = cell.client("other", Cell.url(gw));
        try (Hold next = other.lock(name).acquire(Duration.ofSeconds(30))) {
            assertThat(next.token()).isGreaterThan(token);
            signal("CONT");
            Matcher m = resumed(out);
            assertThat(Integer.parseInt(m.group(2))).as("samples of isValid() after the pause that said true (%s)", m.group())
                    .isZero();
        }
    }

    private BlockingQueue<String> start(String mode, String target, String name, int timeoutMs) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        if (new File("/usr/bin/setpriv").canExecute()) {
            command.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "SIGKILL", "--"));
        }
        command.addAll(List.of(java, "-Xmx128m", "-cp", classpath, PausedHolder.class.getName(), mode, target, name,
                Integer.toString(timeoutMs)));
        child = new ProcessBuilder(command).redirectErrorStream(true).start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the child is gone
            }
        }, "paused-holder-output");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    private static long held(BlockingQueue<String> out) throws InterruptedException {
        String line = awaitLine(out, "HELD ");
        return Long.parseLong(line.substring("HELD ".length()).trim());
    }

    private static Matcher resumed(BlockingQueue<String> out) throws InterruptedException {
        String line = awaitLine(out, "RESUMED ");
        System.out.println("paused holder (" + Thread.currentThread().getStackTrace()[2].getMethodName() + "): " + line);
        Matcher m = RESUMED.matcher(line);
        assertThat(m.matches()).as(line).isTrue();
        return m;
    }

    private static String awaitLine(BlockingQueue<String> out, String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<String> seen = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            String line = out.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                if (line.startsWith(prefix)) {
                    return line;
                }
                seen.add(line);
            }
        }
        throw new AssertionError("the paused holder printed no '" + prefix + "' line; it printed: " + seen);
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(child.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new AssertionError("kill -" + signal + " " + child.pid() + " failed");
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
