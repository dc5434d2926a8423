package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warden.it.support.Await;
import io.warden.it.support.WardenClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The two-cell workload, in the test's JVM: client threads over plain HTTP, each with one session at a time (opened, as
 * every session is, in the default cell) kept alive by a scheduler every third of its TTL, on its own schedule (paced
 * from send times as the SDK paces its heartbeats; each keepalive given up after two intervals). Each
 * client loops: acquire one of its namespace's locks with a {@code wait_ms}, then increment that lock's fenced counter
 * ({@link FencedRegister}: read under the token at the start of the hold, write the value plus one under it at the end),
 * then release by token; every call is recorded as a {@link CellOp} with {@code System.nanoTime()} around it.
 *
 * <p>Clients by role: {@code web-*} use namespace {@value TwoCells#WEB} only (cell A), {@code pay-*} namespace
 * {@value TwoCells#PAY} only (cell B, until a move), {@code span-*} both, turn about, in one session (whose record is
 * then in both cells). Each client asks one gateway, or (as behind a round-robin balancer) the two in turn, call by
 * call, keepalives too. Which clients run is a {@link ClientSpec} list ({@link #QUORUM_LOSS_MIX} unless a run gives
 * another), as is the number of {@value TwoCells#PAY} locks. A call is one HTTP attempt: a 503 is recorded as such, never retried into a
 * success, so the history shows every refusal a client saw.
 *
 * <p>What a client does after an answer that does not decide (503, no answer, another 5xx): an acquire is sent again
 * later with the same {@code request_id} (the retry is idempotent, so a request that was made after all is not left
 * behind the client's back), a release again with the same token, each on that namespace's next turn (a spanning
 * client meanwhile goes on in its other namespace). A 404 {@code SESSION_NOT_FOUND} ends the session for the client:
 * whatever it held or waited for ended with it, and it opens another.
 *
 * <p>Concurrency: each client's session and lanes are its own thread's, but for the session's {@code gone} flag, which
 * the keepalive thread sets; ops go to a concurrent queue; the registers synchronise themselves.
 */
final class CellWorkload {
    static final long TTL_MS = 3000;
    static final long WAIT_MS = 2000;
    /**
     * Locks per namespace (of {@value TwoCells#PAY}, unless a run asks for another count): a few, so that clients of a
     * namespace queue behind each other and the fence is used.
     */
    static final int LOCKS = 2;
    /** Keepalives every third of the TTL, as the gateway's {@code keepalive_interval_ms} says. */
    static final long KEEPALIVE_EVERY_MS = TTL_MS / 3;
    /**
     * A keepalive not answered within this is given up (recorded without an answer): two intervals, so that sends are
     * never further apart than that, well within the TTL, however slowly a gateway refuses.
     */
    static final long KEEPALIVE_TIMEOUT_MS = 2 * KEEPALIVE_EVERY_MS;
    /** How long a client waits after an answer that did not decide, before it asks again. */
    private static final long BACKOFF_MS = 250;

    /**
     * One client of a mix: its name (which says its role, as the checkers and reports expect: {@code web-1},
     * {@code pay-2}), its role, and the gateway it asks (0-based), or -1 for the two in turn, call by call.
     */
    record ClientSpec(String name, CellOp.Role role, int gateway) {
    }

    /**
     * The mix {@link CellQuorumLossIT} runs: three clients of each role but two spanning ones, each on one gateway or
     * (the third web and pay clients) on both in turn.
     */
    static final List<ClientSpec> QUORUM_LOSS_MIX = List.of(
            new ClientSpec("web-1", CellOp.Role.WEB, 0),
            new ClientSpec("web-2", CellOp.Role.WEB, 1),
            new ClientSpec("web-3", CellOp.Role.WEB, -1),
            new ClientSpec("pay-1", CellOp.Role.PAY, 0),
            new ClientSpec("pay-2", CellOp.Role.PAY, 1),
            new ClientSpec("pay-3", CellOp.Role.PAY, -1),
            new ClientSpec("span-1", CellOp.Role.SPAN, 0),
            new ClientSpec("span-2", CellOp.Role.SPAN, 1));

    private final List<URI> gateways;
    /** Locks per namespace: {@link #LOCKS}, but for {@value TwoCells#PAY} when a run asks for another count. */
    private final Map<String, Integer> locks;
    private final HttpClient http = WardenClient.newHttpClient();
    private final ConcurrentLinkedQueue<CellOp> ops = new ConcurrentLinkedQueue<>();
    private final AtomicInteger nextId = new AtomicInteger();
    private final Map<String, FencedRegister> counters = new TreeMap<>();
    private final List<Client> clients = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    /** What went wrong in the workload itself (a client thread or a keepalive task that threw): the run is void. */
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    /** Keepalives: a blocking call each; enough threads that one held up by a cell without a quorum delays no other. */
    private final ScheduledExecutorService keepalives = Executors.newScheduledThreadPool(12, r -> {
        Thread t = new Thread(r, "cell-keepalive");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean stopping;

    /** The mix of {@link CellQuorumLossIT} ({@link #QUORUM_LOSS_MIX}), {@link #LOCKS} locks per namespace. */
    CellWorkload(List<URI> gateways, long seed) {
        this(gateways, seed, QUORUM_LOSS_MIX, LOCKS);
    }

    /**
     * The clients of {@code mix}, each with a seed drawn in order from {@code seed}; {@link #LOCKS} locks in namespace
     * {@value TwoCells#WEB}, {@code payLocks} in {@value TwoCells#PAY}, each with its fenced counter.
     */
    CellWorkload(List<URI> gateways, long seed, List<ClientSpec> mix, int payLocks) {
        this.gateways = List.copyOf(gateways);
        this.locks = Map.of(TwoCells.WEB, LOCKS, TwoCells.PAY, payLocks);
        for (String ns : List.of(TwoCells.WEB, TwoCells.PAY)) {
            for (int l = 0; l < locks.get(ns); l++) {
                counters.put(lock(ns, l), new FencedRegister());
            }
        }
        Random seeds = new Random(seed);
        for (ClientSpec spec : mix) {
            clients.add(new Client(spec.name(), spec.role(), spec.gateway(), seeds.nextLong()));
        }
    }

    static String lock(String namespace, int l) {
        return namespace + "/counter-" + l;
    }

    void start() {
        for (Client c : clients) {
            Thread t = new Thread(c, "cell-client-" + c.name);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    /** Stops every client after its current step (a hold is incremented and released first) and every keepalive. */
    void stop(Duration timeout) throws InterruptedException {
        stopping = true;
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
        // Not interrupted: a keepalive under way finishes (within its timeout) and is recorded as it was answered.
        keepalives.shutdown();
        if (!keepalives.awaitTermination(10, TimeUnit.SECONDS)) {
            keepalives.shutdownNow();
        }
        List<String> stuck = threads.stream().filter(Thread::isAlive).map(Thread::getName).toList();
        if (!stuck.isEmpty()) {
            throw new AssertionError("client threads still running " + timeout.toSeconds() + " s after the stop: " + stuck);
        }
    }

    /** Failures of the workload's own code (not answers of the gateways): none, or the history is incomplete. */
    List<String> failures() {
        return List.copyOf(failures);
    }

    List<String> clientNames() {
        return clients.stream().map(c -> c.name).toList();
    }

    /** The history so far, by id (ids are given when an op is recorded, so in order of {@code ret} per thread). */
    List<CellOp> history() {
        List<CellOp> list = new ArrayList<>(ops);
        list.sort(Comparator.comparingInt(CellOp::id));
        return list;
    }

    /** Each lock's fenced counter: its value, the increments acknowledged, what the fence refused. */
    Map<String, FencedRegister.Summary> counters() {
        Map<String, FencedRegister.Summary> out = new TreeMap<>();
        counters.forEach((lock, register) -> out.put(lock, register.summary()));
        return out;
    }

    /** Whether every client was granted an acquire it sent after {@code since}. */
    boolean everyClientGrantedSince(long since) {
        return everyClientGrantedSince(since, null);
    }

    /** Whether every client of {@code role} (null: every client) was granted an acquire it sent after {@code since}. */
    boolean everyClientGrantedSince(long since, CellOp.Role role) {
        for (Client c : clients) {
            if ((role == null || c.role == role) && c.lastGrantCall.get() <= since) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------ clients

    /** A session as its client holds it. */
    private static final class Session {
        final String id;
        /** Set when a gateway said the session is gone (404), by the client thread or the keepalive thread. */
        volatile boolean gone;
        /** Set when the client let go of it: its keepalives stop. */
        volatile boolean dropped;

        Session(String id) {
            this.id = id;
        }
    }

    /**
     * One namespace of a client: what is left undecided there. At most one of the two: an acquire to ask again with
     * the same request id, or a release to send again with the same token.
     */
    private static final class Lane {
        final String namespace;
        String pendingLock;
        String pendingRequest;
        long pendingReleaseToken;

        Lane(String namespace) {
            this.namespace = namespace;
        }

        void clear() {
            pendingLock = null;
            pendingRequest = null;
            pendingReleaseToken = 0;
        }
    }

    private final class Client implements Runnable {
        final String name;
        final CellOp.Role role;
        /** The gateway it asks; -1: both in turn. */
        final int gateway;
        final Random rnd;
        final List<Lane> lanes = new ArrayList<>();
        final AtomicLong turns = new AtomicLong();
        /** Call time of the latest acquire that was granted. */
        final AtomicLong lastGrantCall = new AtomicLong(Long.MIN_VALUE);
        private long requests;

        Client(String name, CellOp.Role role, int gateway, long seed) {
            this.name = name;
            this.role = role;
            this.gateway = gateway;
            this.rnd = new Random(seed);
            if (role != CellOp.Role.PAY) {
                lanes.add(new Lane(TwoCells.WEB));
            }
            if (role != CellOp.Role.WEB) {
                lanes.add(new Lane(TwoCells.PAY));
            }
        }

        int nextGateway() {
            return gateway >= 0 ? gateway : (int) Math.floorMod(turns.getAndIncrement(), (long) gateways.size());
        }

        @Override
        public void run() {
            Session session = null;
            int turn = 0;
            try {
                while (!stopping) {
                    if (session == null || session.gone) {
                        if (session != null) {
                            session.dropped = true;
                        }
                        session = open();
                        if (session == null) {
                            pause(BACKOFF_MS);
                        }
                        continue;
                    }
                    step(session, lanes.get(turn++ % lanes.size()));
                    pause(10 + rnd.nextInt(40));
                }
            } catch (RuntimeException e) {
                failures.add(name + ": " + e);
                e.printStackTrace();
            } finally {
                if (session != null) {
                    session.dropped = true;
                }
            }
        }

        /** Opens a session and schedules its keepalives; null when not given one. */
        private Session open() {
            ObjectNode body = WardenClient.JSON.createObjectNode().put("client_id", name).put("ttl_ms", TTL_MS);
            int gw = nextGateway();
            Call c = call(gw, "POST", "/v1/sessions", body, Duration.ofSeconds(5));
            String id = c.status == 201 || c.status == 200 ? c.body.path("session_id").asText(null) : null;
            record(CellOp.Kind.OPEN, gw, id, null, null, 0, id != null ? CellOp.Outcome.OK : c.outcome(), c);
            if (id == null) {
                return null;
            }
            for (Lane lane : lanes) {
                lane.clear();
            }
            Session s = new Session(id);
            scheduleKeepalive(s, KEEPALIVE_EVERY_MS);
            return s;
        }

        private void scheduleKeepalive(Session s, long delayMs) {
            try {
                keepalives.schedule(() -> keepalive(s), delayMs, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                if (!stopping) {
                    throw e;
                }
            }
        }

        /**
         * One keepalive, then the next one scheduled a third of the TTL after this one was sent (at once if that has
         * passed), as the SDK paces its heartbeats: a slow answer does not push the next keepalive back.
         */
        private void keepalive(Session s) {
            if (s.gone || s.dropped || stopping) {
                return;
            }
            try {
                long sent = System.nanoTime();
                sendKeepalive(s);
                if (!s.gone && !s.dropped && !stopping) {
                    long next = KEEPALIVE_EVERY_MS - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
                    scheduleKeepalive(s, Math.max(0, next));
                }
            } catch (RuntimeException e) {
                // without its next keepalive the session would die of it: the run is void instead
                failures.add(name + " keepalive: " + e);
                e.printStackTrace();
            }
        }

        private void sendKeepalive(Session s) {
            int gw = nextGateway();
            Call c = call(gw, "POST", "/v1/sessions/" + s.id + "/keepalive", null, Duration.ofMillis(KEEPALIVE_TIMEOUT_MS));
            CellOp.Outcome outcome = c.status == 200 ? CellOp.Outcome.OK : c.outcome();
            record(CellOp.Kind.KEEPALIVE, gw, s.id, null, null, 0, outcome, c);
            if (outcome == CellOp.Outcome.SESSION_GONE) {
                s.gone = true;
            }
        }

        /** One turn in {@code lane}: a pending release or acquire first, else a new acquire; a grant is used and released. */
        private void step(Session s, Lane lane) {
            if (lane.pendingReleaseToken != 0) {
                release(s, lane, lane.pendingLock, lane.pendingReleaseToken);
                return;
            }
            String lock = lane.pendingLock != null ? lane.pendingLock
                    : lock(lane.namespace, rnd.nextInt(locks.get(lane.namespace)));
            String requestId = lane.pendingRequest != null ? lane.pendingRequest : name + "-" + (++requests);
            ObjectNode body = WardenClient.JSON.createObjectNode().put("session_id", s.id).put("name", lock)
                    .put("mode", "EXCLUSIVE").put("wait_ms", WAIT_MS).put("request_id", requestId);
            int gw = nextGateway();
            Call c = call(gw, "POST", "/v1/acquire", body, Duration.ofMillis(WAIT_MS + 5000));
            String status = c.status == 200 ? c.body.path("status").asText("") : "";
            long token = c.body.path("token").asLong(0);
            CellOp.Outcome outcome = "GRANTED".equals(status) ? CellOp.Outcome.OK
                    : "TIMED_OUT".equals(status) ? CellOp.Outcome.TIMED_OUT
                    : c.status == 200 ? CellOp.Outcome.ERROR : c.outcome();
            record(CellOp.Kind.ACQUIRE, gw, s.id, lock, requestId, outcome == CellOp.Outcome.OK ? token : 0, outcome, c);
            switch (outcome) {
                case OK -> {
                    lane.clear();
                    lastGrantCall.accumulateAndGet(c.call, Math::max);
                    increment(s, lock, token);
                    release(s, lane, lock, token);
                }
                case TIMED_OUT -> lane.clear();
                case SESSION_GONE -> {
                    lane.clear();
                    s.gone = true;
                }
                default -> {
                    if (decided(c)) {
                        lane.clear();
                    } else {
                        lane.pendingLock = lock;
                        lane.pendingRequest = requestId;
                    }
                    pause(BACKOFF_MS);
                }
            }
        }

        /** Read the counter under the token, hold a moment, write it plus one under the token (contract §2.2). */
        private void increment(Session s, String lock, long token) {
            FencedRegister register = counters.get(lock);
            long call = System.nanoTime();
            long value = register.read(token);
            boolean ok = false;
            if (value >= 0) {
                pause(5 + rnd.nextInt(25));
                ok = register.writeAndAcknowledge(token, value + 1);
            }
            long ret = System.nanoTime();
            ops.add(new CellOp(nextId.getAndIncrement(), name, role, CellOp.Kind.INCREMENT, -1, s.id, lock, null, token,
                    ok ? CellOp.Outcome.OK : CellOp.Outcome.FENCED, 0, ok ? "" : value < 0 ? "read refused" : "write refused",
                    call, ret, 0));
        }

        private void release(Session s, Lane lane, String lock, long token) {
            ObjectNode body = WardenClient.JSON.createObjectNode().put("session_id", s.id).put("name", lock)
                    .put("token", token);
            int gw = nextGateway();
            Call c = call(gw, "POST", "/v1/release", body, Duration.ofSeconds(5));
            CellOp.Outcome outcome = c.status == 200
                    ? (c.body.path("released").asBoolean(false) ? CellOp.Outcome.OK : CellOp.Outcome.NOT_RELEASED)
                    : c.outcome();
            record(CellOp.Kind.RELEASE, gw, s.id, lock, null, token, outcome, c);
            if (outcome == CellOp.Outcome.SESSION_GONE) {
                s.gone = true;
            }
            if (c.status == 200 || decided(c)) {
                lane.clear();
            } else {
                lane.pendingLock = lock;
                lane.pendingRequest = null;
                lane.pendingReleaseToken = token;
                pause(BACKOFF_MS);
            }
        }

        private void record(CellOp.Kind kind, int gw, String session, String lock, String requestId, long token,
                            CellOp.Outcome outcome, Call c) {
            ops.add(new CellOp(nextId.getAndIncrement(), name, role, kind, gw, session, lock, requestId, token, outcome,
                    c.status, outcome == CellOp.Outcome.OK ? "" : c.detail(), c.call, c.ret,
                    kind == CellOp.Kind.ACQUIRE ? WAIT_MS : 0));
        }
    }

    /** An answer that decides: a 4xx (the call was refused for good; a 404 ends the session). */
    private static boolean decided(Call c) {
        return c.status >= 400 && c.status < 500;
    }

    // ------------------------------------------------------------------ HTTP

    /** One HTTP attempt: its status (0 without an answer), body, and the times around it. */
    private record Call(int status, JsonNode body, String error, long call, long ret) {
        CellOp.Outcome outcome() {
            if (status == 0) {
                return CellOp.Outcome.NO_ANSWER;
            }
            if (status == 503) {
                return CellOp.Outcome.UNAVAILABLE;
            }
            if (status == 404 && "SESSION_NOT_FOUND".equals(body.path("code").asText())) {
                return CellOp.Outcome.SESSION_GONE;
            }
            return CellOp.Outcome.ERROR;
        }

        /** The problem code and the start of its detail, or the error without an answer. */
        String detail() {
            if (status == 0) {
                return error;
            }
            String code = body.path("code").asText("");
            String text = body.path("detail").asText("");
            String both = (code + " " + text).trim();
            return both.length() > 240 ? both.substring(0, 240) + "..." : both;
        }
    }

    private Call call(int gw, String method, String path, JsonNode body, Duration timeout) {
        URI uri = gateways.get(gw).resolve(path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json");
        if (body != null) {
            request.header("Content-Type", "application/json").method(method,
                    HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        long call = System.nanoTime();
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            long ret = System.nanoTime();
            return new Call(response.statusCode(), parse(response.body()), null, call, ret);
        } catch (IOException e) {
            return new Call(0, WardenClient.JSON.createObjectNode(), e.getClass().getSimpleName() + ": " + e.getMessage(),
                    call, System.nanoTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Call(0, WardenClient.JSON.createObjectNode(), "interrupted", call, System.nanoTime());
        }
    }

    private static JsonNode parse(String raw) {
        try {
            return raw == null || raw.isBlank() ? WardenClient.JSON.createObjectNode() : WardenClient.JSON.readTree(raw);
        } catch (IOException e) {
            return WardenClient.JSON.createObjectNode().put("unparsed", raw);
        }
    }

    private static void pause(long ms) {
        Await.sleepQuietly(Duration.ofMillis(ms));
    }
}
