package io.warden.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * One Warden gateway as its own JVM, started from the shaded jar ({@code -Dwarden.service.jar}, set by Failsafe):
 * {@code java -jar warden-service.jar --zk ... --http-host 127.0.0.1 --http-port N --zk-session-timeout-ms T
 * --gateway-id ID --data-dir <log dir>/ID-data}. Faults: {@link #kill9()}, {@link #terminate()}, {@link #pause()}, {@link #resume()}.
 *
 * <p>Concurrency: immutable; the process handle is thread-safe.
 */
public final class GatewayProcess implements AutoCloseable {
    private final String gatewayId;
    private final int httpPort;
    private final ChildProcess process;

    private GatewayProcess(String gatewayId, int httpPort, ChildProcess process) {
        this.gatewayId = gatewayId;
        this.httpPort = httpPort;
        this.process = process;
    }

    /** The shaded jar: {@code -Dwarden.service.jar}, else {@code ../service/target/warden-service.jar}. */
    public static Path serviceJar() {
        String configured = System.getProperty("warden.service.jar");
        Path jar = configured != null ? Path.of(configured) : Path.of("..", "service", "target", "warden-service.jar");
        return jar.toAbsolutePath().normalize();
    }

    /** When the jar was built (its modification time), to tell a stale jar in the logs. */
    public static String serviceJarTime() {
        try {
            return Files.getLastModifiedTime(serviceJar()).toString();
        } catch (IOException e) {
            return "(unknown: " + e + ")";
        }
    }

    /**
     * Starts a gateway for a test: a 4 s ZooKeeper session timeout and the engine's log at DEBUG (its lines name every
     * lock and token: the story of a failed run). See {@link #start(JavaLauncher, String, String, long, List, List)}.
     */
    public static GatewayProcess start(JavaLauncher launcher, String gatewayId, String zkConnect) {
        Path logback = launcher.logbackConfig("gateway", "INFO",
                Map.of("io.warden", "DEBUG", "org.apache.zookeeper", "WARN", "org.eclipse.jetty", "WARN"));
        return start(launcher, gatewayId, zkConnect, 4000,
                List.of("-Xms64m", "-Xmx512m", "-Dlogback.configurationFile=" + logback), List.of());
    }

    /**
     * Starts a gateway on a free loopback port with the service's own logging unless {@code jvmArgs} say otherwise
     * (does not wait: see {@link #awaitReady(Duration)}).
     */
    public static GatewayProcess start(JavaLauncher launcher, String gatewayId, String zkConnect,
                                       long zkSessionTimeoutMs, List<String> jvmArgs, List<String> extraArgs) {
        return start(launcher, gatewayId, zkConnect, zkSessionTimeoutMs, jvmArgs, extraArgs, null);
    }

    /**
     * As above; with a {@code mainClass} (on this JVM's classpath) other than the service jar's, which is given the same
     * arguments (null: the service jar). The proof suite starts its deliberately broken gateways so.
     */
    public static GatewayProcess start(JavaLauncher launcher, String gatewayId, String zkConnect, long zkSessionTimeoutMs,
                                       List<String> jvmArgs, List<String> extraArgs, String mainClass) {
        int port = LoopbackPorts.free();
        List<String> args = new ArrayList<>(List.of(
                "--zk", zkConnect,
                "--http-host", LoopbackPorts.HOST,
                "--http-port", Integer.toString(port),
                "--zk-session-timeout-ms", Long.toString(zkSessionTimeoutMs),
                "--gateway-id", gatewayId));
        args.addAll(extraArgs);
        if (!extraArgs.contains("--data-dir")) {
            // Its own data directory (the gateway's high-water mark of the cell), beside its log: a gateway restarted
            // under a new id starts without one, as on a new host.
            args.addAll(List.of("--data-dir", launcher.logDir().resolve(gatewayId + "-data").toString()));
        }
        ChildProcess process = mainClass == null ? launcher.startJar(gatewayId, jvmArgs, serviceJar(), args)
                : launcher.startMain(gatewayId, jvmArgs, mainClass, args);
        return new GatewayProcess(gatewayId, port, process);
    }

    /**
     * Starts a gateway as a user's first {@code java -jar warden-service.jar} does: named no ZooKeeper, it runs its own
     * embedded server (here on any free port), with the service's defaults for everything else; on a free loopback
     * HTTP port, with a fresh data directory {@code <log dir>/ID-data} (what an earlier run left there is deleted
     * first). Does not wait: see {@link #awaitReady(Duration)}.
     */
    public static GatewayProcess startStandalone(JavaLauncher launcher, String gatewayId, List<String> jvmArgs) {
        Path dataDir = launcher.logDir().resolve(gatewayId + "-data");
        deleteRecursively(dataDir);
        int port = LoopbackPorts.free();
        List<String> args = List.of(
                "--http-host", LoopbackPorts.HOST,
                "--http-port", Integer.toString(port),
                "--embedded-zk-port", "0",
                "--gateway-id", gatewayId,
                "--data-dir", dataDir.toString());
        return new GatewayProcess(gatewayId, port, launcher.startJar(gatewayId, jvmArgs, serviceJar(), args));
    }

    private static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }

    public String gatewayId() {
        return gatewayId;
    }

    public int httpPort() {
        return httpPort;
    }

    public URI baseUri() {
        return URI.create("http://" + LoopbackPorts.HOST + ":" + httpPort);
    }

    public ChildProcess process() {
        return process;
    }

    /** Waits until {@code GET /health/ready} answers 200; fails at once, with the log's tail, if the process dies. */
    public GatewayProcess awaitReady(Duration timeout) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        Await.until(gatewayId + " ready at " + baseUri(), timeout, Duration.ofMillis(100), () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException(gatewayId + " exited with " + process.exitValue() + "; log "
                        + process.log() + ":\n" + process.logTail(40));
            }
            return isReady(http);
        }, () -> "log " + process.log() + ":\n" + process.logTail(20));
        return this;
    }

    private boolean isReady(HttpClient http) {
        try {
            HttpResponse<Void> response = http.send(HttpRequest.newBuilder(baseUri().resolve("/health/ready"))
                    .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public void kill9() {
        process.kill9();
    }

    public void terminate() {
        process.terminate();
    }

    public void pause() {
        process.pause();
    }

    public void resume() {
        process.resume();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public void close() {
        process.close();
    }

    @Override
    public String toString() {
        return gatewayId + "@" + baseUri() + " " + process;
    }
}
