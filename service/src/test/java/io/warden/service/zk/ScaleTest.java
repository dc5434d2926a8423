package io.warden.service.zk;

import io.warden.service.Gateway;
import io.warden.service.api.LockName;
import io.warden.service.api.LockPage;
import io.warden.service.api.Mode;
import io.warden.service.api.NamespaceStats;
import io.warden.service.queue.QueueEntry;
import io.warden.service.queue.QueueNodeData;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.RequestRecord;
import io.warden.service.zk.SessionRecord;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * ZooKeeper's packet limit at full size (a documented command, not part of CI: several minutes and a few GB of heap):
 * a cell with 100,000 sessions of a vanished gateway and 200,000 live locks in one namespace, written directly to
 * ZooKeeper; a gateway whose ZooKeeper client refuses any reply over 512 KiB (half the packet limit) then adopts
 * every session, lists the namespace page by page, counts it, and serves the console's snapshot. It prints the time
 * each took and the heap used (BENCHMARKS.md, "Scale").
 *
 * <pre>mvn -B -pl service -am test -Dtest=ScaleTest -Dsurefire.failIfNoSpecifiedTests=false -Dwarden.scale=true</pre>
 * Smaller: {@code -Dwarden.scale.sessions=10000 -Dwarden.scale.locks=20000}.
 */
@EnabledIfSystemProperty(named = "warden.scale", matches = "true")
class ScaleTest {
    private static final int SESSIONS = Integer.getInteger("warden.scale.sessions", 100_000);
    private static final int LOCKS = Integer.getInteger("warden.scale.locks", 200_000);
    private static final int BATCH = 500;
    private WardenFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void aCellWithManySessionsAndLocks_isAdoptedListedCountedAndShown_withNoReplyNearThePacketLimit() throws Exception {
        long heap0 = usedHeapAfterGc();
        long t0 = System.nanoTime();
        List<String> sessions = writeCell();
        long heapZk = usedHeapAfterGc() - heap0;
        System.out.printf("scale: wrote %,d sessions and %,d locks in %d s; ZooKeeper's data tree ≈ %,d MB of heap%n",
                SESSIONS, LOCKS, seconds(t0), heapZk >> 20);

        // any reply over 512 KiB fails the call (zk-max-packet-bytes: the gateway client's jute.maxbuffer)
        long heap1 = usedHeapAfterGc();
        long t1 = System.nanoTime();
        Gateway g = fx.gateway(fx.config().withZkMaxPacketBytes(512 * 1024).withMaxEntriesPerLock(4_000));
        await("every orphan adopted", Duration.ofMinutes(10), () -> g.trackedSessions() == SESSIONS);
        System.out.printf("scale: gateway started and adopted %,d sessions in %d s%n", SESSIONS, seconds(t1));

        long t2 = System.nanoTime();
        int listed = 0;
        String after = null;
        do {
            LockPage page = g.warden().locks("scale", null, 1000, after).get(5, TimeUnit.MINUTES);
            listed += page.locks().size();
            after = page.nextAfter();
        } while (after != null && listed < 2_000);
        System.out.printf("scale: listed the first %,d locks (2 pages) in %d s%n", listed, seconds(t2));

        long t3 = System.nanoTime();
        List<NamespaceStats> spaces = g.warden().namespaces().get(10, TimeUnit.MINUTES);
        assertThat(spaces).singleElement().satisfies(ns -> {
            assertThat(ns.locks()).isEqualTo(LOCKS);
            assertThat(ns.holders()).isEqualTo(LOCKS);
        });
        System.out.printf("scale: counted the namespace in %d s%n", seconds(t3));

        long t4 = System.nanoTime();
        assertThat(g.consoleBackend().snapshot().get(10, TimeUnit.MINUTES).sessions()).hasSize(SESSIONS);
        System.out.printf("scale: console snapshot in %d s%n", seconds(t4));
        assertThat(g.warden().ready()).as("no reply over the lowered limit cost the gateway its connection").isTrue();
        assertThat(g.warden().session(sessions.get(0)).get(1, TimeUnit.MINUTES).holds()).hasSize(LOCKS / SESSIONS);

        long heapAll = usedHeapAfterGc();
        System.out.printf("scale: JVM heap used after GC: %,d MB with the cell written, %,d MB with the gateway serving it"
                + " (the difference, ≈ %,d MB, is the gateway's: tracked sessions, watch mirror, caches)%n",
                heap1 >> 20, heapAll >> 20, (heapAll - heap1) >> 20);
    }

    /** 100,000 session records and 200,000 locks (each one granted queue node with its request record). */
    private List<String> writeCell() throws Exception {
        CuratorFramework c = fx.curator;
        for (String parent : new String[]{CellPaths.SESSIONS, CellPaths.LOCK_DELAY}) {
            for (String shard : CellPaths.shards()) {
                c.create().creatingParentsIfNeeded().forPath(parent + "/" + shard);
            }
        }
        Random random = new Random(7);
        List<String> ids = new ArrayList<>(SESSIONS);
        byte[] record = Json.write(new SessionRecord("scale", 600_000, 0, "gw-gone", "0"));
        List<CuratorOp> ops = new ArrayList<>();
        Semaphore inFlight = new Semaphore(8);
        for (int i = 0; i < SESSIONS; i++) {
            byte[] b = new byte[16];
            random.nextBytes(b);
            String id = HexFormat.of().formatHex(b);
            ids.add(id);
            ops.add(c.transactionOp().create().forPath(CellPaths.session(id), record));
            ops = flush(c, ops, inFlight, false);
        }
        flush(c, ops, inFlight, true);
        // Lock nodes and their shards (CONTAINERs, as the engine makes them), then one granted request per lock.
        c.create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).forPath(CellPaths.LOCKS + "/scale");
        for (int s = 0; s < CellPaths.LOCK_SHARDS; s++) {
            c.create().withMode(CreateMode.CONTAINER).inBackground().forPath(CellPaths.LOCKS + "/scale/" + String.format("%03x", s));
        }
        await("shards made", Duration.ofMinutes(1), () -> children(CellPaths.LOCKS + "/scale") == CellPaths.LOCK_SHARDS);
        ops = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            ops.add(c.transactionOp().create().withMode(CreateMode.CONTAINER).forPath(CellPaths.lock(name(i))));
            ops = flush(c, ops, inFlight, false);
        }
        flush(c, ops, inFlight, true);
        ops = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            String session = ids.get(i % SESSIONS);
            String requestId = "r" + i;
            String uuid = CellPaths.requestUuid(session, requestId);
            ops.add(c.transactionOp().create().forPath(CellPaths.sessionRequest(session, uuid),
                    Json.write(new RequestRecord(name(i).toString(), Mode.EXCLUSIVE, requestId))));
            ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(CellPaths.lock(name(i)) + "/" + QueueEntry.prefix(uuid, Mode.EXCLUSIVE),
                            Json.write(new QueueNodeData(session, "scale", requestId, Mode.EXCLUSIVE, null))));
            ops = flush(c, ops, inFlight, false);
        }
        flush(c, ops, inFlight, true);
        return ids;
    }

    private static LockName name(int i) {
        return LockName.parse("scale/lock-" + i);
    }

    private static List<CuratorOp> flush(CuratorFramework c, List<CuratorOp> ops, Semaphore inFlight, boolean last) throws Exception {
        if (ops.size() < BATCH && !(last && !ops.isEmpty())) {
            return ops;
        }
        inFlight.acquire();
        c.transaction().inBackground((cl, e) -> {
            inFlight.release();
            if (e.getResultCode() != 0) {
                System.err.println("scale: a batch failed: " + e.getResultCode());
            }
        }).forOperations(ops);
        if (last) {
            inFlight.acquire(8);
            inFlight.release(8);
        }
        return new ArrayList<>();
    }

    private int children(String path) {
        try {
            return fx.curator.getChildren().forPath(path).size();
        } catch (Exception e) {
            return -1;
        }
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static long seconds(long since) {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - since);
    }
}
