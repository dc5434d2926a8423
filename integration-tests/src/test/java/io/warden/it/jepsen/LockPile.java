package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.it.support.Await;
import io.warden.it.support.GatewayProcess;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.queue.QueueEntry;
import io.warden.service.zk.CellPaths;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;

/**
 * The {@link Nemesis.Kind#LARGE_LOCK_PILE} fault: entries piled onto one lock while the workload runs, past what the
 * gateways admit and past what they read in one ZooKeeper reply, then taken away. The gateways of the proof suite run
 * with small limits ({@link #PACKET_BYTES}, {@link #MAX_ENTRIES}: {@link JepsenCell}) so that a few hundred entries do
 * what tens of thousands do at the defaults.
 *
 * <ol>
 *   <li>{@link #MAX_ENTRIES} + 20 SHARED try-locks through the gateways, ten at a time (two sessions of the nemesis, a
 *   minute's TTL, one gateway each): exactly {@link #MAX_ENTRIES} must be granted, the 20 others refused with 429 naming
 *   {@code max-entries-per-lock} (none granted at once past the bound, as SHARED holders once were);</li>
 *   <li>{@link #FOREIGN} nodes made directly in ZooKeeper, one create each, as plain Curator clients on the same node make
 *   them: the lock's listing is then about ({@link #FOREIGN} + {@link #MAX_ENTRIES}) × 62 bytes, over the gateways' packet
 *   limit;</li>
 *   <li>every gateway read: {@code GET /v1/locks/{name}} must answer 429 naming the lock (not 503), the listing must show
 *   it too large, and {@code warden_lock_too_large_entries} must name it; one time in four a gateway is restarted
 *   (SIGTERM, a new id) and must come back ready, its watch mirror rebuilt with the pile in place (a restart takes
 *   tens of seconds on a loaded machine, so not every time);</li>
 *   <li>the foreign nodes deleted and the sessions closed (releasing the holds; a session with requests on a lock too
 *   large to read cannot be closed, so in that order).</li>
 * </ol>
 * A 503 (a gateway that has not heard from ZooKeeper for a second, as happens on a loaded machine) is answered as a
 * client does, by asking again with the same {@code request_id}. Throughout, no gateway may go through SUSPENDED or LOST ({@code warden_zk_connection_state_total}, read from each
 * gateway's {@code /metrics} before and after; a restarted gateway from its start). What went wrong is collected in
 * {@link #problems}, which the proof run's report and {@code JepsenIT} check.
 *
 * <p>Concurrency: run by the nemesis thread, one fault at a time; {@link #problems} and {@link #runs} are read by the
 * test thread afterwards.
 */
final class LockPile implements AutoCloseable {
    static final String LOCK = "jepsen/pile";
    /** The gateways' {@code zk-max-packet-bytes}: they list locks of up to (12,288 - 1,024) / 62 = 181 entries. */
    static final int PACKET_BYTES = 24_576;
    /** The gateways' {@code max-entries-per-lock}. */
    static final int MAX_ENTRIES = 100;
    /** Nodes of "plain Curator clients": 400 entries in all, a listing of about 25,800 bytes, over the packet limit. */
    static final int FOREIGN = 300;
    /** SHARED acquires past the bound (all must be refused), and how many are in flight at once. */
    private static final int PAST_THE_BOUND = 20;
    private static final int PARALLEL = 10;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LOSSES = Pattern.compile(
            "warden_zk_connection_state_total\\{[^}]*state=\"(SUSPENDED|LOST)\"[^}]*}\\s+([0-9.eE+]+)");

    private final JepsenCell cell;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    final List<String> problems = new CopyOnWriteArrayList<>();
    /** Piles built and taken away. */
    volatile int runs;
    private CuratorFramework zk;
    /** The foreign nodes of the pile under way (paths as made). */
    private final List<String> made = new CopyOnWriteArrayList<>();

    LockPile(JepsenCell cell) {
        this.cell = cell;
    }

    /** One pile: build, read, maybe restart a gateway, take away; returns what it was done on. */
    String run(Random rnd) {
        Map<String, Double> before = new HashMap<>();
        for (int g = 0; g < cell.gatewayCount(); g++) {
            GatewayProcess gw = cell.gateway(g);
            before.put(gw.gatewayId(), losses(gw));
        }
        String restarted = null;
        List<String[]> sessions = new ArrayList<>(); // {session id, gateway base uri}
        String lockPath = CellPaths.lock(LockName.parse(LOCK));
        try {
            for (int g = 0; g < 2; g++) {
                URI base = cell.gateway(g % cell.gatewayCount()).baseUri();
                JsonNode s = post(base, "/v1/sessions", "{\"client_id\":\"nemesis-pile\",\"ttl_ms\":60000}");
                sessions.add(new String[]{s.path("session_id").asText(), base.toString()});
            }
            // SHARED try-locks, PARALLEL at a time: admission goes by a request's place in the queue, so exactly the
            // first MAX_ENTRIES are granted whatever the interleaving, and every later one is refused.
            AtomicInteger granted = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
            try {
                List<Future<?>> calls = new ArrayList<>();
                for (int i = 0; i < MAX_ENTRIES + PAST_THE_BOUND; i++) {
                    String[] s = sessions.get(i % sessions.size());
                    String request = "pile-" + runs + "-" + i;
                    int first = i;
                    calls.add(pool.submit(() -> {
                        String json = "{\"session_id\":\"" + s[0] + "\",\"name\":\"" + LOCK
                                + "\",\"mode\":\"SHARED\",\"request_id\":\"" + request + "\"}";
                        // A 503 (a gateway that has not heard from ZooKeeper for a second: this machine under load) is
                        // answered as a client does: the same request_id again, at a gateway, until another answer.
                        boolean retried = false;
                        for (int attempt = 0; ; attempt++) {
                            HttpResponse<String> r = send(cell.gateway((first + attempt) % cell.gatewayCount()).baseUri(),
                                    "POST", "/v1/acquire", json);
                            JsonNode body = JSON.readTree(r.body());
                            String detail = body.path("detail").asText();
                            if (r.statusCode() == 503 && attempt < 50) {
                                retried = true;
                                Await.sleepQuietly(Duration.ofMillis(200));
                                continue;
                            }
                            if (r.statusCode() == 200 && "GRANTED".equals(body.path("status").asText())) {
                                granted.incrementAndGet();
                            } else if (r.statusCode() == 429 && detail.contains("max-entries-per-lock")
                                    || retried && r.statusCode() == 400 && detail.contains("already ended")) {
                                refused.incrementAndGet(); // (after a 503: refused and taken back by the first attempt)
                            } else {
                                problems.add("pile: acquire " + request + " answered " + r.statusCode() + " " + r.body());
                            }
                            return null;
                        }
                    }));
                }
                for (Future<?> call : calls) {
                    call.get(60, TimeUnit.SECONDS);
                }
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                problems.add("pile: an acquire failed: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } finally {
                pool.shutdownNow();
            }
            if (granted.get() != MAX_ENTRIES || refused.get() != PAST_THE_BOUND) {
                problems.add("pile: " + granted + " SHARED acquires granted and " + refused + " refused (429 naming "
                        + "max-entries-per-lock); expected " + MAX_ENTRIES + " and " + PAST_THE_BOUND);
            }
            foreign(lockPath);
            for (int g = 0; g < cell.gatewayCount(); g++) {
                probe(cell.gateway(g));
            }
            if (rnd.nextInt(4) == 0) {
                int g = rnd.nextInt(cell.gatewayCount());
                cell.restartGatewayGracefully(g); // its watch mirror's first read meets the pile
                GatewayProcess fresh = cell.gateway(g);
                restarted = fresh.gatewayId();
                before.put(restarted, 0.0);
                probe(fresh);
            }
        } catch (IOException | RuntimeException e) {
            problems.add("pile: " + e);
        } finally {
            try {
                unpile(sessions);
            } catch (RuntimeException e) {
                problems.add("pile: could not take it away: " + e);
            }
        }
        for (int g = 0; g < cell.gatewayCount(); g++) {
            GatewayProcess gw = cell.gateway(g);
            Double was = before.get(gw.gatewayId());
            double now = losses(gw);
            if (was == null) {
                problems.add("pile: gateway " + gw.gatewayId() + " was replaced during the pile, not by it");
            } else if (now != was) {
                problems.add("pile: gateway " + gw.gatewayId() + " lost its ZooKeeper connection during the pile ("
                        + (now - was) + " SUSPENDED/LOST)");
            }
        }
        runs++;
        return LOCK + (restarted == null ? "" : ", restarted " + restarted);
    }

    /** Reads of the pile through one gateway: a clear 429, a listing that says too large, the gauge naming it. */
    private void probe(GatewayProcess gw) throws IOException {
        HttpResponse<String> r = answered(gw.baseUri(), "GET", "/v1/locks/" + LOCK, null);
        JsonNode body = JSON.readTree(r.body());
        if (r.statusCode() != 429 || !LOCK.equals(body.path("lock").asText()) || body.path("entries").asInt() <= MAX_ENTRIES) {
            problems.add("pile: GET /v1/locks/" + LOCK + " at " + gw.gatewayId() + " answered " + r.statusCode() + " "
                    + r.body() + "; expected 429 naming the lock and its entries");
        }
        HttpResponse<String> page = answered(gw.baseUri(), "GET", "/v1/locks?namespace=jepsen&limit=1000", null);
        boolean listed = false;
        for (JsonNode l : JSON.readTree(page.body()).path("locks")) {
            listed |= LOCK.equals(l.path("name").asText()) && l.path("too_large").asBoolean();
        }
        if (page.statusCode() != 200 || !listed) {
            problems.add("pile: the listing at " + gw.gatewayId() + " answered " + page.statusCode()
                    + " without " + LOCK + " as too_large");
        }
        String metrics = send(gw.baseUri(), "GET", "/metrics", null).body();
        if (!metrics.contains("warden_lock_too_large_entries{cell=\"default\",lock=\"" + LOCK + "\"")) {
            problems.add("pile: " + gw.gatewayId() + "'s /metrics has no warden_lock_too_large_entries for " + LOCK);
        }
    }

    /**
     * {@link #FOREIGN} SHARED queue nodes without Warden's data, as plain Curator clients make them: one create each (so
     * each its own zxid, its own token), sent together.
     */
    private void foreign(String lockPath) {
        CountDownLatch made = new CountDownLatch(FOREIGN);
        List<Integer> failed = new CopyOnWriteArrayList<>();
        try {
            for (int i = 0; i < FOREIGN; i++) {
                zk().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).inBackground((c, event) -> {
                    if (event.getResultCode() != 0) {
                        failed.add(event.getResultCode());
                    } else {
                        this.made.add(event.getName());
                    }
                    made.countDown();
                }).forPath(lockPath + "/" + QueueEntry.prefix(UUID.randomUUID().toString(), Mode.SHARED), new byte[0]);
            }
            if (!made.await(60, TimeUnit.SECONDS) || !failed.isEmpty()) {
                throw new IllegalStateException((FOREIGN - made.getCount()) + " of " + FOREIGN + " creates answered, "
                        + "failures " + failed);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (Exception e) {
            throw new IllegalStateException("could not make the foreign nodes: " + e, e);
        }
    }

    /** Deletes the foreign nodes, 100 to a transaction, then closes the sessions, retrying until the gateways agree. */
    private void unpile(List<String[]> sessions) {
        List<String> paths = new ArrayList<>(made);
        made.clear();
        for (int from = 0; from < paths.size(); from += 100) {
            List<String> batch = paths.subList(from, Math.min(paths.size(), from + 100));
            try {
                List<CuratorOp> ops = new ArrayList<>();
                for (String path : batch) {
                    ops.add(zk().transactionOp().delete().forPath(path));
                }
                zk().transaction().forOperations(ops);
            } catch (Exception e) {
                for (String path : batch) { // one at a time: a node may be gone already (a reply lost)
                    try {
                        zk().delete().forPath(path);
                    } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
                        // done before
                    } catch (Exception e2) {
                        throw new IllegalStateException("could not delete " + path + ": " + e2, e2);
                    }
                }
            }
        }
        for (String[] s : sessions) {
            // at any gateway: the one that opened it may have been restarted (its sessions adopted by another)
            Await.until("the pile's session " + s[0] + " closed", Duration.ofSeconds(60), Duration.ofMillis(500), () -> {
                for (int g = 0; g < cell.gatewayCount(); g++) {
                    try {
                        int status = send(cell.gateway(g).baseUri(), "DELETE", "/v1/sessions/" + s[0], null).statusCode();
                        if (status == 200 || status == 404) {
                            return true;
                        }
                    } catch (IllegalStateException unreachable) {
                        // the next gateway
                    }
                }
                return false;
            });
        }
    }

    /** The SUSPENDED and LOST transitions the gateway's ZooKeeper client went through since it started. */
    private double losses(GatewayProcess gw) {
        String text = send(gw.baseUri(), "GET", "/metrics", null).body();
        double sum = 0;
        Matcher m = LOSSES.matcher(text);
        while (m.find()) {
            sum += Double.parseDouble(m.group(2));
        }
        return sum;
    }

    private JsonNode post(URI base, String path, String body) throws IOException {
        HttpResponse<String> r = answered(base, "POST", path, body);
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException("POST " + path + " answered " + r.statusCode() + " " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /**
     * {@link #send}, again while the answer is a 503 (a gateway that has not heard from ZooKeeper for a second, as on this
     * machine under load), for up to 10 s: a 503 says "try again", and a clear answer is what is checked.
     */
    private HttpResponse<String> answered(URI base, String method, String path, String body) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        HttpResponse<String> r = send(base, method, path, body);
        while (r.statusCode() == 503 && System.nanoTime() - deadline < 0) {
            Await.sleepQuietly(Duration.ofMillis(200));
            r = send(base, method, path, body);
        }
        return r;
    }

    private HttpResponse<String> send(URI base, String method, String path, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(20));
        if (body != null) {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(method + " " + path + " at " + base + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private synchronized CuratorFramework zk() {
        if (zk == null) {
            zk = CuratorFrameworkFactory.builder().connectString(cell.zk.connectString()).namespace("warden")
                    .retryPolicy(new RetryOneTime(200)).build();
            zk.start();
        }
        return zk;
    }

    @Override
    public synchronized void close() {
        if (zk != null) {
            zk.close();
        }
    }
}
