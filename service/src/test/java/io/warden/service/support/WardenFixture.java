package io.warden.service.support;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.config.WardenConfig;
import io.warden.service.time.ManualClock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A real ZooKeeper ({@link TestingServer}) with gateways on a {@link ManualClock}, and a plain Curator client on the
 * cell's chroot for looking at what the engine wrote. Close it after each test.
 */
public final class WardenFixture implements AutoCloseable {
    public final TestingServer server;
    public final ManualClock clock = new ManualClock();
    public final CuratorFramework curator;
    /**
     * The gateways' data directory ({@code data-dir}: their high-water marks of the cell), one per fixture, so that no
     * test's gateway compares its cell with another test's.
     */
    public final java.nio.file.Path gatewayData;
    private final List<Gateway> gateways = new ArrayList<>();

    static {
        System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    }

    public WardenFixture() throws Exception {
        gatewayData = java.nio.file.Files.createTempDirectory("warden-gateway-data-");
        server = new TestingServer(true);
        curator = CuratorFrameworkFactory.builder().connectString(server.getConnectString()).namespace("warden")
                .retryPolicy(new RetryOneTime(100)).build();
        curator.start();
        curator.blockUntilConnected(10, TimeUnit.SECONDS);
    }

    /**
     * A fixture for a field a test class declares as {@code @AutoClose private final WardenFixture fx =
     * WardenFixture.create();} (JUnit makes one per test and closes it after), with no set-up and tear-down methods.
     */
    public static WardenFixture create() {
        try {
            return new WardenFixture();
        } catch (Exception e) {
            throw new IllegalStateException("could not start the test's ZooKeeper", e);
        }
    }

    public WardenConfig config() {
        return WardenConfig.defaults().withZkConnect(server.getConnectString()).withHttpPort(0)
                .withZkSessionTimeout(Duration.ofSeconds(4)).toBuilder().dataDir(gatewayData).build();
    }

    public Gateway gateway() {
        return gateway(config());
    }

    /**
     * Starts a gateway and waits for its leader latch's node: the latch is joined in the background after the start
     * returns, and its node is a write (a zxid) that a test counting writes from then on ({@link #lastZxid}) would see
     * as its own call's. Nothing else of a start is written later. Looked for through the gateway's own ZooKeeper
     * client: the fixture's may not be connected (a test that restored the server from a backup leaves it behind the
     * zxids it saw, and ZooKeeper refuses it until its session times out).
     */
    public Gateway gateway(WardenConfig config) {
        Gateway g = Gateway.start(config, clock);
        gateways.add(g);
        await("gateway " + g.gatewayId() + " joins the leader election", () -> latchNodeOf(g));
        return g;
    }

    private static boolean latchNodeOf(Gateway g) {
        CuratorFramework client = g.curator();
        String gatewayId = g.gatewayId();
        try {
            if (client.checkExists().forPath(io.warden.service.zk.CellPaths.LEADER) == null) {
                return false;
            }
            for (String node : client.getChildren().forPath(io.warden.service.zk.CellPaths.LEADER)) {
                byte[] data = client.getData().forPath(io.warden.service.zk.CellPaths.LEADER + "/" + node);
                if (gatewayId.equals(new String(data, java.nio.charset.StandardCharsets.UTF_8))) {
                    return true;
                }
            }
            return false;
        } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
            return false; // a latch node went between the listing and its read
        } catch (org.apache.zookeeper.KeeperException.ConnectionLossException
                 | org.apache.zookeeper.KeeperException.SessionExpiredException lost) {
            return false; // the gateway's client is reconnecting (a test restarted the server): ask again
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Requests the ZooKeeper server has received so far ({@code mntr}'s {@code zk_packets_received}): request budgets
     * are counted by the server itself, a deterministic figure, not a timing.
     */
    public long packetsReceived() throws java.io.IOException {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.getPort())) {
            socket.getOutputStream().write("mntr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String out = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("zk_packets_received\\s+(\\d+)").matcher(out);
            if (!m.find()) {
                throw new IllegalStateException("no zk_packets_received in mntr's output: " + out);
            }
            return Long.parseLong(m.group(1));
        }
    }

    /**
     * The ZooKeeper server's last processed zxid ({@code srvr}'s {@code Zxid:}): every write transaction (create,
     * delete, setData, multi, session create and close) advances it, and nothing else does (reads, watches, pings).
     * The fixture is one standalone server, so this one number says whether anything at all changed in ZooKeeper.
     */
    public long lastZxid() throws java.io.IOException {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.getPort())) {
            socket.getOutputStream().write("srvr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String out = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("Zxid: 0x([0-9a-fA-F]+)").matcher(out);
            if (!m.find()) {
                throw new IllegalStateException("no Zxid in srvr's output: " + out);
            }
            return Long.parseLong(m.group(1), 16);
        }
    }

    /** Opens a session and returns its id. */
    public static String session(Warden w, String client, long ttlMs) {
        return w.openSession(client, ttlMs, 0).join().sessionId();
    }

    public static AcquireRequest exclusive(String session, String name, long waitMs) {
        return new AcquireRequest(session, LockName.parse(name), Mode.EXCLUSIVE, waitMs, UUID.randomUUID().toString(), OnTimeout.CANCEL);
    }

    public static AcquireRequest shared(String session, String name, long waitMs) {
        return new AcquireRequest(session, LockName.parse(name), Mode.SHARED, waitMs, UUID.randomUUID().toString(), OnTimeout.CANCEL);
    }

    /** The problem code of a failed engine call (unwrapping CompletionException). */
    public static WardenException.ErrorCode code(Throwable t) {
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (!(t instanceof WardenException we)) {
            throw new AssertionError("expected a WardenException, got " + t, t);
        }
        return we.code();
    }

    public static AcquireResult join(CompletableFuture<AcquireResult> f) {
        return f.orTimeout(20, TimeUnit.SECONDS).join();
    }

    /** Waits for a condition that real ZooKeeper I/O makes true, with a deadline (no sleeps as synchronisation). */
    public static void await(String what, BooleanSupplier condition) {
        await(what, java.time.Duration.ofSeconds(20), condition);
    }

    /** The same, with a deadline of {@code limit}. */
    public static void await(String what, java.time.Duration limit, BooleanSupplier condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.onSpinWait();
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** The lock's node, relative to the chroot (contract §4; docs/design.md, "ZooKeeper layout"). */
    public static String lockPath(String name) {
        return io.warden.service.zk.CellPaths.lock(LockName.parse(name));
    }

    /** The children of a lock node (empty when it does not exist). */
    public List<String> queue(String name) throws Exception {
        String path = lockPath(name);
        return curator.checkExists().forPath(path) == null ? List.of() : curator.getChildren().forPath(path);
    }

    public int queueSize(String name) {
        try {
            return queue(name).size();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Watches the server holds, data and children ({@code mntr}'s {@code zk_watch_count}; {@code wchs} counts data ones only). */
    public int allWatches() {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.getPort())) {
            socket.getOutputStream().write("mntr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String out = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("zk_watch_count\\s+(\\d+)").matcher(out);
            if (!m.find()) {
                throw new IllegalStateException("no zk_watch_count in mntr's output: " + out);
            }
            return Integer.parseInt(m.group(1));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The server's data watches, one line each: the watched path, a space, the watching ZooKeeper session ({@code wchp}). */
    public List<String> serverWatches() throws java.io.IOException {
        String out;
        try (var socket = new java.net.Socket("127.0.0.1", server.getPort())) {
            socket.getOutputStream().write("wchp".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
        }
        List<String> watches = new java.util.ArrayList<>();
        String path = null;
        for (String line : out.split("\n")) {
            if (line.startsWith("/")) {
                path = line.trim();
            } else if (!line.isBlank() && path != null) {
                watches.add(path + " " + line.trim());
            }
        }
        return watches;
    }

    /** The server's data watches on the queue nodes of the lock {@code name} (what its waiters wait for). */
    public int queueNodeWatches(String name) {
        String prefix = "/warden" + lockPath(name) + "/";
        try {
            return (int) serverWatches().stream().filter(wt -> wt.startsWith(prefix)).count();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Waits until the gateway watches the records of these sessions: it sets each watch after the session is opened, on
     * its own schedule, so a count of the server's watches taken before this may miss some of them.
     */
    public void awaitSessionWatches(String... sessions) {
        await("the gateway watches its sessions' records", () -> {
            try {
                List<String> watches = serverWatches();
                return java.util.Arrays.stream(sessions).allMatch(sid -> watches.stream()
                        .anyMatch(wt -> wt.startsWith("/warden" + io.warden.service.zk.CellPaths.session(sid) + " ")));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    /** Watches the test ZooKeeper server holds (all clients). */
    public int watchCount() {
        return watchesOnServer();
    }

    private int watchesOnServer() {
        try (var socket = new java.net.Socket("127.0.0.1", server.getPort())) {
            socket.getOutputStream().write("wchs".getBytes());
            String out = new String(socket.getInputStream().readAllBytes());
            var m = java.util.regex.Pattern.compile("Total watches:(\\d+)").matcher(out);
            return m.find() ? Integer.parseInt(m.group(1)) : 0;
        } catch (java.io.IOException e) {
            return 0;
        }
    }

    /** How many getChildren calls the gateway has made (its ZooKeeper operation metric). */
    public double childReads(Gateway g) {
        return meter(g, "getChildren");
    }

    private static double meter(Gateway g, String op) {
        var timers = g.metrics().registry().find("warden.zk.operation").tag("op", op).timers();
        return timers.stream().mapToDouble(t -> t.count()).sum();
    }

    @Override
    public void close() throws Exception {
        for (Gateway g : gateways) {
            g.close();
        }
        curator.close();
        server.close();
        try (var paths = java.nio.file.Files.walk(gatewayData)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
