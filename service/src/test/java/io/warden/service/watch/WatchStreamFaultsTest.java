package io.warden.service.watch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.test.KillSession;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/watch} under faults, end to end on real gateways and a real ZooKeeper: a consumer that stops reading,
 * a gateway that drains, and a gateway whose ZooKeeper session is lost. The property throughout: a watcher gets every
 * event in order, or is told it may have missed some (its stream ends, or it gets a RESYNC) — never a silent gap.
 *
 * <p>Events are made by writing queue nodes straight into ZooKeeper (as a Curator lock client would), many in one
 * transaction: fast, and every event of a transaction shares its revision (which is also the nodes' token).
 */
class WatchStreamFaultsTest {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();
    /** Each lock name is long, so that each event frame is about half a kilobyte. */
    private static final String LONG_SEGMENT = "x".repeat(120);

    private WardenFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    // ------------------------------------------------------------------ (a) a consumer that stops reading

    @Test
    void slowConsumer_isCutOnceItsQueueOverflows_whileAnotherWatcherGetsEveryEvent() throws Exception {
        Gateway gw = fx.gateway();
        int others = gw.watches().watchCount(); // the gateway's own (its console's event log, say)
        String ns = namespace("slow");
        List<String> locks = makeLocks(ns, 40);
        List<SseTestClient.Event> all = new ArrayList<>();
        try (SseTestClient fast = SseTestClient.watch(gw.httpPort(), "?prefix=" + ns);
             StalledWatch slow = StalledWatch.open(gw.httpPort(), "/v1/watch?prefix=" + ns + "&since_revision=0")) {
            WardenFixture.await("both watches are served", () -> gw.watches().watchCount() == others + 2);

            // Each round is waited for on the fast watcher, so its queue never holds more than one round (~60 KB)
            // while the stalled one's grows: kernel buffers first (a few MB at most), then its 1 MiB queue.
            int rounds = 0;
            while (gw.watches().watchCount() == others + 2) {
                assertThat(rounds).as("the stalled watch is cut within %d events", all.size()).isLessThan(1000);
                all.addAll(round(fast, locks));
                rounds++;
            }
            assertThat(gw.watches().watchCount()).isEqualTo(others + 1);
            // the other watcher goes on getting every event
            all.addAll(round(fast, locks));
            all.addAll(round(fast, locks));

            // The gateway closed the stalled connection: reading what it holds ends (EOF or reset) instead of waiting.
            String stalled = slow.readUntilClosed();
            assertThat(stalled).startsWith("HTTP/1.").contains("text/event-stream").contains(": watching");
            long resumeFrom = lastCompleteId(stalled);
            assertThat(resumeFrom).as("the RESYNC of since_revision=0 at least").isPositive();
            // What the client keeps (its events up to its last id) is every event up to that
            // revision — whole transactions. Before, the cut could fall inside a transaction of 40 RELEASED whose
            // every event carried the id: a resume from it skipped the rest of the transaction.
            assertThat(keptEventKeys(stalled)).as("the stalled client's events up to its last id")
                    .isEqualTo(keys(all.stream().filter(e -> e.revision() <= resumeFrom).toList()));

            // Resuming from the last id the stalled client got loses nothing: the missed events, or a RESYNC.
            List<SseTestClient.Event> missed = all.stream().filter(e -> e.revision() > resumeFrom).toList();
            try (SseTestClient resumed = SseTestClient.watch(gw.httpPort(), "?prefix=" + ns + "&since_revision=" + resumeFrom)) {
                SseTestClient.Event first = resumed.next();
                if (first.type().equals("RESYNC")) {
                    // history no longer reaches back that far (more than 10,000 events were made): the current state
                    assertThat(first.revision()).isGreaterThanOrEqualTo(all.get(all.size() - 1).revision());
                    assertThat(first.data().get("locks")).allSatisfy(l -> assertThat(l.get("holders")).isEmpty());
                } else {
                    List<SseTestClient.Event> replay = new ArrayList<>(List.of(first));
                    replay.addAll(resumed.next(missed.size() - 1));
                    assertThat(keys(replay)).isEqualTo(keys(missed));
                }
                List<SseTestClient.Event> live = round(resumed, locks);
                assertThat(live.get(0).revision()).isGreaterThan(all.get(all.size() - 1).revision());
            }
        }
    }

    // ------------------------------------------------------------------ (b) drain

    @Test
    void drain_endsWatchStreamsCleanly_andAResumeAtAnotherGatewayFromTheLastIdHasNoGap() throws Exception {
        Gateway draining = fx.gateway();
        Gateway other = fx.gateway();
        String ns = namespace("drain");
        List<String> locks = makeLocks(ns, 5);
        try (SseTestClient reference = SseTestClient.watch(other.httpPort(), "?prefix=" + ns);
             SseTestClient watcher = SseTestClient.watch(draining.httpPort(), "?prefix=" + ns)) {
            round(watcher, locks);
            round(watcher, locks);
            // Queued and unread when the drain begins: what the hub has published is written before the end.
            List<String> held = queueAll(locks);

            draining.drain();

            SseTestClient.End end = watcher.awaitEnd();
            assertThat(end.clean()).as("ended as a response, not cut: %s", end).isTrue();
            assertThat(watcher.comments()).last().asString().startsWith("closing: gateway draining");
            releaseAll(held);
            // two rounds (3 events per lock each), then QUEUED+GRANTED and RELEASED per lock
            int n = locks.size();
            List<SseTestClient.Event> everything = reference.next(3 * n + 3 * n + 2 * n + n);
            assertThat(everything.subList(8 * n, 9 * n)).allSatisfy(e -> assertThat(e.type()).isEqualTo("RELEASED"));

            // What the drained watcher got is a prefix of what the reference watcher got, in order.
            List<SseTestClient.Event> seen = watcher.received();
            assertThat(keys(seen)).isEqualTo(keys(everything.subList(0, seen.size())));

            long lastId = watcher.lastId();
            assertThat(lastId).isPositive();
            List<SseTestClient.Event> missed = everything.stream().filter(e -> e.revision() > lastId).toList();
            assertThat(missed).as("the drain left something to resume").isNotEmpty();
            try (SseTestClient resumed = SseTestClient.watch(other.httpPort(), "?prefix=" + ns + "&since_revision=" + lastId)) {
                List<SseTestClient.Event> replay = resumed.next(missed.size());
                assertThat(keys(replay)).as("exactly the events after the last id, no RESYNC").isEqualTo(keys(missed));
                List<SseTestClient.Event> live = round(resumed, locks);
                assertThat(live.get(0).revision()).isGreaterThan(missed.get(missed.size() - 1).revision());
            }
        }
    }

    // ------------------------------------------------------------------ (c) the gateway's ZooKeeper session is lost

    @Test
    void zooKeeperSessionLoss_rebuildsTheMirror_watchesGetAResyncThenEvents_andAResumeGetsAResync() throws Exception {
        Gateway gw = fx.gateway();
        String ns = namespace("lost");
        List<String> locks = makeLocks(ns, 3);
        try (SseTestClient watcher = SseTestClient.watch(gw.httpPort(), "?prefix=" + ns)) {
            round(watcher, locks);
            long beforeLoss = watcher.lastId();
            List<String> heldBefore = queueAll(locks.subList(0, 1));
            watcher.next(2);

            KillSession.kill(zooKeeperOf(gw));
            // Changed while the gateway has no watches (or is setting them again): must not be missed silently.
            List<String> heldDuring = queueAll(locks.subList(1, 2));

            // The stream stays open and says the history broke: a RESYNC, exact as of its revision.
            SseTestClient.Event resync = nextOfType(watcher, "RESYNC");
            Map<String, Long> state = holders(resync);
            assertThat(state).containsEntry(locks.get(0), czxid(heldBefore.get(0)));
            long duringToken = czxid(heldDuring.get(0));
            if (!state.containsKey(locks.get(1))) {
                // made after the mirror was read again: then it comes as events after the RESYNC
                List<SseTestClient.Event> after = watcher.next(2);
                assertThat(after).extracting(SseTestClient.Event::type).containsExactly("QUEUED", "GRANTED");
                assertThat(after).allSatisfy(e -> assertThat(e.token()).isEqualTo(duringToken));
                assertThat(after.get(0).revision()).isGreaterThan(resync.revision());
            } else {
                assertThat(state.get(locks.get(1))).isEqualTo(duringToken);
            }

            // Events after the rebuild arrive.
            releaseAll(heldBefore);
            SseTestClient.Event released = watcher.next();
            assertThat(released.type()).isEqualTo("RELEASED");
            assertThat(released.name()).isEqualTo(locks.get(0));
            assertThat(released.revision()).isGreaterThan(resync.revision());
            round(watcher, locks.subList(2, 3));

            // A resume from before the loss: the history starts again at the rebuild, so a RESYNC of the state now.
            try (SseTestClient resumed = SseTestClient.watch(gw.httpPort(), "?prefix=" + ns + "&since_revision=" + beforeLoss)) {
                SseTestClient.Event first = resumed.next();
                assertThat(first.type()).isEqualTo("RESYNC");
                assertThat(first.revision()).isGreaterThanOrEqualTo(watcher.lastId());
                assertThat(holders(first)).isEqualTo(Map.of(locks.get(1), duringToken));
            }
            releaseAll(heldDuring);
        }
    }

    // ------------------------------------------------------------------ (d) a short disconnection from ZooKeeper

    /**
     * Regression (found writing these tests): after a disconnection from ZooKeeper shorter than the session timeout,
     * the ZooKeeper client restores the persistent watches by itself but does not replay the notifications of the gap.
     * The feed went on publishing the notifications that arrived after the reconnection — events derived from a mirror
     * that lacked the gap's changes, with revisions past them — until the rebuild that RECONNECTED starts had read the
     * cell again; only then came the RESYNC. A client that resumed from the id of such an event (at another gateway,
     * say) silently missed the changes of the gap.
     */
    @Test
    void shortDisconnection_theWatchGetsAResyncBeforeAnyEventAfterTheGap() throws Exception {
        try (PartitionProxy proxy = new PartitionProxy(fx.server.getPort())) {
            Gateway gw = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
            String ns = namespace("gap");
            List<String> locks = makeLocks(ns, 2);
            List<CompletableFuture<Integer>> writers = new ArrayList<>();
            try (SseTestClient watcher = SseTestClient.watch(gw.httpPort(), "?prefix=" + ns)) {
                round(watcher, locks);

                proxy.partition();
                WardenFixture.await("the gateway saw the disconnection", () -> !gw.warden().ready());
                List<String> inTheGap = queueAll(locks.subList(0, 1));
                // From the reconnection on, the gateway's requests (its rebuild's among them) reach ZooKeeper late, while
                // notifications to it do not: the time between the reconnection and the rebuild's read is long.
                proxy.delayRequests(100);
                proxy.heal();
                WardenFixture.await("the gateway reconnected", () -> gw.warden().ready());
                // Other clients change the second lock right after the reconnection.
                for (int i = 0; i < 3; i++) {
                    writers.add(CompletableFuture.supplyAsync(() -> churn(locks.get(1), 50)));
                }

                SseTestClient.Event first = watcher.next();
                proxy.delayRequests(0);
                assertThat(first.type()).as("the first event after the gap must say that history broke, got %s", first)
                        .isEqualTo("RESYNC");
                long gapToken = czxid(inTheGap.get(0));
                assertThat(holders(first)).containsEntry(locks.get(0), gapToken);

                // and events go on after it
                CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(SseTestClient.DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
                releaseAll(inTheGap);
                SseTestClient.Event released;
                do {
                    released = watcher.next();
                } while (!locks.get(0).equals(released.name()));
                assertThat(released.type()).isEqualTo("RELEASED");
                assertThat(released.token()).isEqualTo(gapToken);
                assertThat(released.revision()).isGreaterThan(first.revision());
            } finally {
                proxy.delayRequests(0);
                CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).exceptionally(e -> null)
                        .get(SseTestClient.DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
                gw.close(); // before the proxy goes, or it waits out its ZooKeeper session
            }
        }
    }

    // ------------------------------------------------------------------ (e) watches opened during an outage

    /**
     * Watches opened while the gateway had no ZooKeeper (parked until the mirror is rebuilt) were
     * never sent a heartbeat, so a client that went away kept its slot until the rebuild (300 of them after 22 s; during
     * a long outage retries could use up all 10,000). Parked watches get heartbeats too: the write to a dead client
     * fails and its slot is freed while ZooKeeper is still away.
     */
    @Test
    void watchesParkedDuringAnOutage_areHeartbeated_soDeadClientsFreeTheirSlots() throws Exception {
        try (PartitionProxy proxy = new PartitionProxy(fx.server.getPort())) {
            Gateway gw = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
            try {
                int others = gw.watches().watchCount();
                proxy.partition();
                WardenFixture.await("the gateway saw the disconnection", () -> !gw.warden().ready());
                List<StalledWatch> dead = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    dead.add(StalledWatch.open(gw.httpPort(), "/v1/watch?prefix=parked&since_revision=0"));
                }
                WardenFixture.await("the parked watches are counted", () -> gw.watches().watchCount() == others + 20);
                for (StalledWatch w : dead) {
                    w.close(); // the clients go away; only a write can tell the gateway
                }
                for (int beat = 0; beat < 4 && gw.watches().watchCount() > others; beat++) {
                    fx.clock.advance(WatchHub.HEARTBEAT);
                    long until = System.nanoTime() + 2_000_000_000L;
                    while (System.nanoTime() < until && gw.watches().watchCount() > others) {
                        Thread.sleep(20);
                    }
                }
                assertThat(gw.watches().watchCount()).as("slots of dead clients, ZooKeeper still away").isEqualTo(others);
                assertThat(gw.warden().ready()).as("still partitioned").isFalse();
            } finally {
                proxy.heal();
                gw.close();
            }
        }
    }

    // ------------------------------------------------------------------ events through ZooKeeper

    private static String namespace(String base) {
        return base + "-" + NAMESPACES.incrementAndGet();
    }

    /** {@code n} lock names in {@code ns}, with their lock nodes made. */
    private List<String> makeLocks(String ns, int n) throws Exception {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String name = ns + "/" + LONG_SEGMENT + "/" + LONG_SEGMENT + "/lock-" + i;
            fx.curator.create().creatingParentsIfNeeded().forPath(WardenFixture.lockPath(name));
            names.add(name);
        }
        return names;
    }

    /** Queues and deletes a node on {@code lock}, {@code times} times over. */
    private int churn(String lock, int times) {
        try {
            for (int i = 0; i < times; i++) {
                String node = fx.curator.create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                        .forPath(WardenFixture.lockPath(lock) + "/_c_" + UUID.randomUUID() + "-__WRIT__");
                fx.curator.delete().forPath(node);
            }
            return times;
        } catch (Exception e) {
            throw new IllegalStateException("the other client failed", e);
        }
    }

    /** One EXCLUSIVE queue node under each lock, all in one transaction; the nodes' paths. */
    private List<String> queueAll(List<String> locks) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        for (String lock : locks) {
            ops.add(fx.curator.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(WardenFixture.lockPath(lock) + "/_c_" + UUID.randomUUID() + "-__WRIT__"));
        }
        List<String> paths = new ArrayList<>();
        for (CuratorTransactionResult r : fx.curator.transaction().forOperations(ops)) {
            paths.add(r.getResultPath());
        }
        return paths;
    }

    private void releaseAll(List<String> nodes) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        for (String node : nodes) {
            ops.add(fx.curator.transactionOp().delete().forPath(node));
        }
        fx.curator.transaction().forOperations(ops);
    }

    private long czxid(String node) throws Exception {
        Stat stat = fx.curator.checkExists().forPath(node);
        assertThat(stat).as(node).isNotNull();
        return stat.getCzxid();
    }

    /**
     * Queues a node under every lock in one transaction, then deletes them all in another, and checks that
     * {@code watcher} reports exactly that: QUEUED and GRANTED per lock at the first revision (the nodes' token), then
     * RELEASED per lock at the second. Returns those events.
     */
    private List<SseTestClient.Event> round(SseTestClient watcher, List<String> locks) throws Exception {
        if (locks.isEmpty()) {
            return List.of();
        }
        List<String> nodes = queueAll(locks);
        List<SseTestClient.Event> queued = watcher.next(2 * locks.size());
        long created = queued.get(0).revision();
        for (int i = 0; i < locks.size(); i++) {
            SseTestClient.Event q = queued.get(2 * i);
            SseTestClient.Event g = queued.get(2 * i + 1);
            assertThat(q.type()).as(q.toString()).isEqualTo("QUEUED");
            assertThat(g.type()).as(g.toString()).isEqualTo("GRANTED");
            for (SseTestClient.Event e : List.of(q, g)) {
                assertThat(e.name()).as(e.toString()).isEqualTo(locks.get(i));
                assertThat(e.revision()).as(e.toString()).isEqualTo(created);
                assertThat(e.token()).as(e.toString()).isEqualTo(created);
            }
        }
        releaseAll(nodes);
        List<SseTestClient.Event> released = watcher.next(locks.size());
        long deleted = released.get(0).revision();
        assertThat(deleted).isGreaterThan(created);
        for (int i = 0; i < locks.size(); i++) {
            SseTestClient.Event r = released.get(i);
            assertThat(r.type()).as(r.toString()).isEqualTo("RELEASED");
            assertThat(r.name()).as(r.toString()).isEqualTo(locks.get(i));
            assertThat(r.revision()).as(r.toString()).isEqualTo(deleted);
            assertThat(r.token()).as(r.toString()).isEqualTo(created);
        }
        List<SseTestClient.Event> out = new ArrayList<>(queued);
        out.addAll(released);
        return out;
    }

    /** The next event, which must be of {@code type}. */
    private static SseTestClient.Event nextOfType(SseTestClient watcher, String type) {
        SseTestClient.Event e = watcher.next();
        assertThat(e.type()).as("the next event: %s", e).isEqualTo(type);
        return e;
    }

    /** The holders' tokens by lock name in a RESYNC event (locks without holders left out). */
    private static Map<String, Long> holders(SseTestClient.Event resync) {
        Map<String, Long> out = new HashMap<>();
        for (JsonNode lock : resync.data().get("locks")) {
            for (JsonNode h : lock.get("holders")) {
                out.put(lock.get("name").asText(), h.get("token").asLong());
            }
        }
        return out;
    }

    private static List<String> keys(List<SseTestClient.Event> events) {
        return events.stream().map(SseTestClient.Event::key).toList();
    }

    /** The keys ({@link SseTestClient.Event#key()}) of the events of a raw SSE response up to its last id, RESYNC left out. */
    private static List<String> keptEventKeys(String raw) throws IOException {
        String frames = raw.substring(raw.indexOf("\r\n\r\n") + 4);
        List<String> keys = new ArrayList<>();
        List<String> pending = new ArrayList<>();
        int end = frames.lastIndexOf("\n\n");
        for (String frame : frames.substring(0, Math.max(end, 0)).split("\n\n")) {
            String id = null;
            String type = null;
            String data = null;
            for (String line : frame.split("\n")) {
                if (line.startsWith("id: ")) {
                    id = line.substring(4).trim();
                } else if (line.startsWith("event: ")) {
                    type = line.substring(7);
                } else if (line.startsWith("data: ")) {
                    data = line.substring(6);
                }
            }
            if (data == null) {
                continue;
            }
            if (!"RESYNC".equals(type)) {
                pending.add(new SseTestClient.Event(id, type, JSON.readTree(data)).key());
            }
            if (id != null) {
                keys.addAll(pending);
                pending.clear();
            }
        }
        return keys;
    }

    /** The id of the last complete event frame in a raw SSE response (-1 when none). */
    private static long lastCompleteId(String raw) {
        int body = raw.indexOf("\r\n\r\n");
        String frames = raw.substring(body + 4);
        int end = frames.lastIndexOf("\n\n");
        long last = -1;
        for (String frame : frames.substring(0, Math.max(end, 0)).split("\n\n")) {
            for (String line : frame.split("\n")) {
                if (line.startsWith("id: ")) {
                    last = Long.parseLong(line.substring(4).trim());
                }
            }
        }
        return last;
    }

    /** The gateway's ZooKeeper handle (of its default cell), for Curator's {@link KillSession}. */
    private static ZooKeeper zooKeeperOf(Gateway gateway) throws Exception {
        return gateway.curator().getZookeeperClient().getZooKeeper();
    }

    /**
     * A watch whose client sends the request and then reads nothing (HTTP/1.0, so the body is the raw stream), on a
     * socket with a small receive buffer: what the gateway writes piles up on its side.
     */
    private static final class StalledWatch implements AutoCloseable {
        private final Socket socket;

        private StalledWatch(Socket socket) {
            this.socket = socket;
        }

        static StalledWatch open(int port, String pathAndQuery) throws IOException {
            Socket s = new Socket();
            s.setReceiveBufferSize(4096);
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                    + "Accept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new StalledWatch(s);
        }

        /** Reads everything the gateway sent until it closed the connection; fails if it is still open at the deadline. */
        String readUntilClosed() throws IOException {
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            long deadline = System.nanoTime() + SseTestClient.DEADLINE.toNanos();
            socket.setSoTimeout(1000);
            InputStream in = socket.getInputStream();
            byte[] buf = new byte[64 * 1024];
            while (true) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the gateway kept the stalled watch open (" + got.size() + " bytes read)");
                }
                try {
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    got.write(buf, 0, n);
                } catch (SocketTimeoutException e) {
                    // nothing yet: open and idle, or still flushing; the deadline decides
                } catch (SocketException e) {
                    break; // reset: cut
                }
            }
            return got.toString(StandardCharsets.UTF_8);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
