package io.warden.it.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.FencedLock;
import io.warden.client.Hold;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.LoopbackPorts;
import io.warden.it.support.ZkEnsemble;
import org.HdrHistogram.Histogram;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Load generator (not a test): Warden over HTTP against raw Curator {@link InterProcessMutex}, in one run, on the
 * same 3-server ZooKeeper ensemble; the ZooKeeper servers and the gateway each run in their own JVM, as deployed.
 *
 * <p>Scenarios: uncontended acquire+release with 1, 8 and 32 clients on distinct names; 16 clients on one name
 * (throughput = handoffs/s). Each scenario runs every Warden client kind, then Curator, and again for each round
 * (alternating, so that other load on the machine falls on all alike): warm-up, then a fixed measurement window; the
 * latency of each acquire+release pair goes into an HdrHistogram, merged over the rounds. The Curator clients share
 * one {@code CuratorFramework} (one ZooKeeper connection, as the gateway has) unless {@code --curator-per-client}.
 *
 * <p>Warden client kinds ({@code --http}, a comma list, each measured against the same Curator runs):
 * <ul>
 *   <li>{@code raw}: each client thread opens its own session and loops {@code POST /v1/acquire} / {@code /v1/release}
 *   over one keep-alive HTTP/1.1 socket of its own, with a minimal blocking client ({@link BenchHttp}): what the
 *   gateway can do with the least client-side cost.</li>
 *   <li>{@code jdk}: the same calls through one shared {@code java.net.http.HttpClient}.</li>
 *   <li>{@code sdk}: the Java SDK, as applications use it: one {@code io.warden.client.WardenClient} (one session, its
 *   heartbeats and its watch of its own holds) shared by all client threads, each looping
 *   {@code lock.acquire(30 s)} / {@code hold.release()} through the public API; with {@code --sdk-per-client} each
 *   thread has a {@code WardenClient} (and so a session) of its own.</li>
 * </ul>
 *
 * <p>Every row also reports the cost of one pair: the CPU time the gateway JVM, each ZooKeeper server JVM and this
 * load generator's JVM spent in the measurement window (utime + stime of {@code /proc/<pid>/stat}, through
 * {@link ProcessHandle.Info#totalCpuDuration()}), and the requests the ZooKeeper servers received ({@code mntr}'s
 * {@code zk_packets_received}), each divided by the pairs. Prints markdown tables and writes them to {@code --out}.
 *
 * <p>Run: {@code mvn -B -q -Pbench -DskipTests package -pl integration-tests -am -Dbench.args="..."} (see
 * BENCHMARKS.md). Flags: {@code --warmup-s 3 --measure-s 6 --rounds 2 --uncontended 1,8,32 --contended 16
 * --http raw[,jdk][,sdk] --sdk-per-client --fsync yes|no --systems warden,curator --curator-per-client --out FILE
 * --jfr DIR}. {@code --jfr DIR} records a JFR profile ({@code settings=profile}) of this JVM and, for Warden runs, of
 * the gateway (through {@code jcmd}) over each run's warm-up and measurement, as
 * {@code DIR/<system>-<scenario>-<clients>-r<round>-{client,gateway}.jfr}; profiling costs CPU, so take numbers from
 * runs without it.
 */
public final class LockBenchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> CLIENT_KINDS = List.of("raw", "jdk", "sdk");

    private LockBenchmark() {
    }

    record Options(int warmupS, int measureS, int rounds, List<Integer> uncontended, int contended, List<String> http,
                   boolean sdkPerClient, boolean fsync, List<String> systems, boolean curatorPerClient, Path out,
                   Path jfr) {
        static Options parse(String[] args) {
            Map<String, String> flags = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (!arg.startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument " + arg);
                }
                boolean hasValue = i + 1 < args.length && !args[i + 1].startsWith("--");
                flags.put(arg.substring(2), hasValue ? args[++i] : "true");
            }
            List<String> known = List.of("warmup-s", "measure-s", "rounds", "uncontended", "contended", "http",
                    "sdk-per-client", "fsync", "systems", "curator-per-client", "out", "jfr");
            for (String key : flags.keySet()) {
                if (!known.contains(key)) {
                    throw new IllegalArgumentException("unknown flag --" + key + "; known: " + known);
                }
            }
            List<String> http = List.of(flags.getOrDefault("http", "raw").split(","));
            for (String kind : http) {
                if (!CLIENT_KINDS.contains(kind)) {
                    throw new IllegalArgumentException("--http " + kind + ": expected a comma list of " + CLIENT_KINDS);
                }
            }
            return new Options(
                    Integer.parseInt(flags.getOrDefault("warmup-s", "3")),
                    Integer.parseInt(flags.getOrDefault("measure-s", "6")),
                    Integer.parseInt(flags.getOrDefault("rounds", "2")),
                    ints(flags.getOrDefault("uncontended", "1,8,32")),
                    Integer.parseInt(flags.getOrDefault("contended", "16")),
                    http,
                    Boolean.parseBoolean(flags.getOrDefault("sdk-per-client", "false")),
                    !flags.getOrDefault("fsync", "yes").equals("no"),
                    List.of(flags.getOrDefault("systems", "warden,curator").split(",")),
                    Boolean.parseBoolean(flags.getOrDefault("curator-per-client", "false")),
                    Path.of(flags.getOrDefault("out", System.getProperty("warden.it.logs", "target") + "/bench-results.md")),
                    flags.containsKey("jfr") ? Path.of(flags.get("jfr")) : null);
        }

        private static List<Integer> ints(String csv) {
            List<Integer> values = new ArrayList<>();
            for (String part : csv.split(",")) {
                if (!part.isBlank()) {
                    values.add(Integer.parseInt(part.trim()));
                }
            }
            return values;
        }
    }

    /** One client of one system, confined to its thread. */
    interface LockClient extends AutoCloseable {
        void acquire() throws Exception;

        void release() throws Exception;

        @Override
        void close();
    }

    /** A system under test: makes clients on lock names. */
    interface Target {
        /** {@code curator}, or {@code warden-<kind>}. */
        String name();

        LockClient client(String lockName, int index) throws Exception;

        /** After a run's clients are closed: ends what they shared. */
        default void endRun() {
        }

        default boolean isWarden() {
            return name().startsWith("warden");
        }
    }

    record Result(String system, String scenario, int clients, long ops, double seconds, Histogram latencyUs,
                  long errors, String firstError, Map<String, Double> cpuMsPerOp) {
        /** Both measurements as one: ops and time add up, histograms merge, CPU per op is weighted by ops. */
        Result plus(Result other) {
            Histogram histogram = latencyUs.copy();
            histogram.add(other.latencyUs);
            long total = ops + other.ops;
            Map<String, Double> cpu = new LinkedHashMap<>();
            for (String key : cpuMsPerOp.keySet()) {
                double mine = cpuMsPerOp.get(key) * ops;
                double theirs = other.cpuMsPerOp.getOrDefault(key, 0.0) * other.ops;
                cpu.put(key, total == 0 ? Double.NaN : (mine + theirs) / total);
            }
            return new Result(system, scenario, clients, total, seconds + other.seconds, histogram, errors + other.errors,
                    firstError != null ? firstError : other.firstError, cpu);
        }

        double throughput() {
            return ops / seconds;
        }

        double p50Ms() {
            return latencyUs.getTotalCount() == 0 ? Double.NaN : latencyUs.getValueAtPercentile(50) / 1000.0;
        }

        double p99Ms() {
            return latencyUs.getTotalCount() == 0 ? Double.NaN : latencyUs.getValueAtPercentile(99) / 1000.0;
        }
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        JavaLauncher launcher = JavaLauncher.forRun("bench");
        System.out.printf("LockBenchmark: %s; child logs in %s; load average %s%n", options, launcher.logDir(),
                loadAverage());
        ZkEnsemble.Options zkOptions = new ZkEnsemble.Options(1000, options.fsync(),
                List.of("-Xms256m", "-Xmx512m"));
        List<Result> results = new ArrayList<>();
        String idle = "";
        try (ZkEnsemble zk = ZkEnsemble.start(launcher, 3, zkOptions)) {
            zk.awaitQuorum(Duration.ofSeconds(60));
            GatewayProcess gateway = null;
            HttpClient jdkHttp = null;
            CuratorFramework shared = null;
            try {
                List<Target> targets = new ArrayList<>();
                if (options.systems().contains("warden")) {
                    gateway = GatewayProcess.start(launcher, "gw1", zk.connectString(), 10_000,
                            List.of("-Xms256m", "-Xmx1g"), List.of());
                    gateway.awaitReady(Duration.ofSeconds(60));
                    jdkHttp = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                    for (String kind : options.http()) {
                        targets.add(kind.equals("sdk") ? new SdkTarget(gateway.baseUri(), options.sdkPerClient())
                                : new WardenTarget(gateway.baseUri(), kind, jdkHttp));
                    }
                }
                if (options.systems().contains("curator")) {
                    shared = options.curatorPerClient() ? null : newCurator(zk.connectString());
                    targets.add(new CuratorTarget(zk.connectString(), shared));
                }
                CpuMeter cpu = new CpuMeter(zk, gateway);
                Profiler profiler = new Profiler(options.jfr(), gateway);
                idle = idleCost(cpu);

                // JIT warm-up of everything on a throwaway scenario, not reported.
                for (Target target : targets) {
                    run(target, "warm-up", 16, i -> "bench/warmup-" + i, options.warmupS(), Math.max(5, 2 * options.warmupS()),
                            cpu, Profiler.OFF, "");
                }
                int scenario = 0;
                for (int clients : options.uncontended()) {
                    scenario++;
                    int n = scenario;
                    results.addAll(rounds(targets, options, "uncontended", clients,
                            (round, i) -> "bench/u" + n + "-r" + round + "-" + i, cpu, profiler));
                }
                if (options.contended() > 0) {
                    results.addAll(rounds(targets, options, "one name", options.contended(),
                            (round, i) -> "bench/contended-r" + round, cpu, profiler));
                }
            } finally {
                if (shared != null) {
                    shared.close();
                }
                if (gateway != null) {
                    gateway.close();
                }
            }
        }
        String report = report(options, results) + "\nIdle, before the scenarios, per second: " + idle + "\n";
        System.out.println(report);
        Files.createDirectories(options.out().toAbsolutePath().getParent());
        Files.writeString(options.out(), report, StandardCharsets.UTF_8);
        System.out.println("written to " + options.out().toAbsolutePath());
        System.exit(0);
    }

    /** Lock names by (round, client). */
    interface Names {
        String name(int round, int client);
    }

    /** Runs the scenario on every target, {@code options.rounds()} times alternating; merges each target's rounds. */
    private static List<Result> rounds(List<Target> targets, Options options, String scenario, int clients, Names names,
                                       CpuMeter cpu, Profiler profiler) throws Exception {
        Map<String, Result> merged = new LinkedHashMap<>();
        for (int round = 1; round <= options.rounds(); round++) {
            int r = round;
            for (Target target : targets) {
                String label = target.name() + "-" + scenario.replace(' ', '-') + "-" + clients + "-r" + round;
                Result result = run(target, scenario, clients, i -> names.name(r, i), options.warmupS(),
                        options.measureS(), cpu, profiler, label);
                merged.merge(target.name(), result, Result::plus);
            }
        }
        return new ArrayList<>(merged.values());
    }

    private static Result run(Target target, String scenario, int clients, IntFunction<String> nameOf, int warmupS,
                              int measureS, CpuMeter cpu, Profiler profiler, String label) throws Exception {
        List<LockClient> lockClients = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            lockClients.add(target.client(nameOf.apply(i), i));
        }
        // 0 = warm-up, 1 = measuring, 2 = stop.
        AtomicLong phase = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        String[] firstError = new String[1];
        Histogram[] histograms = new Histogram[clients];
        long[] ops = new long[clients];
        CountDownLatch done = new CountDownLatch(clients);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            int index = i;
            histograms[i] = new Histogram(60_000_000L, 3);
            Thread thread = new Thread(() -> {
                LockClient client = lockClients.get(index);
                try {
                    while (phase.get() < 2) {
                        long start = System.nanoTime();
                        try {
                            client.acquire();
                            client.release();
                        } catch (Exception e) {
                            if (errors.getAndIncrement() == 0) {
                                firstError[0] = e.toString();
                            }
                            sleep(10);
                            continue;
                        }
                        long micros = (System.nanoTime() - start) / 1000;
                        if (phase.get() == 1) {
                            histograms[index].recordValue(Math.max(1, Math.min(micros, 60_000_000L)));
                            ops[index]++;
                        }
                    }
                } finally {
                    done.countDown();
                }
            }, target.name() + "-" + i);
            thread.setDaemon(true);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
        long warmupEnds = System.nanoTime() + warmupS * 1_000_000_000L;
        // Started in the warm-up, so that attaching (jcmd) does not fall into the measurement.
        Profiler.Recording recording = profiler.start(label, target.isWarden());
        sleep(Math.max(0, (warmupEnds - System.nanoTime()) / 1_000_000));
        Map<String, Double> cpu0 = cpu.snapshot();
        long start = System.nanoTime();
        phase.set(1);
        sleep(measureS * 1000L);
        phase.set(2);
        long end = System.nanoTime();
        Map<String, Double> cpu1 = cpu.snapshot();
        recording.stop();
        if (!done.await(60, TimeUnit.SECONDS)) {
            System.out.println("WARNING: clients of " + target.name() + " did not stop within 60 s");
        }
        for (LockClient client : lockClients) {
            client.close();
        }
        target.endRun();
        Histogram merged = new Histogram(60_000_000L, 3);
        long total = 0;
        for (int i = 0; i < clients; i++) {
            merged.add(histograms[i]);
            total += ops[i];
        }
        Map<String, Double> cpuMsPerOp = new LinkedHashMap<>();
        for (String key : cpu1.keySet()) {
            cpuMsPerOp.put(key, total == 0 ? Double.NaN : (cpu1.get(key) - cpu0.getOrDefault(key, 0.0)) / total);
        }
        Result result = new Result(target.name(), scenario, clients, total, (end - start) / 1e9, merged,
                errors.get(), firstError[0], cpuMsPerOp);
        System.out.printf(Locale.ROOT, "%-11s %-12s %3d clients: %8.0f ops/s p50 %6.2f ms p99 %6.2f ms errors %d%s cpu ms/op %s%n",
                result.system(), scenario, clients, result.throughput(), result.p50Ms(), result.p99Ms(), result.errors(),
                result.firstError() == null ? "" : " (first: " + result.firstError() + ")", format(cpuMsPerOp));
        return result;
    }

    /** What the processes cost per second with no load at all (background work of the gateway). */
    private static String idleCost(CpuMeter cpu) {
        Map<String, Double> before = cpu.snapshot();
        long start = System.nanoTime();
        sleep(3000);
        Map<String, Double> after = cpu.snapshot();
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Double> perSecond = new LinkedHashMap<>();
        after.forEach((k, v) -> perSecond.put(k, (v - before.getOrDefault(k, 0.0)) / seconds));
        String text = format(perSecond) + " (CPU in ms, ZooKeeper requests in count)";
        System.out.println("idle per second: " + text);
        return text;
    }

    private static String format(Map<String, Double> cpuMsPerOp) {
        List<String> parts = new ArrayList<>();
        cpuMsPerOp.forEach((k, v) -> parts.add(String.format(Locale.ROOT, "%s=%.3f", k, v)));
        return String.join(" ", parts);
    }

    private static String report(Options options, List<Result> results) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "Run %s (load average at the end %s): %d rounds of warm-up %d s and "
                        + "measurement %d s per system and scenario, alternating; ZooKeeper fsync %s; Warden clients %s%s;"
                        + " Curator: %s.%n%n",
                LocalDateTime.now().withNano(0), loadAverage(), options.rounds(),
                options.warmupS(), options.measureS(), options.fsync() ? "on" : "off", String.join(", ", options.http()),
                options.http().contains("sdk") ? (options.sdkPerClient() ? " (sdk: one WardenClient per client thread)"
                        : " (sdk: one WardenClient shared by the client threads)") : "",
                options.curatorPerClient() ? "one CuratorFramework per client" : "one shared CuratorFramework"));
        out.append("| scenario | clients | Warden via | Warden pairs/s | Warden p50 ms | Warden p99 ms | Curator pairs/s "
                + "| Curator p50 ms | Curator p99 ms | ratio W/C | p50 overhead ms |\n");
        out.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        // scenario/clients -> system -> result
        Map<String, Map<String, Result>> rows = new LinkedHashMap<>();
        for (Result r : results) {
            rows.computeIfAbsent(r.scenario() + "/" + r.clients(), k -> new LinkedHashMap<>()).put(r.system(), r);
        }
        for (Map<String, Result> row : rows.values()) {
            Result c = row.get("curator");
            List<Result> wardens = row.values().stream().filter(r -> !r.system().equals("curator")).toList();
            for (Result w : wardens.isEmpty() ? java.util.Collections.<Result>singletonList(null) : wardens) {
                Result any = w != null ? w : c;
                out.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                        any.scenario().equals("one name") ? "one name (handoffs/s)" : "uncontended, distinct names",
                        any.clients(),
                        w == null ? "-" : w.system().substring("warden-".length()),
                        w == null ? "-" : String.format(Locale.ROOT, "%.0f", w.throughput()),
                        w == null ? "-" : String.format(Locale.ROOT, "%.2f", w.p50Ms()),
                        w == null ? "-" : String.format(Locale.ROOT, "%.2f", w.p99Ms()),
                        c == null ? "-" : String.format(Locale.ROOT, "%.0f", c.throughput()),
                        c == null ? "-" : String.format(Locale.ROOT, "%.2f", c.p50Ms()),
                        c == null ? "-" : String.format(Locale.ROOT, "%.2f", c.p99Ms()),
                        w == null || c == null ? "-" : String.format(Locale.ROOT, "%.2f", w.throughput() / c.throughput()),
                        w == null || c == null ? "-" : String.format(Locale.ROOT, "%+.2f", w.p50Ms() - c.p50Ms())));
            }
        }
        out.append("\nCost per acquire+release pair: ms of CPU time per process (utime+stime from /proc; 2 cores = 2000 ms"
                + " per second), and requests received by the ZooKeeper servers (mntr zk_packets_received):\n\n");
        out.append("| system | scenario | clients | gateway | 3 ZooKeeper servers | zk1 / zk2 / zk3 | load generator JVM "
                + "| ZooKeeper requests per pair | errors |\n");
        out.append("|---|---|---:|---:|---:|---|---:|---:|---:|\n");
        for (Result r : results) {
            Map<String, Double> c = r.cpuMsPerOp();
            List<String> each = new ArrayList<>();
            for (int i = 1; c.containsKey("zk" + i); i++) {
                each.add(String.format(Locale.ROOT, "%.3f", c.get("zk" + i)));
            }
            out.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %.3f | %s | %.3f | %.1f | %d |%n", r.system(),
                    r.scenario(), r.clients(),
                    c.containsKey("gateway") ? String.format(Locale.ROOT, "%.3f", c.get("gateway")) : "-",
                    c.getOrDefault("zk", Double.NaN), String.join(" / ", each), c.getOrDefault("client", Double.NaN),
                    c.getOrDefault("zkRequests", Double.NaN), r.errors()));
        }
        return out.toString();
    }

    static CuratorFramework newCurator(String connect) {
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(connect).namespace("bench-curator")
                .sessionTimeoutMs(10_000).connectionTimeoutMs(5000)
                .retryPolicy(new ExponentialBackoffRetry(50, 10, 1000)).build();
        curator.start();
        try {
            if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Curator did not connect to " + connect);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return curator;
    }

    /** The 1-, 5- and 15-minute load averages: other work on the machine skews the numbers. */
    static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * CPU time of the processes, in ms, from {@code ProcessHandle.info().totalCpuDuration()}: on Linux, utime + stime of
     * {@code /proc/<pid>/stat} (clock ticks, usually 10 ms: a measurement window of seconds has thousands).
     */
    static final class CpuMeter {
        private final ZkEnsemble zk;
        private final GatewayProcess gateway;

        CpuMeter(ZkEnsemble zk, GatewayProcess gateway) {
            this.zk = zk;
            this.gateway = gateway;
        }

        Map<String, Double> snapshot() {
            Map<String, Double> cpu = new LinkedHashMap<>();
            if (gateway != null) {
                cpu.put("gateway", cpuMs(gateway.process().pid()));
            }
            double zkTotal = 0;
            Map<String, Double> each = new LinkedHashMap<>();
            for (int i = 0; i < zk.size(); i++) {
                double ms = cpuMs(zk.server(i).pid());
                each.put("zk" + (i + 1), ms);
                zkTotal += ms;
            }
            cpu.put("zk", zkTotal);
            cpu.putAll(each);
            cpu.put("client", cpuMs(ProcessHandle.current().pid()));
            // Not CPU: the requests the ZooKeeper servers received from their clients (pings included).
            double packets = 0;
            for (int i = 0; i < zk.size(); i++) {
                packets += zk.mntr(i).getOrDefault("zk_packets_received", 0L);
            }
            cpu.put("zkRequests", packets);
            return cpu;
        }

        private static double cpuMs(long pid) {
            return ProcessHandle.of(pid).flatMap(p -> p.info().totalCpuDuration()).map(d -> d.toNanos() / 1e6).orElse(0.0);
        }
    }

    /** Warden over HTTP: one session per client, acquire EXCLUSIVE with wait_ms, release by token. */
    static final class WardenTarget implements Target {
        private final URI base;
        private final String http;
        private final HttpClient jdkHttp;

        WardenTarget(URI base, String http, HttpClient jdkHttp) {
            this.base = base;
            this.http = http;
            this.jdkHttp = jdkHttp;
        }

        @Override
        public String name() {
            return "warden-" + http;
        }

        @Override
        public LockClient client(String lockName, int index) throws IOException {
            BenchHttp transport = http.equals("jdk") ? BenchHttp.jdk(jdkHttp, base)
                    : BenchHttp.raw(LoopbackPorts.HOST, base.getPort());
            BenchHttp.Response opened = transport.post("/v1/sessions",
                    "{\"client_id\":\"bench-" + index + "\",\"ttl_ms\":120000}");
            if (opened.status() != 201 && opened.status() != 200) {
                throw new IOException("open session: " + opened.status() + " " + opened.body());
            }
            String sessionId = JSON.readTree(opened.body()).path("session_id").asText();
            return new WardenLockClient(transport, sessionId, lockName);
        }
    }

    /** Concurrency: confined to one benchmark thread. */
    static final class WardenLockClient implements LockClient {
        private final BenchHttp http;
        private final String sessionId;
        private final String lockName;
        private long sequence;
        private long token;

        WardenLockClient(BenchHttp http, String sessionId, String lockName) {
            this.http = http;
            this.sessionId = sessionId;
            this.lockName = lockName;
        }

        @Override
        public void acquire() throws IOException {
            String body = "{\"session_id\":\"" + sessionId + "\",\"name\":\"" + lockName
                    + "\",\"mode\":\"EXCLUSIVE\",\"wait_ms\":30000,\"request_id\":\"r" + (++sequence) + "\"}";
            BenchHttp.Response response = http.post("/v1/acquire", body);
            JsonNode reply = response.status() == 200 ? JSON.readTree(response.body()) : null;
            if (reply == null || !"GRANTED".equals(reply.path("status").asText())) {
                throw new IOException("acquire: " + response.status() + " " + response.body());
            }
            token = reply.path("token").asLong();
        }

        @Override
        public void release() throws IOException {
            String body = "{\"session_id\":\"" + sessionId + "\",\"name\":\"" + lockName + "\",\"token\":" + token + "}";
            BenchHttp.Response response = http.post("/v1/release", body);
            if (response.status() != 200 || !response.body().contains("\"released\":true")) {
                throw new IOException("release: " + response.status() + " " + response.body());
            }
        }

        @Override
        public void close() {
            try {
                http.send("DELETE", "/v1/sessions/" + sessionId, null);
            } catch (IOException ignored) {
                // the session expires on its own
            }
            http.close();
        }
    }

    /**
     * Warden through its Java SDK: one {@link io.warden.client.WardenClient} shared by the run's client threads (the
     * SDK's usual shape: one session per process), or one per thread with {@code --sdk-per-client}. Each thread loops
     * {@code lock.acquire(30 s)} and {@code hold.release()} on a {@link FencedLock} of its own name.
     *
     * <p>Concurrency: {@link #client} and {@link #endRun} are called by the benchmark's main thread only.
     */
    static final class SdkTarget implements Target {
        private final URI base;
        private final boolean perClient;
        private io.warden.client.WardenClient shared;

        SdkTarget(URI base, boolean perClient) {
            this.base = base;
            this.perClient = perClient;
        }

        @Override
        public String name() {
            return "warden-sdk";
        }

        private static io.warden.client.WardenClient open(URI base, String clientId) {
            return io.warden.client.WardenClient.builder().endpoints(base.toString()).clientId(clientId).build();
        }

        @Override
        public LockClient client(String lockName, int index) {
            io.warden.client.WardenClient client;
            if (perClient) {
                client = open(base, "bench-sdk-" + index);
            } else {
                if (shared == null) {
                    shared = open(base, "bench-sdk");
                }
                client = shared;
            }
            FencedLock lock = client.lock(lockName);
            return new LockClient() {
                private Hold hold;

                @Override
                public void acquire() {
                    hold = lock.acquire(Duration.ofSeconds(30));
                }

                @Override
                public void release() {
                    hold.release();
                }

                @Override
                public void close() {
                    if (perClient) {
                        client.close();
                    }
                }
            };
        }

        @Override
        public void endRun() {
            if (shared != null) {
                shared.close();
                shared = null;
            }
        }
    }

    /**
     * JFR recordings of runs ({@code --jfr DIR}): of this JVM through {@link jdk.jfr.Recording}, of the gateway through
     * {@code jcmd <pid> JFR.start/JFR.stop}, both with the JDK's {@code profile} settings.
     */
    static final class Profiler {
        static final Profiler OFF = new Profiler(null, null);

        interface Recording {
            void stop();
        }

        private final Path dir;
        private final GatewayProcess gateway;

        Profiler(Path dir, GatewayProcess gateway) {
            this.dir = dir;
            this.gateway = gateway;
        }

        Recording start(String label, boolean withGateway) throws IOException {
            if (dir == null) {
                return () -> { };
            }
            Files.createDirectories(dir);
            jdk.jfr.Recording own;
            try {
                own = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
            } catch (java.text.ParseException e) {
                throw new IOException(e);
            }
            own.setDestination(dir.resolve(label + "-client.jfr").toAbsolutePath());
            own.start();
            boolean gw = withGateway && gateway != null;
            if (gw) {
                jcmd("JFR.start", "name=" + label, "settings=profile",
                        "filename=" + dir.resolve(label + "-gateway.jfr").toAbsolutePath());
            }
            return () -> {
                own.stop();
                own.close();
                if (gw) {
                    jcmd("JFR.stop", "name=" + label);
                }
            };
        }

        private void jcmd(String... command) {
            List<String> line = new ArrayList<>();
            line.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
            line.add(Long.toString(gateway.process().pid()));
            line.addAll(List.of(command));
            try {
                Process p = new ProcessBuilder(line).redirectErrorStream(true).start();
                String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (p.waitFor() != 0) {
                    System.out.println("WARNING: " + line + " failed: " + output);
                }
            } catch (IOException e) {
                System.out.println("WARNING: " + line + " failed: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Raw Curator: one {@link InterProcessMutex} per client on the shared (or its own) CuratorFramework. */
    static final class CuratorTarget implements Target {
        private final String connect;
        private final CuratorFramework shared;

        CuratorTarget(String connect, CuratorFramework shared) {
            this.connect = connect;
            this.shared = shared;
        }

        @Override
        public String name() {
            return "curator";
        }

        @Override
        public LockClient client(String lockName, int index) {
            CuratorFramework curator = shared != null ? shared : newCurator(connect);
            InterProcessMutex mutex = new InterProcessMutex(curator, "/" + lockName);
            return new LockClient() {
                @Override
                public void acquire() throws Exception {
                    if (!mutex.acquire(30, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("not acquired in 30 s");
                    }
                }

                @Override
                public void release() throws Exception {
                    mutex.release();
                }

                @Override
                public void close() {
                    if (shared == null) {
                        curator.close();
                    }
                }
            };
        }
    }
}
