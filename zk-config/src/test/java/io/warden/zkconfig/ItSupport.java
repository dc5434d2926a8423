package io.warden.zkconfig;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Processes, ports and polling for the integration tests. */
final class ItSupport {
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(90);
    static final Path MODULE = ParsedConfig.moduleDir();
    static final Path TARBALL = Path.of(System.getProperty("zkconfig.dist.tarball",
            MODULE.resolve("target/warden-zookeeper-3.9.5.tar.gz").toString()));
    static final String DIST_NAME = System.getProperty("zkconfig.dist.name", "warden-zookeeper-3.9.5");
    static final String DEV_ENSEMBLE = MODULE.resolve("bin/dev-ensemble").toString();

    private ItSupport() {
    }

    record Result(int status, String output) {
    }

    /** A fresh directory for one test class under target/it (kept for the logs). */
    static Path workDir(String name) throws IOException {
        Path root = Path.of(System.getProperty("zkconfig.it.dir", MODULE.resolve("target/it").toString()));
        return Files.createDirectories(root.resolve(name + "-" + System.currentTimeMillis()));
    }

    /** Runs a command to its end (stdout and stderr together), with {@code environment} added. */
    static Result run(Map<String, String> environment, String... command) throws IOException, InterruptedException {
        Path out = Files.createTempFile("zkconfig-it-", ".out");
        try {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            // Only what the test sets: a developer's own DEV_ZK_* settings must not leak in.
            pb.environment().keySet().removeIf(name -> name.startsWith("DEV_ZK_"));
            pb.environment().putAll(environment);
            Process p = pb.start();
            if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish in " + COMMAND_TIMEOUT + ": "
                        + Files.readString(out));
            }
            return new Result(p.exitValue(), Files.readString(out));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** The pids dev-ensemble wrote for servers 1..n (those that exist). */
    static List<Long> serverPids(Path ensemble, int servers) throws IOException {
        List<Long> pids = new ArrayList<>();
        for (int n = 1; n <= servers; n++) {
            Path pidFile = ensemble.resolve("zk" + n + "/zk-server.pid");
            if (Files.exists(pidFile)) {
                pids.add(Long.parseLong(Files.readString(pidFile).trim()));
            }
        }
        return pids;
    }

    /** Stops a dev-ensemble and, should anything survive, kills its servers. */
    static void stopEnsemble(Path ensemble, Map<String, String> env, List<Long> pids) throws IOException, InterruptedException {
        if (ensemble != null && Files.isDirectory(ensemble)) {
            run(env, "bash", DEV_ENSEMBLE, "stop", ensemble.toString());
        }
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Polls {@code condition} every 100 ms until it holds or {@code timeout} passes. */
    static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout + ": " + what);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    static String fourLetterWord(int port, String word) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static String connectString(int[] ports) {
        List<String> hosts = new ArrayList<>();
        for (int port : ports) {
            hosts.add("127.0.0.1:" + port);
        }
        return String.join(",", hosts);
    }

    static int[] block(int base) {
        return new int[] {base, base + 1, base + 2};
    }

    /** {@code count} disjoint blocks of {@code size} consecutive ports that are free on 127.0.0.1 now. */
    static int[] freePortBlocks(int count, int size) {
        int[] bases = new int[count];
        List<Integer> taken = new ArrayList<>();
        for (int b = 0; b < count; b++) {
            for (int attempt = 0; ; attempt++) {
                if (attempt > 1000) {
                    throw new IllegalStateException("no free block of " + size + " ports");
                }
                int base = ThreadLocalRandom.current().nextInt(20_000, 60_000);
                boolean ok = true;
                for (int p = base; p < base + size && ok; p++) {
                    ok = !taken.contains(p) && bindable(p);
                }
                if (ok) {
                    bases[b] = base;
                    for (int p = base; p < base + size; p++) {
                        taken.add(p);
                    }
                    break;
                }
            }
        }
        return bases;
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
