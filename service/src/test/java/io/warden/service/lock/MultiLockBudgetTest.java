package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.MultiAcquireResult;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ZooKeeper requests a multi-lock request costs, counted by the server itself (the requests it received on the
 * gateway's connection, {@code cons}' {@code recved}, as RequestBudgetTest counts one-name requests with {@code mntr}):
 * a figure that does not grow with the number of names k, because the request is one transaction (contract §2.11,
 * docs/decisions/0012) and its reads of the k queues go to ZooKeeper together. The same budgets hold at k = 2 and
 * k = 32; a cost of k times one name's (one transaction or one read per name) would be 16 times over at k = 32.
 *
 * <p>How the reads go together: a lock read that finds none in flight is sent at once, alone, and the reads made while
 * it is in flight go in the next request, one read-only {@code multi} (GroupRead). A request's k reads are made
 * together, so they cost two requests whatever k is (a batch of one is one request too).
 *
 * <p>Each figure is an average over {@value #ROUNDS} operations in steady state (lock nodes made, the session's hint
 * and the queue nodes' data cached), made one after the other and counted together, as RequestBudgetTest counts. What
 * the gateway sends meanwhile for other reasons lands in the count too, but for the watch feed's probes ({@link
 * #counted}): a few requests in all, which the bounds allow a quarter of a request per operation for. An ended
 * request's tombstone prune (a {@code getChildren} and a {@code multi} about every 20 ended requests); now and then a
 * third read request for the k queues, when a lock's read goes alone (its size last read over a second ago: a pause).
 * At 32 names the bounds allow a quarter more: the reads of a refused try have now and then gone as two to four
 * requests alone and a batch (seen in the server's log: 3.20 per try in one run of five on a loaded machine), while at
 * 2 names a read that goes alone costs what a batch of one does, so the figure there is exact.
 */
class MultiLockBudgetTest {
    private static final int ROUNDS = 40;
    /** What the bounds allow per operation for the gateway's other requests: see the class comment. */
    private static final double SLACK = 0.25;
    /** At 32 names, also for a batch of reads that splits: see the class comment. */
    private static final double SPLIT = 0.25;

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();
    private final Gateway gw = fx.gateway();
    private final Warden w = gw.warden();

    private static MultiAcquireRequest request(String session, List<LockName> names, boolean requestIdGiven) {
        return request(session, names, Mode.EXCLUSIVE, requestIdGiven);
    }

    private static MultiAcquireRequest request(String session, List<LockName> names, Mode mode, boolean requestIdGiven) {
        return new MultiAcquireRequest(session, names, mode, 0, UUID.randomUUID().toString(), OnTimeout.CANCEL,
                requestIdGiven);
    }

    private static List<LockName> names(String prefix, int k) {
        List<LockName> names = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            names.add(LockName.parse("budget/" + prefix + "-" + k + "-" + i));
        }
        return names;
    }

    private MultiAcquireResult acquire(MultiAcquireRequest r) {
        return w.acquireAll(r).orTimeout(20, TimeUnit.SECONDS).join();
    }

    /**
     * Requests the server counted from this gateway while {@code op} runs: those it received on the gateway's
     * connection ({@code cons}' {@code recved}), so that nothing else the server receives meanwhile (the test's own
     * ZooKeeper client's pings, the {@code cons} commands themselves) counts. Less the watch feed's probes, which it
     * counts itself: an {@code exists} it sends when no other request of the gateway follows a write's notifications
     * within 5 ms of real time (LockFeed), so how many there are depends on the machine's pauses, not on the
     * operation (40 releases of 32 names drew 16 on a loaded machine).
     */
    private long counted(Runnable op) throws Exception {
        long before = receivedFromGateway();
        int probes = gw.watches().stats().probes();
        op.run();
        return receivedFromGateway() - before - (gw.watches().stats().probes() - probes);
    }

    /** The requests the server has received on the gateway's ZooKeeper connection ({@code cons}, by its session id). */
    private long receivedFromGateway() throws Exception {
        String session = "sid=0x" + Long.toHexString(gw.curator().getZookeeperClient().getZooKeeper().getSessionId()) + ",";
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", fx.server.getPort())) {
            socket.getOutputStream().write("cons".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String out = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            for (String line : out.split("\n")) {
                if (line.contains(session)) {
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("recved=(\\d+)").matcher(line);
                    if (m.find()) {
                        return Long.parseLong(m.group(1));
                    }
                }
            }
            throw new IllegalStateException("no connection of session " + session + " in cons' output: " + out);
        }
    }

    /**
     * A multi-lock acquire of k names, granted at once: 3 requests. The {@code multi} that makes the record and
     * the k entries (1); the grant decision's read of the k queues (2: one alone, the rest together). The holders in
     * the answer are entries made through this gateway, whose data it cached when it made them: no read.
     *
     * <p>Its release as a whole ({@code {session_id, request_id}}): 5 requests. A {@code sync} (the request may have
     * been made through another gateway a moment ago) and a read of the record (its names) (2); the k queues read to
     * find the entries (2, as above); one {@code multi} that deletes the k entries and tombstones the record (1).
     *
     * <p>The requests are SHARED, beside another session's SHARED multi-lock request on the same names held throughout:
     * the lock nodes are never empty, so ZooKeeper never reaps one (an empty container goes at its next minutely check)
     * and no acquire pays for making it again (k creates and the {@code multi} again) in the middle of the count.
     */
    @Test
    void aGrantedAcquireOfKNames_costs3Requests_andItsWholeRelease5_whateverK() throws Exception {
        String s = session(w, "budget", 120_000);
        String reader = session(w, "reader", 120_000);
        for (int k : new int[] {2, 32}) {
            List<LockName> names = names("granted", k);
            assertThat(acquire(request(reader, names, Mode.SHARED, true)).status()).isEqualTo(Status.GRANTED);
            for (int i = 0; i < 5; i++) { // steady state: the session's hint and caches warm
                MultiAcquireRequest r = request(s, names, Mode.SHARED, true);
                assertThat(acquire(r).status()).isEqualTo(Status.GRANTED);
                assertThat(w.releaseRequest(s, r.requestId()).join()).isTrue();
            }
            List<MultiAcquireRequest> made = new ArrayList<>();
            for (int i = 0; i < ROUNDS; i++) {
                made.add(request(s, names, Mode.SHARED, true));
            }
            long acquires = counted(() -> made.forEach(r -> assertThat(acquire(r).status()).isEqualTo(Status.GRANTED)));
            long releases = counted(() -> made.forEach(r ->
                    assertThat(w.releaseRequest(s, r.requestId()).join()).isTrue()));
            double perAcquire = acquires / (double) ROUNDS;
            double perRelease = releases / (double) ROUNDS;
            System.out.printf("ZooKeeper requests per multi-lock acquire of %d names granted at once: %.2f; per release "
                    + "of the whole request: %.2f%n", k, perAcquire, perRelease);
            double allowed = SLACK + (k > 2 ? SPLIT : 0);
            assertThat(perAcquire).as("requests per granted acquire of %d names", k).isLessThanOrEqualTo(3 + allowed);
            assertThat(perRelease).as("requests per release of a whole request of %d names", k)
                    .isLessThanOrEqualTo(5 + allowed);
        }
    }

    /**
     * A multi-lock try (wait_ms 0) of k names that another session holds, refused: 3 requests and no write. The first
     * refused try marks the names busy on this gateway; a try on busy names is decided from a linearizable read of them
     * (contract §3: a try that cannot be granted writes nothing): one {@code sync} (1), then the k queues (2, as above).
     * The holders it answers with are the other session's entries, made through this gateway and cached: no read. The
     * cell's last zxid does not move. (It cost 4 when each name's refusal asked for the shared sync on its own: the
     * second name's came while the first's sync was in flight, and waited for another.)
     */
    @Test
    void aRefusedTryOfKHeldNames_costs3Requests_andWritesNothing_whateverK() throws Exception {
        String holder = session(w, "holder", 120_000);
        String trier = session(w, "trier", 120_000);
        for (int k : new int[] {2, 32}) {
            List<LockName> names = names("held", k);
            assertThat(acquire(request(holder, names, true)).status()).isEqualTo(Status.GRANTED);
            for (int i = 0; i < 3; i++) { // the first refusal marks the names busy; then steady state
                assertThat(acquire(request(trier, names, false)).status()).isEqualTo(Status.TIMED_OUT);
            }
            long zxid = fx.lastZxid();
            long tries = counted(() -> {
                for (int i = 0; i < ROUNDS; i++) {
                    MultiAcquireResult refused = acquire(request(trier, names, false));
                    assertThat(refused.status()).isEqualTo(Status.TIMED_OUT);
                    assertThat(refused.holders()).as("the holders of every busy name").hasSize(k);
                }
            });
            double perTry = tries / (double) ROUNDS;
            System.out.printf("ZooKeeper requests per refused multi-lock try of %d held names: %.2f%n", k, perTry);
            assertThat(fx.lastZxid()).as("the cell's last zxid after %d refused tries of %d names", ROUNDS, k)
                    .isEqualTo(zxid);
            assertThat(perTry).as("requests per refused try of %d names", k)
                    .isLessThanOrEqualTo(3 + SLACK + (k > 2 ? SPLIT : 0));
        }
    }
}
