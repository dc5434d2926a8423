package io.warden.service.watch;

import static io.warden.service.support.WardenFixture.exclusive;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.Warden;
import io.warden.service.support.DelayLink;
import io.warden.service.support.WardenFixture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Two gateways side by side on a real ZooKeeper, one of them behind a link that delays
 * everything both ways; a workload of multi-lock session closes, expiries, try-locks and waits; plain SSE clients
 * (raw sockets, {@code Last-Event-ID}, no SDK) that hang up at random points — in the middle of a frame, of a
 * transaction — and resume at either gateway (now and then with {@code since_revision=0}, as a client that lost its
 * place: a RESYNC).
 *
 * <p>Checked: both gateways publish the identical sequence (every byte of every event, and where the ids go); every
 * resumed client ends up with each event exactly once, in revision order, or a RESYNC that is exact as of its
 * revision (equal to the state replayed from the events up to it) followed by exactly the events after it.
 *
 * <p>A client keeps the events it has read only up to the last {@code id:} line (the id comes after the last event of
 * a transaction): what follows it is sent again after a resume.
 */
class WatchTwoGatewaysTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NS = "twogw";
    private static final Duration DELAY = Duration.ofMillis(100);

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void twoGatewaysOneDelayed_publishTheSameSequence_andResumedClientsSeeEachEventOnceOrAnExactResync() throws Exception {
        long seed = System.nanoTime();
        System.out.println("WatchTwoGatewaysTest seed " + seed);
        Random random = new Random(seed);
        Gateway direct = fx.gateway();
        try (DelayLink link = new DelayLink(fx.server.getPort(), DELAY, DELAY)) {
            Gateway delayed = fx.gateway(fx.config().withZkConnect(link.connectString()));
            try {
                run(direct, delayed, random, seed);
            } finally {
                delayed.close(); // before the link goes, or it waits out its ZooKeeper session
            }
        }
    }

    private void run(Gateway direct, Gateway delayed, Random random, long seed) throws Exception {
        Warden a = direct.warden();
        Warden b = delayed.warden();
        // The common start: a revision both gateways have in their history (the namespace is empty then).
        String starter = WardenFixture.session(a, "starter", 600_000);
        long start = a.acquire(exclusive(starter, "mark/start", 0)).get(20, TimeUnit.SECONDS).token();
        int[] ports = {direct.httpPort(), delayed.httpPort()};

        Reader refA = new Reader(direct.httpPort(), start);
        Reader refB = new Reader(delayed.httpPort(), start);
        refA.start();
        refB.start();
        List<Resumer> resumers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Resumer r = new Resumer(ports, start, new Random(seed + 1 + i));
            resumers.add(r);
            r.start();
        }

        ExecutorService workers = Executors.newFixedThreadPool(4);
        AtomicBoolean failed = new AtomicBoolean();
        List<Future<?>> work = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            int worker = w;
            Random r = new Random(seed * 31 + w);
            work.add(workers.submit(() -> {
                try {
                    workload(worker, r, worker % 2 == 0 ? a : b, a);
                } catch (Exception e) {
                    failed.set(true);
                    throw new IllegalStateException(e);
                }
                return null;
            }));
        }
        // Expiries: short-lived sessions of the direct gateway, expired by its clock while the workload runs.
        for (int round = 0; round < 6; round++) {
            List<String> shortLived = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String s = WardenFixture.session(a, "short-" + round + "-" + i, 2000);
                shortLived.add(s);
                for (int k = 0; k < 1 + random.nextInt(3); k++) {
                    a.acquire(exclusive(s, NS + "/hot-" + random.nextInt(6), 0)).get(20, TimeUnit.SECONDS);
                }
                a.acquire(exclusive(s, NS + "/hot-" + random.nextInt(6), 60_000)); // a wait, ended by the expiry
            }
            Thread.sleep(300 + random.nextInt(300)); // let the workload run in between (not a synchronisation)
            fx.clock.advance(Duration.ofMillis(2500));
        }
        for (Future<?> f : work) {
            f.get(120, TimeUnit.SECONDS);
        }
        workers.shutdown();
        assertThat(failed).isFalse();

        // The end: one last event, after which every reader stops.
        String ender = WardenFixture.session(a, "ender", 60_000);
        long end = a.acquire(exclusive(ender, NS + "/zz-end", 0)).get(20, TimeUnit.SECONDS).token();
        refA.stopAt(end);
        refB.stopAt(end);
        resumers.forEach(r -> r.stopAt(end));
        refA.join(60_000);
        refB.join(60_000);
        for (Resumer r : resumers) {
            r.join(120_000);
        }
        assertThat(refA.error).as("reader of the direct gateway").isNull();
        assertThat(refB.error).as("reader of the delayed gateway").isNull();

        // 1. Both gateways: the same sequence, byte for byte, with the ids in the same places.
        List<Frame> fromA = refA.committed;
        List<Frame> fromB = refB.committed;
        assertThat(fromA).as("events").hasSizeGreaterThan(200);
        assertThat(fromB.stream().map(Frame::text).toList()).as("the delayed gateway's sequence")
                .isEqualTo(fromA.stream().map(Frame::text).toList());
        assertThat(fromA).extracting(Frame::type).contains("QUEUED", "GRANTED", "RELEASED", "CANCELLED", "EXPIRED");
        assertThat(fromA.stream().filter(f -> f.type().equals("RESYNC")).toList()).isEmpty();
        checkTransactionsAndIds(fromA);
        Map<Long, Map<String, Lock>> states = replay(fromA);

        // 2. Every resumed client: each event once, in order, or an exact RESYNC and then exactly the later events.
        int resyncs = 0;
        int connections = 0;
        for (Resumer r : resumers) {
            assertThat(r.error).as("resuming client").isNull();
            connections += r.connections;
            resyncs += check(r.committed, fromA, states);
        }
        System.out.printf("%d events in %d transactions; %d resuming clients made %d connections (random hang-ups), "
                        + "got %d RESYNCs; seed %d%n", fromA.size(), states.size(), resumers.size(), connections, resyncs,
                seed);
        assertThat(connections).as("the clients did resume").isGreaterThan(4 * 5);
    }

    // ------------------------------------------------------------------ the workload

    /** Multi-lock sessions closed with waiters behind them, try-locks, and waits; on {@code via}'s gateway mostly. */
    private void workload(int worker, Random r, Warden via, Warden direct) throws Exception {
        for (int round = 0; round < 12; round++) {
            Warden w = r.nextInt(3) == 0 ? direct : via;
            // a session holding (or waiting for) several locks, closed in one transaction
            String holder = WardenFixture.session(w, "holder-" + worker + "-" + round, 60_000);
            List<CompletableFuture<AcquireResult>> waits = new ArrayList<>();
            int n = 2 + r.nextInt(4);
            for (int i = 0; i < n; i++) {
                String lock = NS + "/hot-" + r.nextInt(6);
                if (r.nextInt(4) == 0) {
                    waits.add(w.acquire(exclusive(holder, lock, 60_000))); // waits, or holds
                } else {
                    w.acquire(exclusive(holder, lock, 0)).get(20, TimeUnit.SECONDS); // try-lock: holds, or cancelled
                }
            }
            // others wait behind it
            String other = WardenFixture.session(w, "waiter-" + worker + "-" + round, 60_000);
            for (int i = 0; i < 2; i++) {
                waits.add(w.acquire(exclusive(other, NS + "/hot-" + r.nextInt(6), 60_000)));
            }
            Thread.sleep(r.nextInt(40)); // not a synchronisation: lets the waits queue in some rounds, not in others
            w.closeSession(holder).get(20, TimeUnit.SECONDS);
            if (r.nextBoolean()) {
                // its waits may be granted meanwhile (a real-time pause; they may also wait on other workers' holds)
                try {
                    CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).get(r.nextInt(500), TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                    // closed below either way
                }
            }
            w.closeSession(other).get(20, TimeUnit.SECONDS);
            for (CompletableFuture<AcquireResult> f : waits) {
                f.exceptionally(e -> null).get(30, TimeUnit.SECONDS);
            }
        }
    }

    // ------------------------------------------------------------------ checks

    /** Every transaction's events are together, and only the last of each carries the id (its revision). */
    private static void checkTransactionsAndIds(List<Frame> frames) {
        for (int i = 0; i < frames.size(); i++) {
            Frame f = frames.get(i);
            boolean last = i + 1 == frames.size() || frames.get(i + 1).revision() != f.revision();
            assertThat(f.id()).as("frame %d: %s", i, f.text()).isEqualTo(last ? Long.toString(f.revision()) : null);
            if (i > 0) {
                assertThat(f.revision()).isGreaterThanOrEqualTo(frames.get(i - 1).revision());
            }
        }
    }

    /** A lock's state: holders by token (session, client), waiters in queue order (session, client). */
    private record Lock(TreeMap<Long, String> holders, TreeMap<Long, String> waiters) {
        Lock() {
            this(new TreeMap<>(), new TreeMap<>());
        }

        Lock copy() {
            return new Lock(new TreeMap<>(holders), new TreeMap<>(waiters));
        }
    }

    /** The state of the namespace after each revision, replayed from the events (it is empty at the start). */
    private static Map<Long, Map<String, Lock>> replay(List<Frame> frames) {
        Map<Long, Map<String, Lock>> after = new TreeMap<>();
        Map<String, Lock> state = new TreeMap<>();
        for (int i = 0; i < frames.size(); i++) {
            JsonNode e = frames.get(i).data();
            String name = e.get("name").asText();
            long token = e.get("token").asLong();
            String who = e.path("session_id").asText(null) + " " + e.path("client_id").asText(null);
            Lock lock = state.computeIfAbsent(name, k -> new Lock());
            switch (e.get("type").asText()) {
                case "QUEUED" -> lock.waiters().put(token, who);
                case "GRANTED" -> {
                    assertThat(lock.waiters().remove(token)).as("GRANTED %s was waiting", token).isNotNull();
                    lock.holders().put(token, who);
                }
                case "RELEASED" -> assertThat(lock.holders().remove(token)).as("RELEASED %s held", token).isNotNull();
                case "CANCELLED" -> assertThat(lock.waiters().remove(token)).as("CANCELLED %s waited", token).isNotNull();
                case "EXPIRED" -> assertThat(lock.holders().remove(token) != null || lock.waiters().remove(token) != null)
                        .as("EXPIRED %s was queued", token).isTrue();
                default -> throw new AssertionError("unexpected event " + e);
            }
            if (lock.holders().isEmpty() && lock.waiters().isEmpty()) {
                state.remove(name);
            }
            if (i + 1 == frames.size() || frames.get(i + 1).revision() != frames.get(i).revision()) {
                Map<String, Lock> copy = new TreeMap<>();
                state.forEach((k, v) -> copy.put(k, v.copy()));
                after.put(frames.get(i).revision(), copy);
            }
        }
        return after;
    }

    /** The state a RESYNC shows, in the same form. */
    private static Map<String, Lock> state(JsonNode resync) {
        Map<String, Lock> out = new TreeMap<>();
        for (JsonNode l : resync.get("locks")) {
            Lock lock = new Lock();
            for (JsonNode h : l.get("holders")) {
                lock.holders().put(h.get("token").asLong(), h.path("session_id").asText(null) + " " + h.path("client_id").asText(null));
            }
            long position = 0;
            for (JsonNode w : l.get("waiters")) {
                lock.waiters().put(position++, w.path("session_id").asText(null) + " " + w.path("client_id").asText(null));
            }
            out.put(l.get("name").asText(), lock);
        }
        return out;
    }

    /** Waiters by position instead of token (a RESYNC has no waiters' tokens). */
    private static Map<String, Lock> byPosition(Map<String, Lock> state) {
        Map<String, Lock> out = new TreeMap<>();
        state.forEach((name, lock) -> {
            Lock l = new Lock(new TreeMap<>(lock.holders()), new TreeMap<>());
            long position = 0;
            for (String who : lock.waiters().values()) {
                l.waiters().put(position++, who);
            }
            out.put(name, l);
        });
        return out;
    }

    /**
     * A resumed client's kept frames against the reference: the reference's events in order, each once, except that
     * a RESYNC at R stands for everything up to R (it must equal the state at R) and is followed by the events after R.
     * Returns the RESYNCs seen.
     */
    private static int check(List<Frame> got, List<Frame> reference, Map<Long, Map<String, Lock>> states) {
        int next = 0; // the reference's next event this client must see
        int resyncs = 0;
        for (Frame f : got) {
            if (f.type().equals("RESYNC")) {
                resyncs++;
                long r = f.revision();
                Map<String, Lock> expected = states.entrySet().stream().filter(e -> e.getKey() <= r)
                        .reduce((x, y) -> y).map(Map.Entry::getValue).orElse(Map.of());
                assertThat(state(f.data())).as("RESYNC at %d is exact", r).isEqualTo(byPosition(expected));
                next = 0;
                while (next < reference.size() && reference.get(next).revision() <= r) {
                    next++;
                }
                continue;
            }
            assertThat(next).as("an event past the reference's end: %s", f.text()).isLessThan(reference.size());
            assertThat(f.text()).as("event %d of the reference", next).isEqualTo(reference.get(next).text());
            next++;
        }
        assertThat(next).as("the client got to the end").isEqualTo(reference.size());
        return resyncs;
    }

    // ------------------------------------------------------------------ plain SSE clients

    /** One event as read: its id line (or null), type, data, and the bytes of its event and data lines. */
    private record Frame(String id, String type, JsonNode data, String text) {
        long revision() {
            return data.get("revision").asLong();
        }
    }

    /**
     * A plain SSE connection: raw HTTP/1.0 over a socket (the body is the stream itself). {@link #read} parses frames
     * and keeps them only up to the last id, as a client that resumes by {@code Last-Event-ID} must.
     */
    private static final class Connection implements AutoCloseable {
        final Socket socket;
        final InputStream in;
        final ByteArrayOutputStream line = new ByteArrayOutputStream();
        boolean headers = true;
        String id;
        String type;
        String data;
        String text = "";
        final List<Frame> pending = new ArrayList<>();

        Connection(int port, long since, String lastEventId) throws IOException {
            socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            socket.setSoTimeout(200);
            socket.setReceiveBufferSize(8192);
            String query = lastEventId == null ? "&since_revision=" + since : "";
            socket.getOutputStream().write(("GET /v1/watch?prefix=" + NS + query + " HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                    + "Accept: text/event-stream\r\n" + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n")
                    + "\r\n").getBytes(StandardCharsets.US_ASCII));
            in = new java.io.BufferedInputStream(socket.getInputStream(), 1024);
        }

        /**
         * Reads up to {@code budget} bytes (or until nothing comes for a moment); frames completed by an id line are
         * handed to {@code commit}. False when the gateway ended the stream.
         */
        boolean read(int budget, java.util.function.Consumer<List<Frame>> commit) throws IOException {
            for (int i = 0; i < budget; i++) {
                int c;
                try {
                    c = in.read();
                } catch (SocketTimeoutException e) {
                    return true;
                }
                if (c < 0) {
                    return false;
                }
                if (c != '\n') {
                    line.write(c);
                    continue;
                }
                String l = line.toString(StandardCharsets.UTF_8);
                line.reset();
                if (headers) {
                    if (l.startsWith("HTTP/")) {
                        assertThat(l).contains(" 200 ");
                    }
                    headers = !l.equals("\r") && !l.isEmpty();
                    continue;
                }
                if (l.isEmpty()) {
                    if (data != null) {
                        Frame f = new Frame(id, type, JSON.readTree(data), text);
                        pending.add(f);
                        if (id != null) {
                            commit.accept(new ArrayList<>(pending));
                            pending.clear();
                        }
                    }
                    id = null;
                    type = null;
                    data = null;
                    text = "";
                } else if (l.startsWith("id: ")) {
                    id = l.substring(4);
                } else if (l.startsWith("event: ")) {
                    type = l.substring(7);
                    text += l + "\n";
                } else if (l.startsWith("data: ")) {
                    data = l.substring(6);
                    text += l + "\n";
                }
            }
            return true;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** Reads one gateway's stream from the start revision to the end, never hanging up. */
    private static final class Reader extends Thread {
        final int port;
        final long since;
        final List<Frame> committed = new CopyOnWriteArrayList<>();
        volatile long stopAt = Long.MAX_VALUE;
        volatile Throwable error;

        Reader(int port, long since) {
            this.port = port;
            this.since = since;
            setDaemon(true);
        }

        void stopAt(long revision) {
            stopAt = revision;
        }

        @Override
        public void run() {
            try (Connection c = new Connection(port, since, null)) {
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
                while (System.nanoTime() < deadline) {
                    if (!c.read(65536, committed::addAll)) {
                        throw new AssertionError("the stream ended");
                    }
                    if (!committed.isEmpty() && committed.get(committed.size() - 1).revision() >= stopAt) {
                        return;
                    }
                }
                throw new AssertionError("no end within 5 minutes");
            } catch (Throwable t) {
                error = t;
            }
        }
    }

    /** Connects to a random gateway, reads a random amount, hangs up (mid-frame at times), resumes from its last id. */
    private static final class Resumer extends Thread {
        final int[] ports;
        final long since;
        final Random random;
        final List<Frame> committed = new ArrayList<>();
        volatile long stopAt = Long.MAX_VALUE;
        volatile Throwable error;
        int connections;
        String lastId;

        Resumer(int[] ports, long since, Random random) {
            this.ports = ports;
            this.since = since;
            this.random = random;
            setDaemon(true);
        }

        void stopAt(long revision) {
            stopAt = revision;
        }

        @Override
        public void run() {
            try {
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
                while (System.nanoTime() < deadline) {
                    int port = ports[random.nextInt(ports.length)];
                    connections++;
                    // Now and then the client has lost its place and asks for the current state (since_revision=0).
                    boolean fresh = lastId != null && random.nextInt(6) == 0;
                    try (Connection c = fresh ? new Connection(port, 0, null) : new Connection(port, since, lastId)) {
                        int reads = 1 + random.nextInt(30);
                        for (int i = 0; i < reads; i++) {
                            boolean open = c.read(1 + random.nextInt(4000), frames -> {
                                committed.addAll(frames);
                                lastId = frames.get(frames.size() - 1).id();
                            });
                            if (done()) {
                                return;
                            }
                            if (!open) {
                                break;
                            }
                        }
                    } // hang up: whatever came after the last id is read again after the resume
                }
                throw new AssertionError("no end within 5 minutes");
            } catch (Throwable t) {
                error = t;
            }
        }

        private boolean done() {
            return !committed.isEmpty() && committed.get(committed.size() - 1).revision() >= stopAt;
        }
    }
}
