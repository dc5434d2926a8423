package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.it.support.Await;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.ZkEnsemble;
import io.warden.it.support.WardenClient;
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
import java.util.List;
import java.util.Map;

/**
 * Two cells served by the same gateways, every part its own process: ensemble A (the default cell, {@code --zk}) and
 * ensemble B (cell {@value #CELL_B}, {@code --cells b=...} under the default chroot), three ZooKeeper servers each, whose
 * servers reach each other's quorum and election ports through proxies ({@link ZkEnsemble.Options#withProxiedQuorum()}),
 * so that a cell's quorum can be taken away while its servers keep running and keep their clients' connections open
 * ({@link #splitEveryServer}); and gateways started with {@code --routes pay=b} (or given cell B and namespace
 * {@value #PAY} while they run, as an operator adds a cell): namespace {@value #PAY} is served by cell B, everything else
 * (namespace {@value #WEB} among them) by cell A. The gateways reach the servers directly.
 *
 * <p>Each ensemble has a launcher of its own (its servers' logs in {@code <run>/cell-a/} and {@code <run>/cell-b/}: the
 * two ensembles name their servers alike); the gateways' logs are in {@code <run>/}.
 *
 * <p>Concurrency: the test thread drives it; workload threads only read {@link #endpoints()}.
 */
final class TwoCells implements AutoCloseable {
    /** The gateways' ZooKeeper session timeout, as the proof suite uses; half of it is the vouching bound. */
    static final long ZK_SESSION_TIMEOUT_MS = 4000;
    /** The cell name of ensemble B in {@code --cells}; ensemble A is the default cell. */
    static final String CELL_B = "b";
    static final String WEB = "web";
    static final String PAY = "pay";

    final JavaLauncher launcher;
    final ZkEnsemble a;
    final ZkEnsemble b;
    private final List<GatewayProcess> gateways = new ArrayList<>();
    private final HttpClient http = WardenClient.newHttpClient();

    private TwoCells(JavaLauncher launcher, ZkEnsemble a, ZkEnsemble b) {
        this.launcher = launcher;
        this.a = a;
        this.b = b;
    }

    /** Starts both ensembles and {@code gatewayCount} gateways; returns once every gateway serves both cells. */
    static TwoCells start(String run, int gatewayCount) {
        return start(run, gatewayCount, null);
    }

    /**
     * As {@link #start(String, int)}, with gateways that have the deliberate bug {@code fault} (a {@link BrokenGateway}
     * bug's name, as {@link JepsenCell} starts them), or the service jar's when null.
     */
    static TwoCells start(String run, int gatewayCount, String fault) {
        return start(run, gatewayCount, fault, (a, b) -> { });
    }

    /**
     * As {@link #start(String, int, String)}; {@code beforeGateways} is given ensembles A and B once both have a quorum,
     * before any gateway starts (to prepare what the gateways will find, such as the ensembles' zxids).
     */
    static TwoCells start(String run, int gatewayCount, String fault,
                          java.util.function.BiConsumer<ZkEnsemble, ZkEnsemble> beforeGateways) {
        return start(run, gatewayCount, fault, beforeGateways, false);
    }

    /**
     * As above. With {@code addedAtRunTime}, the gateways start with the default cell only (no {@code --cells} or
     * {@code --routes}); then cell B is added through gateway 1 ({@code PUT /v1/cells/b}), every gateway is awaited
     * serving it (the others from the default cell's cell directory), and namespace {@value #PAY} is moved to it through
     * the last gateway ({@code PUT /v1/namespaces/pay/cell}, deadline 0: nothing holds yet). The cells are then as the
     * settings would have made them.
     */
    static TwoCells start(String run, int gatewayCount, String fault,
                          java.util.function.BiConsumer<ZkEnsemble, ZkEnsemble> beforeGateways, boolean addedAtRunTime) {
        JavaLauncher launcher = JavaLauncher.forRun(run);
        JavaLauncher launcherA = new JavaLauncher(emptied(launcher.logDir().resolve("cell-a")));
        JavaLauncher launcherB = new JavaLauncher(emptied(launcher.logDir().resolve("cell-b")));
        ZkEnsemble a = ZkEnsemble.start(launcherA, 3, ZkEnsemble.Options.defaults().withProxiedQuorum());
        ZkEnsemble b;
        try {
            b = ZkEnsemble.start(launcherB, 3, ZkEnsemble.Options.defaults().withProxiedQuorum());
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
        TwoCells cells = new TwoCells(launcher, a, b);
        try {
            a.awaitQuorum(Duration.ofSeconds(60));
            b.awaitQuorum(Duration.ofSeconds(60));
            beforeGateways.accept(a, b);
            List<String> jvm = new ArrayList<>(List.of("-Xms64m", "-Xmx384m", "-Dlogback.configurationFile="
                    + launcher.logbackConfig("gateway", "INFO", Map.of("io.warden", "DEBUG", "org.apache.zookeeper", "WARN",
                    "org.eclipse.jetty", "WARN"))));
            if (fault != null) {
                jvm.add("-D" + BrokenGateway.PROPERTY + "=" + fault);
            }
            List<String> args = addedAtRunTime ? List.of()
                    : List.of("--cells", CELL_B + "=" + b.connectString(), "--routes", PAY + "=" + CELL_B);
            for (int g = 0; g < gatewayCount; g++) {
                cells.gateways.add(GatewayProcess.start(launcher, "gw" + (g + 1), a.connectString(), ZK_SESSION_TIMEOUT_MS,
                        jvm, args, fault == null ? null : BrokenGateway.class.getName()));
            }
            for (GatewayProcess gw : cells.gateways) {
                gw.awaitReady(Duration.ofSeconds(90));
            }
            if (addedAtRunTime) {
                cells.addCellB();
            }
            cells.awaitServing(CELL_B, Duration.ofSeconds(60));
            if (addedAtRunTime) {
                cells.put(cells.gateways.get(cells.gateways.size() - 1), "/v1/namespaces/" + PAY + "/cell",
                        "{\"cell\":\"" + CELL_B + "\",\"deadline_ms\":0}", 200);
            }
        } catch (RuntimeException e) {
            cells.close();
            throw e;
        }
        return cells;
    }

    /** {@code PUT /v1/cells/b} through gateway 1: the gateway reaches ensemble B and writes it to the cell directory. */
    private void addCellB() {
        put(gateways.get(0), "/v1/cells/" + CELL_B, "{\"zk\":\"" + b.connectString() + "\"}", 201);
    }

    /** A PUT that must answer {@code expected}; its answer otherwise fails the start. */
    private void put(GatewayProcess gw, String path, String body, int expected) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(gw.baseUri().resolve(path))
                    .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != expected) {
                throw new IllegalStateException("PUT " + path + " on " + gw.gatewayId() + " answered " + r.statusCode()
                        + " (expected " + expected + "): " + r.body());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("PUT " + path + " on " + gw.gatewayId(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Deletes the files a run before left in {@code dir} (as {@link JavaLauncher#forRun} does for the run's own). */
    private static Path emptied(Path dir) {
        if (Files.isDirectory(dir)) {
            try (var files = Files.list(dir)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    if (Files.isRegularFile(file)) {
                        Files.delete(file);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot empty " + dir, e);
            }
        }
        return dir;
    }

    List<URI> endpoints() {
        return gateways.stream().map(GatewayProcess::baseUri).toList();
    }

    List<GatewayProcess> gateways() {
        return List.copyOf(gateways);
    }

    /** The ensemble of {@code cell}: {@code default} is A, {@value #CELL_B} is B. */
    ZkEnsemble ensemble(String cell) {
        return switch (cell) {
            case "default" -> a;
            case CELL_B -> b;
            default -> throw new IllegalArgumentException("no cell " + cell);
        };
    }

    /**
     * Every server of {@code zk} cut from every other, quorum and election links both ways: no side has a majority.
     * The servers keep running and keep their clients' connections: for a while (until a follower misses its leader for
     * syncLimit ticks, and the leader its followers) they still answer reads and pings while writes hang, then they stop
     * serving and drop their clients.
     */
    static void splitEveryServer(ZkEnsemble zk) {
        for (int from = 0; from < zk.size(); from++) {
            for (int to = 0; to < zk.size(); to++) {
                if (from != to) {
                    zk.quorumLink(from, to).blackhole();
                    zk.electionLink(from, to).blackhole();
                }
            }
        }
    }

    static void healQuorumLinks(ZkEnsemble zk) {
        for (int from = 0; from < zk.size(); from++) {
            for (int to = 0; to < zk.size(); to++) {
                if (from != to) {
                    zk.quorumLink(from, to).heal();
                    zk.electionLink(from, to).heal();
                }
            }
        }
    }

    /** Waits until no server of {@code zk} says it leads or follows: from then on, nothing in that cell is served. */
    static void awaitNoServer(ZkEnsemble zk, Duration timeout) {
        Await.until("no server of the ensemble serving", timeout, Duration.ofMillis(50), () -> {
            for (int s = 0; s < zk.size(); s++) {
                ZkEnsemble.Mode mode = zk.mode(s);
                if (mode == ZkEnsemble.Mode.LEADER || mode == ZkEnsemble.Mode.FOLLOWER) {
                    return false;
                }
            }
            return true;
        }, zk::describe);
    }

    /** Waits until every gateway says, in {@code GET /v1/cells}, that it serves {@code cell}. */
    void awaitServing(String cell, Duration timeout) {
        for (GatewayProcess gw : gateways) {
            Await.until(gw.gatewayId() + " serving cell " + cell, timeout, Duration.ofMillis(100),
                    () -> serving(gw, cell), () -> describeCells(gw));
        }
    }

    private boolean serving(GatewayProcess gw, String cell) {
        JsonNode cells = cells(gw);
        for (JsonNode c : cells.path("cells")) {
            if (cell.equals(c.path("name").asText())) {
                return c.path("serving").asBoolean(false);
            }
        }
        return false;
    }

    /** What {@code GET /v1/cells} of {@code gw} says (an empty object when it does not answer). */
    JsonNode cells(GatewayProcess gw) {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(gw.baseUri().resolve("/v1/cells"))
                    .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? WardenClient.JSON.readTree(response.body())
                    : WardenClient.JSON.createObjectNode();
        } catch (IOException e) {
            return WardenClient.JSON.createObjectNode();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private String describeCells(GatewayProcess gw) {
        return gw.gatewayId() + " says " + cells(gw) + "; A: " + a.describe() + "; B: " + b.describe()
                + "; log " + gw.process().log() + ":\n" + gw.process().logTail(20);
    }

    @Override
    public void close() {
        for (GatewayProcess gw : gateways) {
            gw.close();
        }
        a.close();
        b.close();
    }
}
