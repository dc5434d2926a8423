package io.warden.service.watch;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.CloseResult;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;
import io.warden.service.support.DelayLink;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The watch stream publishes whole ZooKeeper transactions. Real gateways on a real
 * ZooKeeper; what is checked is what an SSE client reads.
 */
class WatchTransactionsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    /**
     * Events were published per ZooKeeper notification, and a {@code multi} notifies once per node, so
     * closing a session that held 3 locks put {@code id: Z} on the stream three times: a client cut after the first
     * resumed from Z and lost the other two. The id now comes once, after the last event of the transaction.
     */
    @Test
    void aSessionCloseOfThreeLocks_carriesTheIdOnce_afterTheLastEventOfItsRevision() {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        String s = WardenFixture.session(w, "three", 60_000);
        long last = 0;
        for (int i = 0; i < 3; i++) {
            AcquireResult r = join(w.acquire(exclusive(s, "close3/lock-" + i, 0)));
            assertThat(r.status()).isEqualTo(AcquireResult.Status.GRANTED);
            last = r.token();
        }
        try (SseTestClient sse = SseTestClient.watch(gw.httpPort(), "?prefix=close3&since_revision=" + last)) {
            w.closeSession(s).join();
            List<SseTestClient.Event> released = sse.next(3);
            assertThat(released).extracting(SseTestClient.Event::type).containsOnly("RELEASED");
            long z = released.get(0).revision();
            assertThat(released).allSatisfy(e -> assertThat(e.revision()).isEqualTo(z));
            assertThat(released).extracting(SseTestClient.Event::id).as("only the last event of revision %d has the id", z)
                    .containsExactly(null, null, Long.toString(z));
        }
    }

    /**
     * A gateway stopped while publishing a 1,000-lock close had sent 242 RELEASED, each with the id of the
     * close, and a resume from that id at the other gateway returned nothing (758 lost). Whatever the stream got before
     * the stop, a resume from its last id at the other gateway gets the rest: every RELEASED exactly once.
     */
    @Test
    void aGatewayStoppedWhilePublishingALargeClose_leavesNothingMissingOnResumeElsewhere() throws Exception {
        int n = 1000;
        Gateway first = fx.gateway(fx.config().withLimits(n, n, n));
        Gateway other = fx.gateway(fx.config().withLimits(n, n, n));
        String s = WardenFixture.session(first.warden(), "big", 120_000);
        long granted = acquireAll(first.warden(), s, "bigclose", n);
        RawWatch raw = RawWatch.open(first.httpPort(), "/v1/watch?prefix=bigclose");
        raw.readUntil("watching");
        CompletableFuture<CloseResult> close = other.warden().closeSession(s);
        raw.readUntil("event: RELEASED");
        first.close(); // while the stream is being written
        List<Frame> got = parse(raw.readUntilClosed());
        close.join();
        long lastId = -1;
        int committed = 0;
        for (int i = 0; i < got.size(); i++) {
            if (got.get(i).id != null) {
                lastId = Long.parseLong(got.get(i).id);
                committed = i + 1;
            }
        }
        // What a client keeps: the events up to its last id (those after it come again on resume). Each RELEASED is
        // told by its lock: acquires of different names made together share a transaction, and so a token.
        Set<String> released = new HashSet<>();
        List<String> all = new ArrayList<>();
        for (Frame f : got.subList(0, committed)) {
            all.add(f.data.get("name").asText());
        }
        // No id at all (the stop came before the close's last event was written, as on a loaded machine): the client
        // resumes from what it knew before, the revision of its grants.
        String query = lastId < 0 ? "?prefix=bigclose&since_revision=" + granted : "?prefix=bigclose";
        Map<String, String> headers = lastId < 0 ? Map.of() : Map.of("Last-Event-ID", Long.toString(lastId));
        try (SseTestClient resumed = SseTestClient.open(other.httpPort(), query, headers)) {
            assertThat(resumed.status()).isEqualTo(200);
            String s2 = WardenFixture.session(other.warden(), "marker", 60_000);
            join(other.warden().acquire(exclusive(s2, "bigclose/marker", 0)));
            while (true) {
                SseTestClient.Event e = resumed.next();
                assertThat(e.type()).as("no RESYNC: the other gateway has the history").isNotEqualTo("RESYNC");
                if ("bigclose/marker".equals(e.name())) {
                    break;
                }
                assertThat(e.type()).isEqualTo("RELEASED");
                all.add(e.name());
            }
        }
        released.addAll(all);
        assertThat(all).as("RELEASED received before the stop (%d up to id %d) and after the resume", committed, lastId)
                .hasSize(n);
        assertThat(released).as("each exactly once").hasSize(n);
    }

    /**
     * A watch activated between two notifications of one transaction got {@code RESYNC(Z)} showing 395 of
     * 400 locks still held, then 395 RELEASED at Z. Watches start between transactions only: a RESYNC shows all the
     * holds (and the close follows as events) or none (and its revision is at least the close's).
     */
    @Test
    void watchesStartedDuringALargeClose_getAResyncExactAsOfItsRevision() throws Exception {
        int n = 1000;
        Gateway gw = fx.gateway(fx.config().withLimits(n, n, n));
        String s = WardenFixture.session(gw.warden(), "many", 120_000);
        acquireAll(gw.warden(), s, "midtx", n);
        List<SseTestClient> watches = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService openers = Executors.newFixedThreadPool(4);
        try (SseTestClient reference = SseTestClient.watch(gw.httpPort(), "?prefix=midtx")) {
            CompletableFuture<CloseResult> close = gw.warden().closeSession(s);
            // Watches start from when a first watcher sees the close until the gateway has published all of it.
            SseTestClient.Event first = reference.next();
            for (int t = 0; t < 4; t++) {
                openers.submit(() -> {
                    while (!stop.get() && watches.size() < 60) {
                        watches.add(SseTestClient.watch(gw.httpPort(), "?prefix=midtx&since_revision=0"));
                    }
                    return null;
                });
            }
            long z = reference.next(n - 1).get(n - 2).revision();
            assertThat(first.revision()).isEqualTo(z);
            close.join();
            int seen = watches.size();
            WardenFixture.await("more watches are open", () -> watches.size() >= Math.min(60, seen + 8));
            stop.set(true);
            openers.shutdown();
            assertThat(openers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
            int before = 0;
            int after = 0;
            for (SseTestClient watch : watches) {
                SseTestClient.Event resync = watch.next();
                assertThat(resync.type()).isEqualTo("RESYNC");
                int held = 0;
                for (JsonNode lock : resync.data().get("locks")) {
                    held += lock.get("holders").size();
                }
                if (held == n) {
                    before++;
                    assertThat(resync.revision()).isLessThan(z);
                    List<SseTestClient.Event> released = watch.next(n);
                    assertThat(released).allSatisfy(e -> {
                        assertThat(e.type()).isEqualTo("RELEASED");
                        assertThat(e.revision()).isEqualTo(z);
                    });
                } else {
                    assertThat(held).as("RESYNC at %d (the close is at %d) shows %d of %d holds", resync.revision(), z, held, n)
                            .isZero();
                    assertThat(resync.revision()).isGreaterThanOrEqualTo(z);
                    after++;
                }
            }
            System.out.printf("watches started before the close: %d, after it: %d%n", before, after);
        } finally {
            stop.set(true);
            openers.shutdownNow();
            watches.forEach(SseTestClient::close);
        }
    }

    /**
     * Closing a session that held L and also waited on L, with T waiting, was reported as RELEASED(hold),
     * GRANTED(the session's own wait), RELEASED(that wait), GRANTED(T) at one revision — a request that never held was
     * GRANTED (8 of 8 tries), while the close reply said the wait was cancelled. Now the events say what the reply says.
     */
    @Test
    void closingASessionThatHoldsAndWaitsOnOneLock_isReleasedCancelledGranted_asTheCloseReplySays() {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        String name = "holdwait/l";
        String s = WardenFixture.session(w, "s", 60_000);
        String t = WardenFixture.session(w, "t", 60_000);
        try (SseTestClient sse = SseTestClient.watch(gw.httpPort(), "?name=" + name)) {
            long hold = join(w.acquire(exclusive(s, name, 0))).token();
            sse.next(2);
            CompletableFuture<AcquireResult> ownWait = w.acquire(exclusive(s, name, 60_000));
            long ownWaitToken = sse.next().token();
            CompletableFuture<AcquireResult> tWait = w.acquire(exclusive(t, name, 60_000));
            long tToken = sse.next().token();

            CloseResult closed = w.closeSession(s).join();
            assertThat(closed.released()).containsExactly(name);
            assertThat(closed.cancelled()).containsExactly(name);
            List<SseTestClient.Event> events = sse.next(3);
            assertThat(events).extracting(e -> e.type() + " " + e.token())
                    .containsExactly("RELEASED " + hold, "CANCELLED " + ownWaitToken, "GRANTED " + tToken);
            assertThat(events).extracting(SseTestClient.Event::revision).containsOnly(events.get(0).revision());
            assertThat(join(tWait).token()).isEqualTo(tToken);
            ownWait.exceptionally(x -> null);
        }
    }

    /**
     * Event content depended on a read at notification time (a created node's data, a session's client
     * id), so two gateways disagreed (1,500 try-locks: 304 events differed; with one gateway's link delayed, expiries
     * were EXPIRED on one and RELEASED on the other). Events now carry {@code client_id} too, and both come from the
     * transaction itself: a gateway with a slow link to ZooKeeper publishes exactly what a direct one does.
     */
    @Test
    void twoGateways_oneWithADelayedLink_publishIdenticalEvents_withSessionAndClientIds() throws Exception {
        Gateway direct = fx.gateway();
        try (DelayLink link = new DelayLink(fx.server.getPort(), Duration.ofMillis(150), Duration.ofMillis(150))) {
            Gateway delayed = fx.gateway(fx.config().withZkConnect(link.connectString()));
            try {
                Warden w = direct.warden();
                String ns = "twins";
                try (SseTestClient a = SseTestClient.watch(direct.httpPort(), "?prefix=" + ns);
                     SseTestClient b = SseTestClient.watch(delayed.httpPort(), "?prefix=" + ns)) {
                    String starter = WardenFixture.session(w, "starter", 60_000);
                    long start = join(w.acquire(exclusive(starter, ns + "/start", 0))).token();
                    a.next(2);
                    b.next(2);

                    Map<String, String> clients = new HashMap<>();
                    clients.put(starter, "starter");
                    List<String> sessions = new ArrayList<>();
                    for (int i = 0; i < 24; i++) {
                        String client = "client-" + i + "-\u00e9\u00df/x";
                        String sid = WardenFixture.session(w, client, i % 3 == 0 ? 2000 : 60_000);
                        clients.put(sid, client);
                        sessions.add(sid);
                        join(w.acquire(exclusive(sid, ns + "/hot-" + (i % 4), 0))); // a try-lock: held, or cancelled
                        if (i % 3 != 2) {
                            join(w.acquire(exclusive(sid, ns + "/own-" + i, 0)));
                        }
                        if (i % 3 == 1) {
                            w.closeSession(sid).join(); // a close of several locks in one transaction
                        }
                    }
                    fx.clock.advance(Duration.ofMillis(2500)); // sessions 0, 3, 6, ... expire
                    for (int i = 2; i < 24; i += 3) {
                        w.closeSession(sessions.get(i)).join();
                    }
                    w.release(starter, LockName.parse(ns + "/start"), start).join();

                    List<SseTestClient.Event> fromDirect = until(a, ns + "/start", "RELEASED");
                    List<SseTestClient.Event> fromDelayed = until(b, ns + "/start", "RELEASED");
                    assertThat(fromDelayed.stream().map(e -> e.data().toString()).toList())
                            .as("the same events, in the same order, with the same content")
                            .isEqualTo(fromDirect.stream().map(e -> e.data().toString()).toList());
                    assertThat(fromDirect).extracting(SseTestClient.Event::type)
                            .contains("QUEUED", "GRANTED", "RELEASED", "CANCELLED", "EXPIRED");
                    for (SseTestClient.Event e : fromDirect) {
                        assertThat(e.data().path("client_id").asText(null)).as(e.toString())
                                .isEqualTo(clients.get(e.sessionId()));
                    }
                }
            } finally {
                delayed.close();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Acquires {@code n} locks; returns the largest token, a revision after every grant. */
    private static long acquireAll(Warden w, String session, String ns, int n) {
        List<CompletableFuture<AcquireResult>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(w.acquire(exclusive(session, ns + "/lock-" + i, 0)));
        }
        long last = 0;
        for (CompletableFuture<AcquireResult> f : all) {
            AcquireResult r = join(f);
            assertThat(r.status()).isEqualTo(AcquireResult.Status.GRANTED);
            last = Math.max(last, r.token());
        }
        return last;
    }

    /** Events up to and including the first of {@code type} on {@code name}. */
    private static List<SseTestClient.Event> until(SseTestClient sse, String name, String type) {
        List<SseTestClient.Event> out = new ArrayList<>();
        while (true) {
            SseTestClient.Event e = sse.next();
            out.add(e);
            if (name.equals(e.name()) && type.equals(e.type())) {
                return out;
            }
        }
    }

    /** One SSE event of a raw stream: its id line (or null) and data. */
    private record Frame(String id, String type, JsonNode data) {
    }

    /** The complete event frames of a raw HTTP/1.0 SSE response (headers, comments and a cut last frame left out). */
    private static List<Frame> parse(String raw) throws IOException {
        int body = raw.indexOf("\r\n\r\n");
        String frames = raw.substring(body + 4);
        int end = frames.lastIndexOf("\n\n");
        List<Frame> out = new ArrayList<>();
        if (end < 0) {
            return out;
        }
        for (String frame : frames.substring(0, end).split("\n\n")) {
            String id = null;
            String type = null;
            String data = null;
            for (String line : frame.split("\n")) {
                if (line.startsWith("id: ")) {
                    id = line.substring(4);
                } else if (line.startsWith("event: ")) {
                    type = line.substring(7);
                } else if (line.startsWith("data: ")) {
                    data = line.substring(6);
                }
            }
            if (data != null) {
                out.add(new Frame(id, type, JSON.readTree(data)));
            }
        }
        return out;
    }

    /** A watch read over a plain socket (HTTP/1.0: the body is the raw stream until the gateway closes it). */
    private static final class RawWatch {
        private final Socket socket;
        private final ByteArrayOutputStream got = new ByteArrayOutputStream();

        private RawWatch(Socket socket) {
            this.socket = socket;
        }

        static RawWatch open(int port, String pathAndQuery) throws IOException {
            Socket s = new Socket();
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                    + "Accept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            s.setSoTimeout(1000);
            return new RawWatch(s);
        }

        void readUntil(String text) throws IOException {
            long deadline = System.nanoTime() + SseTestClient.DEADLINE.toNanos();
            byte[] buf = new byte[8192];
            InputStream in = socket.getInputStream();
            while (!got.toString(StandardCharsets.UTF_8).contains(text)) {
                assertThat(System.nanoTime() - deadline).as("'%s' within the deadline", text).isNegative();
                try {
                    int n = in.read(buf);
                    assertThat(n).as("stream open until '%s'", text).isNotNegative();
                    got.write(buf, 0, n);
                } catch (SocketTimeoutException e) {
                    // nothing yet
                }
            }
        }

        String readUntilClosed() throws IOException {
            long deadline = System.nanoTime() + SseTestClient.DEADLINE.toNanos();
            byte[] buf = new byte[64 * 1024];
            InputStream in = socket.getInputStream();
            try {
                while (System.nanoTime() - deadline < 0) {
                    try {
                        int n = in.read(buf);
                        if (n < 0) {
                            break;
                        }
                        got.write(buf, 0, n);
                    } catch (SocketTimeoutException e) {
                        // open and idle: the deadline decides
                    }
                }
            } catch (SocketException e) {
                // reset: cut
            } finally {
                socket.close();
            }
            return got.toString(StandardCharsets.UTF_8);
        }
    }
}
