package io.warden.it.support;

import org.assertj.core.api.SoftAssertions;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

/**
 * The whole-system fixture of the fault tests: a 3-server ZooKeeper ensemble and N gateways, each its own process,
 * and M {@link CounterClient}s (client i starts on gateway i mod N) looping on the lock {@value #LOCK} with their
 * sessions kept alive in the background. A test injects faults between {@link #awaitProgress} calls, then calls
 * {@link #stopAndVerify}.
 *
 * <p>Concurrency: driven by the test thread; the clients run on their own threads and a keepalive scheduler.
 */
public final class CounterScenario implements AutoCloseable {
    public static final String LOCK = "it/counter";
    private static final Duration RETRY_BUDGET = Duration.ofSeconds(30);
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(60);

    private final JavaLauncher launcher;
    private final Timeline timeline = new Timeline();
    private final Problems problems = new Problems(timeline);
    private final FencedResource resource = new FencedResource();
    private final UnguardedCounter counter = new UnguardedCounter();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<GatewayProcess> gateways = new ArrayList<>();
    private final List<CounterClient> clients = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final ScheduledExecutorService keepalives = Executors.newScheduledThreadPool(2);
    private final HttpClient http = WardenClient.newHttpClient();
    private ZkEnsemble zk;

    private CounterScenario(String run) {
        this.launcher = JavaLauncher.forRun(run);
    }

    /** Starts everything and waits until ZooKeeper has a quorum and every gateway is ready; the clients are running. */
    public static CounterScenario start(String run, int gatewayCount, int clientCount, long ttlMs) {
        CounterScenario scenario = new CounterScenario(run);
        try {
            scenario.startAll(gatewayCount, clientCount, ttlMs);
            return scenario;
        } catch (RuntimeException | Error e) {
            scenario.close();
            throw e;
        }
    }

    private void startAll(int gatewayCount, int clientCount, long ttlMs) {
        zk = ZkEnsemble.start(launcher, 3);
        zk.awaitQuorum(Duration.ofSeconds(60));
        for (int g = 0; g < gatewayCount; g++) {
            gateways.add(GatewayProcess.start(launcher, "gw" + (g + 1), zk.connectString()));
        }
        List<URI> uris = new ArrayList<>();
        for (GatewayProcess gateway : gateways) {
            gateway.awaitReady(Duration.ofSeconds(60));
            uris.add(gateway.baseUri());
        }
        timeline.mark("ensemble and " + gatewayCount + " gateways ready; gateway jar " + GatewayProcess.serviceJar()
                + " of " + GatewayProcess.serviceJarTime());
        for (int i = 0; i < clientCount; i++) {
            WardenClient client = new WardenClient(http, uris, i % gatewayCount, RETRY_BUDGET);
            String clientId = "client-" + i;
            WardenClient.Session session = client.openSession(clientId, ttlMs);
            CounterClient counterClient = new CounterClient(clientId, LOCK, client, session, resource, counter,
                    problems, stop);
            clients.add(counterClient);
            long interval = Math.max(200, Math.min(session.keepaliveIntervalMs(), session.ttlMs() / 3));
            keepalives.scheduleWithFixedDelay(counterClient::keepalive, interval, interval, TimeUnit.MILLISECONDS);
        }
        for (CounterClient client : clients) {
            Thread thread = new Thread(client, client.clientId());
            threads.add(thread);
            thread.start();
        }
        timeline.mark("clients started");
    }

    public ZkEnsemble zk() {
        return zk;
    }

    public GatewayProcess gateway(int index) {
        return gateways.get(index);
    }

    public Timeline timeline() {
        return timeline;
    }

    public List<CounterClient> clients() {
        return List.copyOf(clients);
    }

    /** Waits until every client has made {@code more} increments since the call. */
    public void awaitProgress(String what, int more) {
        long[] base = clients.stream().mapToLong(CounterClient::increments).toArray();
        Await.until(what, PROGRESS_TIMEOUT, Duration.ofMillis(20),
                () -> IntStream.range(0, clients.size()).allMatch(i -> clients.get(i).increments() >= base[i] + more),
                () -> "increments " + increments() + "; " + zk.describe() + "; timeline:\n" + timeline);
        timeline.mark(what + ": done, increments " + increments());
    }

    /** kill -9 of the ZooKeeper leader, progress under the two left, restart, progress with three again. */
    public int killAndRestartLeader() {
        int leader = zk.killLeader(Duration.ofSeconds(30));
        timeline.mark("killed zk" + (leader + 1) + " (the leader)");
        zk.awaitQuorum(Duration.ofSeconds(30));
        timeline.mark("quorum again: " + zk.describe());
        awaitProgress("progress after killing the leader zk" + (leader + 1), 15);

        zk.restart(leader);
        timeline.mark("restarted zk" + (leader + 1));
        Await.until("zk" + (leader + 1) + " to rejoin", Duration.ofSeconds(60), Duration.ofMillis(100),
                () -> zk.mode(leader) == ZkEnsemble.Mode.FOLLOWER, zk::describe);
        zk.awaitQuorum(Duration.ofSeconds(30));
        timeline.mark("zk" + (leader + 1) + " rejoined: " + zk.describe());
        awaitProgress("progress after zk" + (leader + 1) + " rejoined", 10);
        return leader;
    }

    /** The clients that started on gateway {@code index} send their calls to it first again (after a fail-over). */
    public void sendClientsBack(int index) {
        for (int i = 0; i < clients.size(); i++) {
            if (i % gateways.size() == index) {
                clients.get(i).client().prefer(index);
            }
        }
        timeline.mark("clients that started on gw" + (index + 1) + " sent back to it");
    }

    /**
     * Stops the clients, then checks through {@code survivor}: every session is alive there and closes, leaving the
     * lock free; the counter equals the increments; the fenced resource refused nothing; no client saw a problem.
     */
    public void stopAndVerify(GatewayProcess survivor) throws InterruptedException {
        stop.set(true);
        timeline.mark("stopping clients");
        for (Thread thread : threads) {
            thread.join(30_000);
            if (thread.isAlive()) {
                problems.add(thread.getName() + " did not stop within 30 s");
            }
        }
        keepalives.shutdown();
        if (!keepalives.awaitTermination(30, TimeUnit.SECONDS)) {
            problems.add("keepalives did not stop within 30 s");
        }

        WardenClient via = new WardenClient(http, List.of(survivor.baseUri()), 0, RETRY_BUDGET);
        for (CounterClient client : clients) {
            String id = client.session().id();
            try {
                String seen = via.session(id).path("session_id").asText();
                if (!seen.equals(id)) {
                    problems.add("GET session of " + client.clientId() + " at " + survivor.gatewayId() + " answered " + seen);
                }
                via.closeSession(id);
            } catch (RuntimeException e) {
                problems.add("session of " + client.clientId() + " not alive at " + survivor.gatewayId()
                        + " at the end: " + e);
            }
        }
        String mode = via.lock(LOCK).path("mode").asText();

        long increments = clients.stream().mapToLong(CounterClient::increments).sum();
        timeline.mark(String.format("done: %d increments, counter %d, %d accepted writes, refused %d, failovers %s",
                increments, counter.value(), resource.acceptedWrites(), resource.violations().size(),
                clients.stream().map(c -> c.clientId() + "=" + c.client().failovers()).toList()));
        System.out.println(launcher.logDir().getFileName() + " timeline:\n" + timeline);
        String context = "; logs in " + launcher.logDir() + "; timeline:\n" + timeline;
        SoftAssertions softly = new SoftAssertions();
        softly.assertThat(resource.violations()).as("writes the fenced resource refused" + context).isEmpty();
        softly.assertThat(counter.value()).as("counter vs increments under the lock" + context).isEqualTo(increments);
        softly.assertThat(resource.holderTokens()).as("grants seen by the resource").hasSize((int) increments);
        softly.assertThat(problems.list()).as("problems seen by clients" + context).isEmpty();
        softly.assertThat(mode).as("lock mode after every session closed").isEqualTo("FREE");
        softly.assertAll();
    }

    private List<Long> increments() {
        return clients.stream().map(CounterClient::increments).toList();
    }

    /** Stops the clients and kills every process; logs stay under {@link JavaLauncher#logDir()}. Idempotent. */
    @Override
    public void close() {
        stop.set(true);
        keepalives.shutdownNow();
        for (Thread thread : threads) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (GatewayProcess gateway : gateways) {
            gateway.close();
        }
        if (zk != null) {
            zk.close();
        }
    }
}
