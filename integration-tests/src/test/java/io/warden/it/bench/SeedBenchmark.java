package io.warden.it.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.ZkEnsemble;
import org.HdrHistogram.Histogram;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Load generator (not a test) for the seed design's sizing example: "70k ops/sec workload (example 100k clients, 5 locks,
 * TTL=10s)", "&lt;10ms acquire/release, &lt;50ms P99". One gateway (its own JVM) on a 3-server ZooKeeper ensemble (fsync
 * on), the load in this JVM. Two parts, in one run:
 * <ol>
 *   <li><b>refusals</b>: each of {@code --locks} locks held by a session of its own; {@code --refusal-clients} threads
 *   (32) each loop a try-lock ({@code wait_ms} 0, no {@code request_id}) of one of them over a keep-alive HTTP/1.1
 *   socket, against the same number of threads each looping Curator's {@code InterProcessMutex.acquire(0, ms)} on locks
 *   held the same way (one shared {@code CuratorFramework}), alternating, {@code --rounds} rounds of {@code --seconds};
 *   refused tries per second, p50/p99, CPU and ZooKeeper requests (the servers' own count) per refused try.</li>
 *   <li><b>seed</b>: {@code --sessions} sessions at TTL {@code --ttl-ms}, each kept alive every third of its TTL: the
 *   first {@code --ws-sessions} over their keepalive WebSocket, the others by {@code POST .../keepalive} (at most
 *   {@value #KEEPALIVES_IN_FLIGHT} in flight; a keepalive that finds no room is counted as late, not sent); meanwhile
 *   {@code --clients} threads loop try → hold {@code --hold-ms} → release on the {@code --locks} lock names, each with a
 *   session of its own for every try, at most {@code --rate} tries per second in all (0: as fast as they go). Reported
 *   per kind (keepalive, refused try, grant, release): operations per second, p50 and p99; and for all of them together
 *   ZooKeeper requests and gateway CPU per operation.</li>
 * </ol>
 * What one machine can drive is bounded: the load generator and the gateway each have at most the descriptor limit
 * ({@code ulimit -Hn}) of sockets, so {@code --ws-sessions} must stay below it; the rest of the sessions use HTTP.
 * {@code --gateway-jfr FILE} records the gateway's Java Flight Recorder profile ({@code settings=profile}) into FILE,
 * written as the gateway exits at the end of the run ({@code jfr print --events jdk.ExecutionSample FILE}).
 *
 * <p>Run: {@code mvn -B -q -Pbench -DskipTests package -pl integration-tests -am -Dbench.main=SeedBenchmark
 * -Dbench.args="--sessions 100000 --ws-sessions 10000"}.
 */
public final class SeedBenchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** HTTP keepalives in flight at most; past it a due keepalive is counted late. */
    static final int KEEPALIVES_IN_FLIGHT = 256;
    /** Session opens in flight. */
    private static final int OPENING = 64;
    private static final long MAX_MICROS = 60_000_000L;

    private SeedBenchmark() {
    }

    record Options(int sessions, int wsSessions, int locks, long ttlMs, long holdMs, int clients, int rate,
                   int refusalClients, int rounds, int seconds, int warmupS, String heap, String parts, Path out,
                   Path gatewayJfr) {
        static Options parse(String[] args) {
            Map<String, String> flags = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i += 2) {
                if (!args[i].startsWith("--") || i + 1 >= args.length) {
                    throw new IllegalArgumentException("flags are --name value pairs: " + String.join(" ", args));
                }
                flags.put(args[i].substring(2), args[i + 1]);
            }
            List<String> known = List.of("sessions", "ws-sessions", "locks", "ttl-ms", "hold-ms", "clients", "rate",
                    "refusal-clients", "rounds", "seconds", "warmup-s", "heap", "parts", "out", "gateway-jfr");
            for (String key : flags.keySet()) {
                if (!known.contains(key)) {
                    throw new IllegalArgumentException("unknown flag --" + key + "; known: " + known);
                }
            }
            return new Options(Integer.parseInt(flags.getOrDefault("sessions", "100000")),
                    Integer.parseInt(flags.getOrDefault("ws-sessions", "10000")),
                    Integer.parseInt(flags.getOrDefault("locks", "5")),
                    Long.parseLong(flags.getOrDefault("ttl-ms", "10000")),
                    Long.parseLong(flags.getOrDefault("hold-ms", "20")),
                    Integer.parseInt(flags.getOrDefault("clients", "64")),
                    Integer.parseInt(flags.getOrDefault("rate", "0")),
                    Integer.parseInt(flags.getOrDefault("refusal-clients", "32")),
                    Integer.parseInt(flags.getOrDefault("rounds", "2")),
                    Integer.parseInt(flags.getOrDefault("seconds", "10")),
                    Integer.parseInt(flags.getOrDefault("warmup-s", "3")),
                    flags.getOrDefault("heap", "1g"),
                    flags.getOrDefault("parts", "refusals,seed"),
                    Path.of(flags.getOrDefault("out", System.getProperty("warden.it.logs", "target") + "/seed-results.md")),
                    flags.containsKey("gateway-jfr") ? Path.of(flags.get("gateway-jfr")).toAbsolutePath() : null);
        }
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        if (options.wsSessions() > options.sessions()) {
            throw new IllegalArgumentException("--ws-sessions " + options.wsSessions() + " > --sessions " + options.sessions());
        }
        JavaLauncher launcher = JavaLauncher.forRun("seed");
        System.out.printf("SeedBenchmark: %s; child logs in %s; load average %s%n", options, launcher.logDir(),
                LockBenchmark.loadAverage());
        StringBuilder report = new StringBuilder();
        try (ZkEnsemble zk = ZkEnsemble.start(launcher, 3, new ZkEnsemble.Options(1000, true, List.of("-Xms256m", "-Xmx1g")))) {
            zk.awaitQuorum(Duration.ofSeconds(60));
            String many = Integer.toString(options.sessions() + 10_000);
            List<String> jvm = new java.util.ArrayList<>(List.of("-Xms" + options.heap(), "-Xmx" + options.heap()));
            if (options.gatewayJfr() != null) {
                // The gateway's own profile (its process only), written when it exits: where its CPU goes per operation.
                jvm.add("-XX:StartFlightRecording=settings=profile,filename=" + options.gatewayJfr());
            }
            GatewayProcess gateway = GatewayProcess.start(launcher, "gw1", zk.connectString(), 10_000, jvm,
                    List.of("--max-sessions-per-gateway", many, "--max-sessions-per-principal", many,
                            "--max-requests-per-principal", many, "--max-connections-per-ip", many));
            gateway.awaitReady(Duration.ofSeconds(60));
            LockBenchmark.CpuMeter cpu = new LockBenchmark.CpuMeter(zk, gateway);
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(30)).build();
            try {
                if (options.parts().contains("refusals")) {
                    report.append(refusals(http, gateway, zk, cpu, options));
                }
                if (options.parts().contains("seed")) {
                    report.append(seed(http, gateway, cpu, options));
                }
            } finally {
                if (options.gatewayJfr() != null) {
                    gateway.terminate(); // a clean exit writes the recording (drain takes a few seconds)
                    gateway.process().awaitExit(Duration.ofSeconds(60));
                }
                gateway.close();
            }
        }
        String text = String.format(Locale.ROOT, "Run %s (load average at the end %s): one gateway with -Xmx%s on a "
                + "3-server ensemble (fsync on), the load generator in its own JVM.%n%n%s", LocalDateTime.now().withNano(0),
                LockBenchmark.loadAverage(), options.heap(), report);
        System.out.println(text);
        Files.createDirectories(options.out().toAbsolutePath().getParent());
        Files.writeString(options.out(), text, StandardCharsets.UTF_8);
        System.out.println("written to " + options.out().toAbsolutePath());
        System.exit(0);
    }

    // ------------------------------------------------------------------ refused tries: Warden against Curator

    private static String refusals(HttpClient http, GatewayProcess gateway, ZkEnsemble zk, LockBenchmark.CpuMeter cpu,
                                   Options options) throws Exception {
        URI base = gateway.baseUri();
        List<String> lockNames = new ArrayList<>();
        for (int i = 0; i < options.locks(); i++) {
            lockNames.add("refuse/lock-" + i);
            String holder = openSession(http, base, "holder-" + i, 600_000);
            JsonNode r = post(http, base, "/v1/acquire", "{\"session_id\":\"" + holder + "\",\"name\":\"refuse/lock-" + i
                    + "\",\"wait_ms\":0}");
            if (!"GRANTED".equals(r.path("status").asText())) {
                throw new IOException("the holder of refuse/lock-" + i + " was not granted: " + r);
            }
        }
        List<String> triers = new ArrayList<>();
        for (int i = 0; i < options.refusalClients(); i++) {
            triers.add(openSession(http, base, "trier-" + i, 600_000));
        }
        // Sessions of the triers are kept alive by a keepalive every few seconds while the rounds run.
        ScheduledExecutorService keeper = Executors.newSingleThreadScheduledExecutor();
        keeper.scheduleAtFixedRate(() -> triers.forEach(s -> http.sendAsync(HttpRequest.newBuilder(base.resolve(
                "/v1/sessions/" + s + "/keepalive")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.discarding())), 5, 5, TimeUnit.SECONDS);

        CuratorFramework curator = LockBenchmark.newCurator(zk.connectString());
        CuratorFramework holderCurator = LockBenchmark.newCurator(zk.connectString());
        List<InterProcessMutex> held = new ArrayList<>();
        for (int i = 0; i < options.locks(); i++) {
            InterProcessMutex m = new InterProcessMutex(holderCurator, "/refuse/lock-" + i);
            if (!m.acquire(30, TimeUnit.SECONDS)) {
                throw new IOException("Curator's holder of /refuse/lock-" + i + " was not granted");
            }
            held.add(m);
        }
        String host = base.getHost();
        int port = base.getPort();
        List<String> rows = new ArrayList<>();
        try {
            for (int round = 1; round <= options.rounds(); round++) {
                Measured w = measure(options, cpu, index -> {
                    BenchHttp client = BenchHttp.raw(host, port);
                    String body = "{\"session_id\":\"" + triers.get(index) + "\",\"name\":\"" + lockNames.get(index % lockNames.size())
                            + "\",\"wait_ms\":0}";
                    return () -> {
                        BenchHttp.Response r = client.post("/v1/acquire", body);
                        if (r.status() != 200 || !r.body().contains("TIMED_OUT")) {
                            throw new IOException("a try of a held lock answered " + r.status() + " " + r.body());
                        }
                    };
                });
                Measured c = measure(options, cpu, index -> {
                    InterProcessMutex mutex = new InterProcessMutex(curator, "/refuse/lock-" + index % options.locks());
                    return () -> {
                        if (mutex.acquire(0, TimeUnit.MILLISECONDS)) {
                            mutex.release();
                            throw new IOException("Curator's try of a held lock was granted");
                        }
                    };
                });
                rows.add(String.format(Locale.ROOT, "| %d | %,.0f | %.2f / %.2f | %.2f | %.3f | %,.0f | %.2f / %.2f | %.2f | %.3f | **%.2f** | %d / %d |",
                        round, w.perSecond(), w.p50Ms(), w.p99Ms(), w.perOp("zkRequests"), w.perOp("gateway"),
                        c.perSecond(), c.p50Ms(), c.p99Ms(), c.perOp("zkRequests"), c.perOp("zk"),
                        w.perSecond() / c.perSecond(), w.errors(), c.errors()));
            }
        } finally {
            keeper.shutdownNow();
            for (InterProcessMutex m : held) {
                m.release();
            }
            holderCurator.close();
            curator.close();
        }
        return String.format(Locale.ROOT, "Refused tries: %d locks each held by another session (Curator: another "
                        + "client); %d threads each trying one of them in a loop, Warden (`POST /v1/acquire`, `wait_ms` 0, "
                        + "no `request_id`, one keep-alive socket per thread) and Curator (`InterProcessMutex.acquire(0, ms)`, "
                        + "one shared `CuratorFramework`) alternating, %d s warm-up + %d s per round. CPU in ms per refused "
                        + "try; ZooKeeper requests are the servers' own count per refused try.%n%n"
                        + "| round | Warden refused/s | p50 / p99 ms | ZK req per try | gateway CPU ms | Curator refused/s | "
                        + "p50 / p99 ms | ZK req per try | ZooKeeper CPU ms | W/C | errors W / C |%n"
                        + "|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---|%n%s%n%n",
                options.locks(), options.refusalClients(), options.warmupS(), options.seconds(), String.join("\n", rows));
    }

    /** One operation of a measured loop; throws when the answer was not the expected one. */
    @FunctionalInterface
    interface Call {
        void run() throws Exception;
    }

    @FunctionalInterface
    interface CallFactory {
        Call make(int index) throws Exception;
    }

    record Measured(long ops, double seconds, Histogram latency, long errors, Map<String, Double> cpuDelta) {
        double perSecond() {
            return ops / seconds;
        }

        double p50Ms() {
            return latency.getValueAtPercentile(50) / 1000.0;
        }

        double p99Ms() {
            return latency.getValueAtPercentile(99) / 1000.0;
        }

        double perOp(String key) {
            return ops == 0 ? Double.NaN : cpuDelta.getOrDefault(key, Double.NaN) / ops;
        }
    }

    /** {@code --refusal-clients} threads looping their call: a warm-up, then {@code --seconds} measured. */
    private static Measured measure(Options options, LockBenchmark.CpuMeter cpu, CallFactory factory) throws Exception {
        int threads = options.refusalClients();
        AtomicLong phase = new AtomicLong(); // 0 warm-up, 1 measuring, 2 stop
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        Histogram[] histograms = new Histogram[threads];
        long[] ops = new long[threads];
        CountDownLatch done = new CountDownLatch(threads);
        for (int i = 0; i < threads; i++) {
            int index = i;
            histograms[i] = new Histogram(MAX_MICROS, 3);
            Call call = factory.make(i);
            Thread t = new Thread(() -> {
                try {
                    while (phase.get() < 2) {
                        long start = System.nanoTime();
                        try {
                            call.run();
                        } catch (Exception e) {
                            errors.incrementAndGet();
                            firstError.compareAndSet(null, e.toString());
                            LockBenchmark.sleep(10);
                            continue;
                        }
                        if (phase.get() == 1) {
                            histograms[index].recordValue(Math.max(1, Math.min((System.nanoTime() - start) / 1000, MAX_MICROS)));
                            ops[index]++;
                        }
                    }
                } finally {
                    done.countDown();
                }
            }, "seed-refusal-" + i);
            t.setDaemon(true);
            t.start();
        }
        LockBenchmark.sleep(options.warmupS() * 1000L);
        Map<String, Double> cpu0 = cpu.snapshot();
        long start = System.nanoTime();
        phase.set(1);
        LockBenchmark.sleep(options.seconds() * 1000L);
        phase.set(2);
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Double> cpu1 = cpu.snapshot();
        done.await(60, TimeUnit.SECONDS);
        Histogram merged = new Histogram(MAX_MICROS, 3);
        long total = 0;
        for (int i = 0; i < threads; i++) {
            merged.add(histograms[i]);
            total += ops[i];
        }
        if (firstError.get() != null) {
            System.out.println("first error: " + firstError.get());
        }
        return new Measured(total, seconds, merged, errors.get(), delta(cpu0, cpu1));
    }

    private static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> d = new LinkedHashMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0.0)));
        return d;
    }

    // ------------------------------------------------------------------ the seed's workload

    /** Per kind of operation: a count and a latency histogram, shared by the threads that record it. */
    static final class Kind {
        final String name;
        final AtomicLong count = new AtomicLong();
        private final Histogram latency = new Histogram(MAX_MICROS, 3);
        volatile boolean measuring;

        Kind(String name) {
            this.name = name;
        }

        void record(long startNanos) {
            if (measuring) {
                count.incrementAndGet();
                long micros = Math.max(1, Math.min((System.nanoTime() - startNanos) / 1000, MAX_MICROS));
                synchronized (latency) {
                    latency.recordValue(micros);
                }
            }
        }

        double percentileMs(double p) {
            synchronized (latency) {
                return latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(p) / 1000.0;
            }
        }
    }

    private static String seed(HttpClient http, GatewayProcess gateway, LockBenchmark.CpuMeter cpu, Options options)
            throws Exception {
        URI base = gateway.baseUri();
        Kind keepalive = new Kind("keepalive");
        Kind refused = new Kind("refused try");
        Kind grant = new Kind("grant");
        Kind release = new Kind("release");
        List<Kind> kinds = List.of(keepalive, refused, grant, release);
        AtomicLong late = new AtomicLong();
        AtomicLong expired = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();

        // Sessions, kept alive from the moment each is opened: an opening of 100,000 takes minutes, past the TTL.
        String[] sessions = new String[options.sessions()];
        WebSocket[] sockets = new WebSocket[options.wsSessions()];
        @SuppressWarnings("unchecked")
        ConcurrentLinkedQueue<Long>[] sent = new ConcurrentLinkedQueue[options.wsSessions()];
        AtomicLong opened = new AtomicLong();
        Semaphore httpKeepalives = new Semaphore(KEEPALIVES_IN_FLIGHT);
        long intervalMs = Math.max(1, options.ttlMs() / 3);
        int buckets = (int) Math.max(1, intervalMs / 100);
        AtomicLong tick = new AtomicLong();
        ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "seed-keepalives"));
        pacer.scheduleAtFixedRate(() -> {
            int bucket = (int) (tick.getAndIncrement() % buckets);
            long known = opened.get();
            for (int i = bucket; i < known; i += buckets) {
                String s = sessions[i];
                if (s == null) {
                    continue;
                }
                if (i < sockets.length) {
                    WebSocket ws = sockets[i];
                    if (ws != null && !ws.isOutputClosed()) {
                        sent[i].add(System.nanoTime());
                        ws.sendText("h", true);
                    }
                    continue;
                }
                if (!httpKeepalives.tryAcquire()) {
                    late.incrementAndGet();
                    continue;
                }
                long start = System.nanoTime();
                http.sendAsync(HttpRequest.newBuilder(base.resolve("/v1/sessions/" + s + "/keepalive"))
                        .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.noBody()).build(),
                        HttpResponse.BodyHandlers.discarding()).whenComplete((r, e) -> {
                            httpKeepalives.release();
                            if (e != null) {
                                errors.incrementAndGet();
                                firstError.compareAndSet(null, "keepalive: " + e);
                            } else if (r.statusCode() == 404) {
                                expired.incrementAndGet();
                            } else if (r.statusCode() != 200) {
                                errors.incrementAndGet();
                                firstError.compareAndSet(null, "keepalive: " + r.statusCode());
                            } else {
                                keepalive.record(start);
                            }
                        });
            }
        }, 100, 100, TimeUnit.MILLISECONDS);

        long openStart = System.nanoTime();
        Semaphore opening = new Semaphore(OPENING);
        AtomicReference<String> openFailure = new AtomicReference<>();
        for (int i = 0; i < options.sessions() && openFailure.get() == null; i++) {
            int index = i;
            opening.acquire();
            HttpRequest open = HttpRequest.newBuilder(base.resolve("/v1/sessions")).timeout(Duration.ofMinutes(2))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                            "{\"client_id\":\"seed-" + i + "\",\"ttl_ms\":" + options.ttlMs() + "}")).build();
            http.sendAsync(open, HttpResponse.BodyHandlers.ofString()).thenCompose(r -> {
                if (r.statusCode() != 201) {
                    throw new IllegalStateException("open: " + r.statusCode() + " " + r.body());
                }
                String id;
                try {
                    id = JSON.readTree(r.body()).path("session_id").asText();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
                if (index >= sockets.length) {
                    sessions[index] = id;
                    return CompletableFuture.completedFuture(null);
                }
                sent[index] = new ConcurrentLinkedQueue<>();
                URI uri = URI.create("ws://" + base.getAuthority() + "/v1/sessions/" + id + "/keepalive");
                return http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(30))
                        .buildAsync(uri, new Heartbeats(sent[index], keepalive, expired, errors, firstError))
                        .thenAccept(ws -> {
                            sockets[index] = ws;
                            sessions[index] = id;
                        });
            }).whenComplete((v, e) -> {
                if (e != null) {
                    openFailure.compareAndSet(null, e.toString());
                }
                opening.release();
            });
            opened.accumulateAndGet(i + 1, Math::max);
        }
        opening.acquire(OPENING);
        opening.release(OPENING);
        double openSeconds = (System.nanoTime() - openStart) / 1e9;
        if (openFailure.get() != null) {
            pacer.shutdownNow();
            throw new IOException("opening sessions stopped at " + opened.get() + ": " + openFailure.get());
        }

        // The try loops: each try takes the next session of the thread's share, so no session holds twice.
        AtomicBoolean running = new AtomicBoolean(true);
        long perThreadNanos = options.rate() == 0 ? 0 : TimeUnit.SECONDS.toNanos(options.clients()) / options.rate();
        CountDownLatch done = new CountDownLatch(options.clients());
        for (int t = 0; t < options.clients(); t++) {
            int thread = t;
            Thread loop = new Thread(() -> {
                BenchHttp client = BenchHttp.raw(base.getHost(), base.getPort());
                int next = thread;
                long due = System.nanoTime();
                try {
                    while (running.get()) {
                        if (perThreadNanos > 0) {
                            due += perThreadNanos;
                            long wait = due - System.nanoTime();
                            if (wait > 0) {
                                LockBenchmark.sleep(TimeUnit.NANOSECONDS.toMillis(wait));
                            }
                        }
                        String session = sessions[next];
                        next += options.clients();
                        if (next >= sessions.length) {
                            next = thread;
                        }
                        String name = "seed/lock-" + Math.floorMod(next * 31 + thread, options.locks());
                        try {
                            long start = System.nanoTime();
                            BenchHttp.Response r = client.post("/v1/acquire", "{\"session_id\":\"" + session
                                    + "\",\"name\":\"" + name + "\",\"wait_ms\":0}");
                            if (r.status() == 404) {
                                expired.incrementAndGet();
                                continue;
                            }
                            JsonNode answer = r.status() == 200 ? JSON.readTree(r.body()) : null;
                            if (answer == null) {
                                throw new IOException("acquire: " + r.status() + " " + r.body());
                            }
                            if (!"GRANTED".equals(answer.path("status").asText())) {
                                refused.record(start);
                                continue;
                            }
                            grant.record(start);
                            LockBenchmark.sleep(options.holdMs());
                            long releaseStart = System.nanoTime();
                            BenchHttp.Response rel = client.post("/v1/release", "{\"session_id\":\"" + session
                                    + "\",\"name\":\"" + name + "\",\"token\":" + answer.path("token").asLong() + "}");
                            if (rel.status() != 200) {
                                throw new IOException("release: " + rel.status() + " " + rel.body());
                            }
                            release.record(releaseStart);
                        } catch (IOException | RuntimeException e) {
                            errors.incrementAndGet();
                            firstError.compareAndSet(null, e.toString());
                            LockBenchmark.sleep(10);
                        }
                    }
                } finally {
                    client.close();
                    done.countDown();
                }
            }, "seed-client-" + t);
            loop.setDaemon(true);
            loop.start();
        }
        LockBenchmark.sleep(Math.max(options.warmupS() * 1000L, intervalMs)); // every session has had a keepalive
        long expiredBefore = expired.get();
        long lateBefore = late.get();
        Map<String, Double> cpu0 = cpu.snapshot();
        long start = System.nanoTime();
        kinds.forEach(k -> k.measuring = true);
        LockBenchmark.sleep(options.seconds() * 1000L);
        kinds.forEach(k -> k.measuring = false);
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Double> d = delta(cpu0, cpu.snapshot());
        running.set(false);
        done.await(60, TimeUnit.SECONDS);
        pacer.shutdownNow();
        for (WebSocket ws : sockets) {
            if (ws != null) {
                ws.abort();
            }
        }

        long all = kinds.stream().mapToLong(k -> k.count.get()).sum();
        StringBuilder rows = new StringBuilder();
        for (Kind k : kinds) {
            rows.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f | %.2f |%n", k.name, k.count.get() / seconds,
                    k.percentileMs(50), k.percentileMs(99)));
        }
        return String.format(Locale.ROOT, "The seed's workload: %,d sessions at TTL %d ms (%,d kept alive over their "
                        + "WebSocket, the others by `POST .../keepalive`, each every %d ms), opened in %.0f s; %d client threads "
                        + "looping try (`wait_ms` 0) → hold %d ms → release on %d lock names%s; %d s warm-up (at least one "
                        + "keepalive interval) + %.0f s measured.%n%n"
                        + "| kind | operations/s | p50 ms | p99 ms |%n|---|---:|---:|---:|%n%s"
                        + "| all | %,.0f | | |%n%n"
                        + "Per operation, all kinds together: %.3f ZooKeeper requests (the servers' own count), gateway CPU "
                        + "%.4f ms, ZooKeeper CPU %.4f ms (3 servers), load generator CPU %.4f ms. While measured: %,d "
                        + "HTTP keepalives not sent (more than %d in flight: the load generator's limit), %,d sessions "
                        + "found expired, %d errors%s.%n%n",
                options.sessions(), options.ttlMs(), options.wsSessions(), intervalMs, openSeconds, options.clients(),
                options.holdMs(), options.locks(), options.rate() == 0 ? ", as fast as they go"
                        : String.format(Locale.ROOT, ", at most %,d tries/s", options.rate()),
                options.warmupS(), seconds, rows, all / seconds,
                d.getOrDefault("zkRequests", 0.0) / Math.max(1, all), d.getOrDefault("gateway", 0.0) / Math.max(1, all),
                d.getOrDefault("zk", 0.0) / Math.max(1, all), d.getOrDefault("client", 0.0) / Math.max(1, all),
                late.get() - lateBefore, KEEPALIVES_IN_FLIGHT, expired.get() - expiredBefore, errors.get(),
                firstError.get() == null ? "" : " (first: " + firstError.get() + ")");
    }

    /** One session's keepalive WebSocket: each reply is matched with the oldest heartbeat sent and not answered. */
    static final class Heartbeats implements WebSocket.Listener {
        private final ConcurrentLinkedQueue<Long> sent;
        private final Kind keepalive;
        private final AtomicLong expired;
        private final AtomicLong errors;
        private final AtomicReference<String> firstError;

        Heartbeats(ConcurrentLinkedQueue<Long> sent, Kind keepalive, AtomicLong expired, AtomicLong errors,
                   AtomicReference<String> firstError) {
            this.sent = sent;
            this.keepalive = keepalive;
            this.expired = expired;
            this.errors = errors;
            this.firstError = firstError;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            Long start = sent.poll();
            if (start != null && data.toString().contains("ttl_ms_remaining")) {
                keepalive.record(start);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            if (statusCode == 4404) {
                expired.incrementAndGet();
            }
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, "websocket: " + error);
        }
    }

    // ------------------------------------------------------------------ helpers

    private static String openSession(HttpClient http, URI base, String clientId, long ttlMs) throws Exception {
        return post(http, base, "/v1/sessions", "{\"client_id\":\"" + clientId + "\",\"ttl_ms\":" + ttlMs + "}")
                .path("session_id").asText();
    }

    private static JsonNode post(HttpClient http, URI base, String path, String json) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IOException(path + ": " + r.statusCode() + " " + r.body());
        }
        return JSON.readTree(r.body());
    }
}
