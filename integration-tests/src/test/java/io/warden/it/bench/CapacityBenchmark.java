package io.warden.it.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.ZkEnsemble;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Load generator (not a test) for what one gateway holds rather than how fast it turns locks over: each measure starts
 * a fresh gateway (its own JVM, {@code -Xmx} of {@code --heap}) on one 3-server ZooKeeper ensemble.
 * <ul>
 *   <li>{@code keepalives}: {@code --ws-sessions} sessions, each with a keepalive WebSocket that keeps
 *   {@value #WS_WINDOW} heartbeats in flight (the gateway allows 16 unanswered); heartbeats answered per second over
 *   {@code --seconds}, and the gateway's heap after a full GC before and after that window.</li>
 *   <li>{@code sessions}: opens {@code --sessions} sessions (TTL 10 minutes, so that none needs a keepalive meanwhile),
 *   64 calls in flight; the heap after a full GC before and after, so bytes per tracked session.</li>
 *   <li>{@code held}: {@code --held} acquires held open at once ({@code wait_ms} 300 s) on 100 locks that other
 *   sessions hold, every call on its own HTTP connection; the gateway's held-call gauge, its OS threads
 *   ({@code /proc/<pid>/status}) and its heap after a full GC.</li>
 * </ul>
 * The gateway runs with the per-address limits raised (all load comes from one loopback address) and
 * {@code max-sessions-per-gateway} at {@code --sessions}. A fresh gateway takes over the sessions of the one before it,
 * so give each measure a run of its own ({@code --measures sessions}) when their numbers matter together. The acquire rate one cell sustains, and what limits it, is
 * {@link LockBenchmark} with more clients ({@code --uncontended 32,64,128}).
 *
 * <p>Run: {@code mvn -B -q -Pbench -DskipTests package -pl integration-tests -am -Dbench.main=CapacityBenchmark
 * -Dbench.args="--measures keepalives,sessions,held --ws-sessions 10000 --sessions 100000 --held 10000 --heap 512m"}.
 */
public final class CapacityBenchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient METRICS = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    /** Heartbeats each WebSocket keeps in flight. */
    static final int WS_WINDOW = 4;
    /** Session calls in flight while sessions are opened. */
    private static final int OPENING_CONCURRENCY = 64;
    private static final Pattern HEAP_LINE = Pattern.compile("^jvm_memory_used_bytes\\{[^}]*area=\"heap\"[^}]*} ([0-9.eE+]+)$",
            Pattern.MULTILINE);
    private static final Pattern GAUGE = Pattern.compile("^(warden_waiters_pending|warden_sessions_tracked)(?:\\{[^}]*})? ([0-9.eE+]+)$",
            Pattern.MULTILINE);

    private CapacityBenchmark() {
    }

    record Options(List<String> measures, int wsSessions, int sessions, int held, String heap, int seconds, Path out) {
        static Options parse(String[] args) {
            Map<String, String> flags = new LinkedHashMap<>();
            for (int i = 0; i + 1 < args.length; i += 2) {
                if (!args[i].startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument " + args[i]);
                }
                flags.put(args[i].substring(2), args[i + 1]);
            }
            if (args.length % 2 != 0) {
                throw new IllegalArgumentException("every flag takes a value: " + String.join(" ", args));
            }
            List<String> known = List.of("measures", "ws-sessions", "sessions", "held", "heap", "seconds", "out");
            for (String key : flags.keySet()) {
                if (!known.contains(key)) {
                    throw new IllegalArgumentException("unknown flag --" + key + "; known: " + known);
                }
            }
            return new Options(List.of(flags.getOrDefault("measures", "keepalives,sessions,held").split(",")),
                    Integer.parseInt(flags.getOrDefault("ws-sessions", "10000")),
                    Integer.parseInt(flags.getOrDefault("sessions", "100000")),
                    Integer.parseInt(flags.getOrDefault("held", "10000")),
                    flags.getOrDefault("heap", "512m"),
                    Integer.parseInt(flags.getOrDefault("seconds", "10")),
                    Path.of(flags.getOrDefault("out", System.getProperty("warden.it.logs", "target") + "/capacity-results.md")));
        }
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        JavaLauncher launcher = JavaLauncher.forRun("capacity");
        System.out.printf("CapacityBenchmark: %s; child logs in %s; load average %s%n", options, launcher.logDir(),
                LockBenchmark.loadAverage());
        List<String> rows = new ArrayList<>();
        try (ZkEnsemble zk = ZkEnsemble.start(launcher, 3, new ZkEnsemble.Options(1000, true, List.of("-Xms256m", "-Xmx1g")))) {
            zk.awaitQuorum(Duration.ofSeconds(60));
            int gateways = 0;
            for (String measure : options.measures()) {
                GatewayProcess gateway = startGateway(launcher, zk, "gw" + (++gateways), options);
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(30)).build();
                try {
                    String row = switch (measure) {
                        case "keepalives" -> keepalives(http, gateway, options);
                        case "sessions" -> sessions(http, gateway, options);
                        case "held" -> held(http, gateway, options);
                        default -> throw new IllegalArgumentException("--measures " + measure
                                + ": expected a comma list of keepalives, sessions, held");
                    };
                    System.out.println(row);
                    rows.add(row);
                } finally {
                    gateway.close();
                }
            }
        }
        String report = String.format(Locale.ROOT, "Run %s (load average at the end %s): one gateway with -Xmx%s on a "
                        + "3-server ensemble (fsync on), a fresh gateway per measure.%n%n"
                        + "| measure | result | gateway heap after a full GC, before → after | gateway OS threads | "
                        + "gateway CPU | notes |%n|---|---|---|---:|---|---|%n%s%n",
                LocalDateTime.now().withNano(0), LockBenchmark.loadAverage(), options.heap(), String.join("\n", rows));
        System.out.println(report);
        Files.createDirectories(options.out().toAbsolutePath().getParent());
        Files.writeString(options.out(), report, StandardCharsets.UTF_8);
        System.out.println("written to " + options.out().toAbsolutePath());
        System.exit(0);
    }

    private static GatewayProcess startGateway(JavaLauncher launcher, ZkEnsemble zk, String id, Options options) {
        String many = Integer.toString(Math.max(options.sessions(), 4 * options.held()) + 1000);
        GatewayProcess gateway = GatewayProcess.start(launcher, id, zk.connectString(), 10_000,
                List.of("-Xms" + options.heap(), "-Xmx" + options.heap()),
                List.of("--max-sessions-per-gateway", Integer.toString(Math.max(options.sessions(), options.wsSessions() + options.held() + 200)),
                        "--max-sessions-per-principal", many,
                        "--max-requests-per-principal", many,
                        "--max-connections-per-ip", many,
                        "--session-ttl-max-ms", "600000"));
        gateway.awaitReady(Duration.ofSeconds(60));
        return gateway;
    }

    // ------------------------------------------------------------------ keepalives over WebSocket

    private static String keepalives(HttpClient http, GatewayProcess gateway, Options options) throws Exception {
        List<String> sessions = openSessions(http, gateway.baseUri(), options.wsSessions(), "ws");
        AtomicLong answered = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        List<Heartbeats> sockets = new ArrayList<>();
        Semaphore connecting = new Semaphore(OPENING_CONCURRENCY);
        List<CompletableFuture<WebSocket>> connects = new ArrayList<>();
        for (String session : sessions) {
            Heartbeats beats = new Heartbeats(answered, errors, firstError);
            sockets.add(beats);
            connecting.acquire();
            URI uri = URI.create("ws://" + gateway.baseUri().getAuthority() + "/v1/sessions/" + session + "/keepalive");
            connects.add(http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(30)).buildAsync(uri, beats)
                    .whenComplete((ws, e) -> connecting.release()));
        }
        CompletableFuture.allOf(connects.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
        long heapBefore = heapAfterGc(gateway);
        sockets.forEach(Heartbeats::start);
        LockBenchmark.sleep(2000); // warm-up
        double cpu0 = cpuMs(gateway);
        long count0 = answered.get();
        long start = System.nanoTime();
        LockBenchmark.sleep(options.seconds() * 1000L);
        long count1 = answered.get();
        double seconds = (System.nanoTime() - start) / 1e9;
        double cpu1 = cpuMs(gateway);
        sockets.forEach(Heartbeats::stop);
        long heapAfter = heapAfterGc(gateway);
        int threads = threads(gateway);
        for (Heartbeats beats : sockets) {
            beats.close();
        }
        double perSecond = (count1 - count0) / seconds;
        return String.format(Locale.ROOT, "| keepalives over WebSocket, %,d connected sessions | %,.0f heartbeats answered/s "
                        + "| %s → %s | %d | %.1f of 2 cores (%.3f ms per heartbeat) | %d errors%s; %d heartbeats in flight per socket |",
                sessions.size(), perSecond, mib(heapBefore), mib(heapAfter), threads, (cpu1 - cpu0) / 1000 / seconds,
                (cpu1 - cpu0) / Math.max(1, count1 - count0), errors.get(),
                firstError.get() == null ? "" : " (first: " + firstError.get() + ")", WS_WINDOW);
    }

    /** One keepalive WebSocket keeping {@link #WS_WINDOW} heartbeats in flight; sends are chained (one at a time). */
    static final class Heartbeats implements WebSocket.Listener {
        private final AtomicLong answered;
        private final AtomicLong errors;
        private final AtomicReference<String> firstError;
        private volatile WebSocket socket;
        private volatile boolean running;
        private CompletableFuture<WebSocket> sending = CompletableFuture.completedFuture(null);

        Heartbeats(AtomicLong answered, AtomicLong errors, AtomicReference<String> firstError) {
            this.answered = answered;
            this.errors = errors;
            this.firstError = firstError;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            socket = webSocket;
            webSocket.request(1);
        }

        void start() {
            running = true;
            for (int i = 0; i < WS_WINDOW; i++) {
                send();
            }
        }

        void stop() {
            running = false;
        }

        private synchronized void send() {
            WebSocket ws = socket;
            sending = sending.thenCompose(x -> ws.sendText("h", true));
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            if (data.toString().contains("ttl_ms_remaining")) {
                answered.incrementAndGet();
            } else {
                error(data.toString());
            }
            if (running) {
                send();
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            if (running) {
                error("closed " + statusCode + " " + reason);
            }
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            error(error.toString());
        }

        private void error(String what) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, what);
        }

        void close() {
            WebSocket ws = socket;
            if (ws != null) {
                ws.abort();
            }
        }
    }

    // ------------------------------------------------------------------ sessions per heap

    private static String sessions(HttpClient http, GatewayProcess gateway, Options options) throws Exception {
        long heapBefore = heapAfterGc(gateway);
        double trackedBefore = gauges(gateway).getOrDefault("warden_sessions_tracked", 0.0);
        double cpu0 = cpuMs(gateway);
        long start = System.nanoTime();
        List<String> sessions = openSessions(http, gateway.baseUri(), options.sessions(), "s");
        double seconds = (System.nanoTime() - start) / 1e9;
        double cpu1 = cpuMs(gateway);
        long heapAfter = heapAfterGc(gateway);
        double tracked = gauges(gateway).getOrDefault("warden_sessions_tracked", Double.NaN);
        return String.format(Locale.ROOT, "| sessions tracked by one gateway | %,.0f tracked (%,d opened at %,.0f/s) | %s → %s "
                        + "(%,.0f bytes per session) | %d | %.3f ms per open | TTL 10 min, no keepalives during the measure |",
                tracked, sessions.size(), sessions.size() / seconds, mib(heapBefore), mib(heapAfter),
                (heapAfter - heapBefore) / Math.max(1.0, tracked - trackedBefore), threads(gateway),
                (cpu1 - cpu0) / Math.max(1, sessions.size()));
    }

    // ------------------------------------------------------------------ held acquire calls

    private static String held(HttpClient http, GatewayProcess gateway, Options options) throws Exception {
        int locks = 100;
        URI base = gateway.baseUri();
        List<String> holders = openSessions(http, base, locks, "holder");
        for (int i = 0; i < locks; i++) {
            HttpResponse<String> r = post(http, base, "/v1/acquire", "{\"session_id\":\"" + holders.get(i)
                    + "\",\"name\":\"cap/held-" + i + "\",\"wait_ms\":0}").get(30, TimeUnit.SECONDS);
            if (r.statusCode() != 200 || !r.body().contains("GRANTED")) {
                throw new IOException("holder of cap/held-" + i + ": " + r.statusCode() + " " + r.body());
            }
        }
        List<String> waiters = openSessions(http, base, options.held(), "waiter");
        long heapBefore = heapAfterGc(gateway);
        int threadsBefore = threads(gateway);
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < waiters.size(); i++) {
            calls.add(post(http, base, "/v1/acquire", "{\"session_id\":\"" + waiters.get(i) + "\",\"name\":\"cap/held-"
                    + (i % locks) + "\",\"wait_ms\":300000}"));
            if (i % 50 == 49) {
                LockBenchmark.sleep(20); // each call opens a connection: not all in one burst on the listen backlog
            }
        }
        // Until every call is held, or the count stops growing for 10 s (well inside wait_ms: none has timed out yet).
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        double pending = 0;
        long grewAt = System.nanoTime();
        while (System.nanoTime() < deadline && System.nanoTime() - grewAt < TimeUnit.SECONDS.toNanos(10)) {
            double now = gauges(gateway).getOrDefault("warden_waiters_pending", 0.0);
            if (now > pending) {
                pending = now;
                grewAt = System.nanoTime();
            }
            if (pending >= options.held()) {
                break;
            }
            LockBenchmark.sleep(500);
        }
        int threads = threads(gateway);
        long heapAfter = heapAfterGc(gateway);
        long answeredEarly = calls.stream().filter(CompletableFuture::isDone).count();
        // What the calls answered before their wait ran out got: a status, or the client's failure (a refused connection).
        Map<String, Integer> early = new java.util.TreeMap<>();
        for (CompletableFuture<HttpResponse<String>> c : calls) {
            if (c.isDone()) {
                String what;
                try {
                    what = "HTTP " + c.join().statusCode();
                } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
                    Throwable cause = e.getCause() == null ? e : e.getCause();
                    what = cause.getClass().getSimpleName();
                }
                early.merge(what, 1, Integer::sum);
            }
        }
        double cpu = cpuMs(gateway);
        return String.format(Locale.ROOT, "| acquire calls held open on one gateway | %,.0f held (%,d sent, %d answered "
                        + "early%s) | %s → %s (%,.0f bytes per held call) | %d → %d | %.1f s in all | %d locks held by other "
                        + "sessions, %d waiters each, one connection per call |",
                pending, calls.size(), answeredEarly, early.isEmpty() ? "" : ": " + early, mib(heapBefore), mib(heapAfter),
                (heapAfter - heapBefore) / Math.max(1.0, pending), threadsBefore, threads, cpu / 1000, locks,
                options.held() / locks);
    }

    // ------------------------------------------------------------------ helpers

    private static List<String> openSessions(HttpClient http, URI base, int count, String prefix) throws Exception {
        ConcurrentLinkedQueue<String> ids = new ConcurrentLinkedQueue<>();
        AtomicReference<String> failure = new AtomicReference<>();
        Semaphore inFlight = new Semaphore(OPENING_CONCURRENCY);
        for (int i = 0; i < count && failure.get() == null; i++) {
            inFlight.acquire();
            post(http, base, "/v1/sessions", "{\"client_id\":\"" + prefix + "-" + i + "\",\"ttl_ms\":600000}")
                    .whenComplete((r, e) -> {
                        try {
                            if (e != null || r.statusCode() != 201) {
                                failure.compareAndSet(null, e != null ? e.toString() : r.statusCode() + " " + r.body());
                            } else {
                                ids.add(JSON.readTree(r.body()).path("session_id").asText());
                            }
                        } catch (IOException ex) {
                            failure.compareAndSet(null, ex.toString());
                        } finally {
                            inFlight.release();
                        }
                    });
        }
        inFlight.acquire(OPENING_CONCURRENCY);
        inFlight.release(OPENING_CONCURRENCY);
        if (failure.get() != null) {
            throw new IOException("opening sessions stopped after " + ids.size() + " of " + count + ": " + failure.get());
        }
        return new ArrayList<>(ids);
    }

    private static CompletableFuture<HttpResponse<String>> post(HttpClient http, URI base, String path, String json) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofMinutes(5))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    /** The gateway's heap in use after a full collection ({@code jcmd GC.run}), from its own metrics. */
    private static long heapAfterGc(GatewayProcess gateway) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(gateway.process().pid()), "GC.run").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor(60, TimeUnit.SECONDS);
        Matcher m = HEAP_LINE.matcher(metrics(gateway));
        double sum = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(1));
        }
        return (long) sum;
    }

    private static Map<String, Double> gauges(GatewayProcess gateway) throws Exception {
        Map<String, Double> values = new LinkedHashMap<>();
        Matcher m = GAUGE.matcher(metrics(gateway));
        while (m.find()) {
            values.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        return values;
    }

    /** Through a client of its own: the load's client may be saturated. */
    private static String metrics(GatewayProcess gateway) throws Exception {
        return METRICS.send(HttpRequest.newBuilder(gateway.baseUri().resolve("/metrics")).timeout(Duration.ofSeconds(60))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /** The gateway's OS threads ({@code Threads:} of {@code /proc/<pid>/status}). */
    private static int threads(GatewayProcess gateway) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(gateway.process().pid()), "status"))) {
            if (line.startsWith("Threads:")) {
                return Integer.parseInt(line.substring("Threads:".length()).trim());
            }
        }
        return -1;
    }

    private static double cpuMs(GatewayProcess gateway) {
        return ProcessHandle.of(gateway.process().pid()).flatMap(p -> p.info().totalCpuDuration())
                .map(d -> d.toNanos() / 1e6).orElse(0.0);
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }
}
