package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
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
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Slow consumers could exhaust the heap. Each stream might queue 1 MiB, 10,000 streams were
 * allowed, and RESYNC frames bypassed even that (8,000 locks make a frame of over a MiB, one per watch after each
 * reconnection): 700 stalled watches caused an {@code OutOfMemoryError} in ZooKeeper's event thread and left the
 * gateway wedged. All streams together are now bounded ({@code watch-buffer-bytes}, by default an eighth of the heap),
 * RESYNC frames included; streams over their share are cut and resume.
 */
class WatchMemoryBoundTest {
    /** Three 120-character segments: each lock is about 600 bytes of a RESYNC. */
    private static final String LONG = "x".repeat(120) + "/" + "y".repeat(120) + "/" + "z".repeat(120);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    /**
     * A real gateway process with a 160 MiB heap, 10,000 held locks (a RESYNC of the namespace is about 6 MB), and 120
     * watches that ask for that RESYNC and never read: about 700 MB of frames if each were kept (the kernel takes up to
     * 4 MB of each). The gateway stays well: no {@code OutOfMemoryError}, the watch memory stays within its bound (20
     * MiB, an eighth of the heap), stalled watches are cut, and a watcher that reads gets its RESYNC and live events.
     */
    @Test
    void stalledWatchesAskingForLargeResyncs_doNotExhaustASmallHeap() throws Exception {
        String ns = "oom";
        holdLocks(ns, 10_000);
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Path log = Files.createTempFile("warden-gateway-", ".log");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process gateway = new ProcessBuilder(java, "-Xmx160m", "-cp", System.getProperty("java.class.path"),
                "io.warden.service.Main", "--zk", fx.server.getConnectString(), "--http-host", "127.0.0.1",
                "--http-port", Integer.toString(port), "--zk-session-timeout-ms", "4000")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        List<Socket> stalled = new ArrayList<>();
        try {
            WardenFixture.await("the gateway process is ready", Duration.ofSeconds(60),
                    () -> status(port, "/health/ready") == 200 || !gateway.isAlive());
            assertThat(gateway.isAlive()).as("gateway started: %s", tail(log)).isTrue();
            for (int i = 0; i < 120; i++) {
                stalled.add(stalledWatch(port, "/v1/watch?prefix=" + ns + "&since_revision=0"));
            }
            readResyncThenLive(port, ns, 10_000);
            String metrics = body(port, "/metrics");
            long limit = metric(metrics, "warden_watch_buffer_limit_bytes");
            long cut = metric(metrics, "warden_watch_streams_cut_memory_total");
            long peak = metric(metrics, "warden_watch_buffer_peak_bytes");
            System.out.printf("watch buffer: at most %d of %d bytes, %d streams cut for memory%n", peak, limit, cut);
            assertThat(limit).as("an eighth of the heap").isBetween(15L << 20, 21L << 20);
            assertThat(peak).isGreaterThan(5_000_000L).isLessThanOrEqualTo(limit);
            assertThat(cut).as("stalled streams over their share were cut").isPositive();
            assertThat(status(port, "/health/live")).isEqualTo(200);
            assertThat(gateway.isAlive()).isTrue();
            assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError");
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
            gateway.destroyForcibly().waitFor();
        }
    }

    /**
     * In-process, with a 16 MiB bound: stalled watches fill it with their RESYNCs (about 6 MB each) and are cut, the
     * total never passes the bound, and a watcher that reads (and resumes when it is cut) keeps getting events.
     */
    @Test
    void theBoundCountsResyncFramesAndCutsStreamsOverTheirShare() throws Exception {
        String ns = "bound";
        holdLocks(ns, 10_000);
        long bound = 16L << 20;
        Gateway gw = fx.gateway(fx.config().withWatchBufferBytes(bound));
        List<Socket> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                stalled.add(stalledWatch(gw.httpPort(), "/v1/watch?prefix=" + ns + "&since_revision=0"));
            }
            readResyncThenLive(gw.httpPort(), ns, 10_000);
            String metrics = body(gw.httpPort(), "/metrics");
            long peak = metric(metrics, "warden_watch_buffer_peak_bytes");
            System.out.printf("watch buffer: at most %d of %d bytes, %d streams cut for memory%n", peak, bound,
                    metric(metrics, "warden_watch_streams_cut_memory_total"));
            assertThat(peak).as("RESYNCs were queued: they count").isGreaterThan(5_000_000L).isLessThanOrEqualTo(bound);
            assertThat(metric(metrics, "warden_watch_streams_cut_memory_total")).isPositive();
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
        }
    }

    /**
     * A watcher that reads: its RESYNC of {@code locks} locks, then the events of a new hold. Cut while its RESYNC was
     * queued (it is over its share then), it resumes as a client would, from the start (it saw no id yet).
     */
    private void readResyncThenLive(int port, String ns, int locks) throws Exception {
        int expected = locks;
        for (int attempt = 1; ; attempt++) {
            try (SseTestClient reader = SseTestClient.watch(port, "?prefix=" + ns + "&since_revision=0")) {
                SseTestClient.Event resync = reader.next();
                assertThat(resync.type()).isEqualTo("RESYNC");
                assertThat(resync.data().get("locks")).hasSize(expected);
                holdLocks(ns, 1);
                expected++; // in the next RESYNC, should this attempt be cut before its events
                assertThat(reader.next(2)).extracting(SseTestClient.Event::type).containsExactly("QUEUED", "GRANTED");
                return;
            } catch (AssertionError e) {
                if (attempt >= 10 || !String.valueOf(e.getMessage()).contains("the stream ended")) {
                    throw e;
                }
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** {@code n} locks, each held by one queue node made straight in ZooKeeper (a Curator client's), 200 per multi. */
    private void holdLocks(String ns, int n) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String lock = WardenFixture.lockPath(ns + "/" + LONG + "/" + UUID.randomUUID());
            ops.add(fx.curator.transactionOp().create().withMode(CreateMode.CONTAINER).forPath(lock));
            ops.add(fx.curator.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(lock + "/_c_" + UUID.randomUUID() + "-__WRIT__", new byte[0]));
            if (ops.size() >= 400 || i == n - 1) {
                for (String parent : parents(ops)) {
                    fx.curator.create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER)
                            .forPath(parent);
                }
                fx.curator.transaction().forOperations(ops);
                ops.clear();
            }
        }
    }

    /** The shard nodes the ops' lock nodes go under, that do not exist yet. */
    private List<String> parents(List<CuratorOp> ops) throws Exception {
        List<String> out = new ArrayList<>();
        for (CuratorOp op : ops) {
            String path = op.get().getPath();
            if (path.contains("/_c_")) {
                continue;
            }
            String shard = path.substring(0, path.lastIndexOf('/'));
            String relative = shard.startsWith("/warden") ? shard.substring("/warden".length()) : shard;
            if (!out.contains(relative) && fx.curator.checkExists().forPath(relative) == null) {
                out.add(relative);
            }
        }
        return out;
    }

    /** A watch whose client sends the request and then reads nothing, on a small receive buffer. */
    private static Socket stalledWatch(int port, String pathAndQuery) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        s.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                + "Accept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s;
    }

    private static int status(int port, String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String body(int port, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static long metric(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + "(\\{[^}]*\\})? ([0-9.eE+-]+)$").matcher(text);
        assertThat(m.find()).as("metric %s in /metrics", name).isTrue();
        return (long) Double.parseDouble(m.group(2));
    }

    private static String tail(Path log) throws IOException {
        String all = Files.readString(log);
        return all.substring(Math.max(0, all.length() - 3000));
    }
}
