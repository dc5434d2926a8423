package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.support.WardenFixture;
import io.warden.service.zk.CellPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.ZooKeeperServerEmbeddedAdapter;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.ContainerManager;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

/**
 * Regression tests for the lock engine's trust in what ZooKeeper tells it: the queue order it derives from
 * sequence numbers, and the watches and registrations it leaves behind. Real ZooKeeper; where a state is too slow to
 * reach honestly (two billion creates), the test writes it into the server's data tree.
 */
class LockEngineTrustTest {
    private WardenFixture fx;
    private Gateway gw;
    private Warden w;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gw = fx.gateway();
        w = gw.warden();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    // ------------------------------------------------------------------ sequence overflow

    /*
     * The queue order is the sequential suffix, which ZooKeeper takes from the lock node's
     * cversion (PrepRequestProcessor: String.format("%010d", parentCVersion)). At 2^31-1 the data tree's cversion
     * stops growing, so every new child gets the suffix 2147483647; ties were broken by node name (a uuid), and a
     * newer request whose uuid sorts first was granted while the older one held: two EXCLUSIVE holders.
     */
    @Test
    void exclusiveRequestsTiedAtTheSequenceLimit_areNeverBothGranted() throws Exception {
        String a = session(w, "a", 60_000);
        String b = session(w, "b", 60_000);
        createLockNode("seq/tie");
        setChildVersion("seq/tie", Integer.MAX_VALUE);
        AcquireRequest first = request(a, "seq/tie", "first");
        // b's request sorts before a's by name, as a random one does half of the time.
        AcquireRequest second = null;
        for (int i = 0; second == null; i++) {
            AcquireRequest candidate = request(b, "seq/tie", "second-" + i);
            if (uuid(candidate).compareTo(uuid(first)) < 0) {
                second = candidate;
            }
        }

        Outcome one = outcome(w.acquire(first));
        Outcome two = outcome(w.acquire(second));

        assertThat(one.granted() && two.granted()).as("two EXCLUSIVE holders of seq/tie (%s, %s); queue %s",
                one, two, fx.queue("seq/tie")).isFalse();
        assertThat(one.code()).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED);
        assertThat(two.code()).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED);
        assertThat(fx.queue("seq/tie")).isEmpty();
    }

    /*
     * The way out: a lock node whose cversion is near the limit takes no new entries, so it
     * drains, ZooKeeper reaps the empty CONTAINER node, and the name starts again from sequence 0.
     */
    @Test
    void lockNodeNearTheSequenceLimit_refusesNewEntries_untilItDrainsAndStartsAgainAtZero() throws Exception {
        String a = session(w, "a", 60_000);
        String b = session(w, "b", 60_000);
        AcquireResult held = join(w.acquire(exclusive(a, "seq/near", 0)));
        setChildVersion("seq/near", Integer.MAX_VALUE - 500_000);
        AcquireRequest late = exclusive(b, "seq/near", 0);

        Throwable refused = catchThrowable(() -> join(w.acquire(late)));

        assertThat(refused).as("an acquire on a lock near the sequence limit").isNotNull();
        assertThat(code(refused)).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED);
        assertThat(refused).hasMessageContaining("seq/near");
        assertThat(fx.queue("seq/near")).as("only the holder is queued").hasSize(1);
        assertThat(fx.curator.getChildren().forPath(io.warden.service.zk.CellPaths.session(b))).as("the refused request left no record").isEmpty();
        long cversion = childVersion("seq/near");
        for (int i = 0; i < 5; i++) {
            Throwable again = catchThrowable(() -> join(w.acquire(exclusive(b, "seq/near", 0))));
            assertThat(again).isNotNull();
            assertThat(code(again)).isEqualTo(WardenException.ErrorCode.RESOURCE_EXHAUSTED);
        }
        assertThat(childVersion("seq/near")).as("refusals do not use up sequence numbers").isEqualTo(cversion);

        assertThat(w.release(a, LockName.parse("seq/near"), held.token()).join()).isTrue();
        reapContainers();
        assertThat(fx.curator.checkExists().forPath(WardenFixture.lockPath("seq/near"))).as("the empty lock node is reaped").isNull();

        AcquireResult granted = join(w.acquire(late));
        assertThat(granted.status()).isEqualTo(Status.GRANTED);
        assertThat(fx.queue("seq/near")).singleElement().asString().endsWith("__WRIT__0000000000");
    }

    // ------------------------------------------------------------------ watches on vanished blockers

    /*
     * A blocked call watched its blocker with exists(). When the blocker was deleted between the
     * call's read of the queue and that exists(), the exists() answered "no node" and left a watch for the node's
     * creation on the server. A queue node's name is never made again, so that watch stayed for the life of the
     * gateway's ZooKeeper session, and was sent again on every reconnect.
     *
     * The window is made deterministic by the gateway's one ZooKeeper connection, which keeps request order: a
     * try-lock T and a waiting call W queue behind a holder at once; T's read is answered first, and T (not holding,
     * wait_ms 0) sends the delete of its node before W, whose read still shows T as its blocker, sends its watch.
     */
    @Test
    void waitersWhoseBlockerVanishesJustBeforeTheWatch_leaveNoWatchOnTheServer() throws Exception {
        String holder = session(w, "h", 60_000);
        String trier = session(w, "t", 60_000);
        String waiter = session(w, "w", 60_000);
        fx.awaitSessionWatches(holder, trier, waiter);
        int baseline = fx.watchCount();
        int rounds = 20;

        for (int i = 0; i < rounds; i++) {
            String name = "vanish/lock-" + i;
            AcquireResult held = join(w.acquire(exclusive(holder, name, 0)));
            CompletableFuture<AcquireResult> tryLock = w.acquire(exclusive(trier, name, 0));
            CompletableFuture<AcquireResult> waits = w.acquire(exclusive(waiter, name, 60_000));
            assertThat(join(tryLock).status()).isEqualTo(Status.TIMED_OUT);
            await("the waiter is queued behind the holder", () -> fx.queueSize(name) == 2 && !waits.isDone());

            assertThat(w.release(holder, LockName.parse(name), held.token()).join()).isTrue();
            AcquireResult granted = join(waits);
            assertThat(granted.status()).isEqualTo(Status.GRANTED);
            assertThat(w.release(waiter, LockName.parse(name), granted.token()).join()).isTrue();
        }

        assertThat(fx.watchCount()).as("watches on the server after %d rounds (baseline %d); on queue nodes: %s", rounds,
                baseline, queueNodeWatches()).isEqualTo(baseline);
    }

    // ------------------------------------------------------------------ watchers of finished calls

    /*
     * Every held call registered its own watcher on its blocker, and nothing took it off when the
     * call finished (timed out, cancelled, failed): it stayed on the ZooKeeper client until the blocker changed, with
     * the server's watch under it. 200 timed-out try-locks with wait_ms = 200 behind a long-lived holder left 200
     * watcher objects on the gateway's client. Here 10 locks have a holder and 5 SHARED waiters each; all 50 time out.
     */
    @Test
    void waitingCallsThatTimeOut_leaveNoWatchersOnTheClientAndNoWatchesOnTheServer() throws Exception {
        String holder = session(w, "h", 60_000);
        List<String> readers = new ArrayList<>();
        for (int r = 0; r < 5; r++) {
            readers.add(session(w, "r" + r, 60_000));
        }
        List<String> all = new ArrayList<>(readers);
        all.add(holder);
        fx.awaitSessionWatches(all.toArray(String[]::new));
        int serverBaseline = fx.watchCount();
        int clientBaseline = clientWatchers();
        int locks = 10;
        for (int i = 0; i < locks; i++) {
            join(w.acquire(exclusive(holder, "finished/lock-" + i, 0)));
        }
        double readsBefore = blockerReads();
        List<CompletableFuture<AcquireResult>> calls = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            for (String reader : readers) {
                calls.add(w.acquire(shared(reader, "finished/lock-" + i, 200)));
            }
        }
        await("every call watches its blocker", () -> blockerReads() - readsBefore >= calls.size());
        assertThat(calls).noneMatch(CompletableFuture::isDone);

        fx.clock.advance(Duration.ofMillis(200));

        for (CompletableFuture<AcquireResult> call : calls) {
            assertThat(join(call).status()).isEqualTo(Status.TIMED_OUT);
        }
        eventually(() -> fx.watchCount() == serverBaseline && clientWatchers() == clientBaseline);
        int clientAfter = clientWatchers();
        int serverAfter = fx.watchCount();
        List<String> onQueueNodes = queueNodeWatches();
        assertSoftly(soft -> {
            soft.assertThat(clientAfter).as("watcher objects on the gateway's ZooKeeper client (baseline %d)", clientBaseline)
                    .isEqualTo(clientBaseline);
            soft.assertThat(serverAfter).as("watches on the server (baseline %d); on queue nodes: %s", serverBaseline,
                    onQueueNodes).isEqualTo(serverBaseline);
        });
        assertThat(fx.queue("finished/lock-0")).as("the holders hold on").hasSize(1);
    }

    /*
     * The other side: a node's watch is removed from the server when its last waiting call
     * leaves, and that removal takes off every watch of the gateway on the node. A call that starts waiting for the
     * same node at that moment must still be woken when the node goes.
     */
    @Test
    void aCallThatStartsWaitingAsTheLastOneLeaves_isStillWokenByTheRelease() {
        String holder = session(w, "h", 60_000);
        String early = session(w, "e", 60_000);
        String late = session(w, "l", 60_000);
        for (int i = 0; i < 20; i++) {
            String name = "handover/lock-" + i;
            AcquireResult held = join(w.acquire(exclusive(holder, name, 0)));
            CompletableFuture<AcquireResult> leaving = w.acquire(shared(early, name, 100));
            await("the first call waits", () -> gw.pendingAcquires() == 1);

            CompletableFuture<AcquireResult> arriving = w.acquire(shared(late, name, 60_000));
            fx.clock.advance(Duration.ofMillis(100));
            assertThat(join(leaving).status()).isEqualTo(Status.TIMED_OUT);
            await("the second call waits", () -> fx.queueSize(name) == 2);

            assertThat(w.release(holder, LockName.parse(name), held.token()).join()).isTrue();
            AcquireResult granted = join(arriving);
            assertThat(granted.status()).as("round %d", i).isEqualTo(Status.GRANTED);
            assertThat(w.release(late, LockName.parse(name), granted.token()).join()).isTrue();
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Watcher objects registered on the gateway's ZooKeeper client (one-shot data, exists and child watches). */
    private int clientWatchers() {
        try {
            CuratorFramework client = gw.curator();
            ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
            Method manager = ZooKeeper.class.getDeclaredMethod("getWatchManager");
            manager.setAccessible(true);
            Object watches = manager.invoke(zooKeeper);
            int n = 0;
            for (String kind : new String[]{"dataWatches", "existWatches", "childWatches"}) {
                @SuppressWarnings("unchecked")
                Map<String, Set<Watcher>> byPath = (Map<String, Set<Watcher>>) field(watches, kind);
                synchronized (byPath) {
                    for (Set<Watcher> set : byPath.values()) {
                        n += set.size();
                    }
                }
            }
            return n;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The gateway's reads of single nodes (getData and exists): a waiting call makes one to watch its blocker. */
    private double blockerReads() {
        return gw.metrics().registry().find("warden.zk.operation").timers().stream()
                .filter(t -> List.of("getData", "exists").contains(t.getId().getTag("op"))).mapToDouble(t -> t.count()).sum();
    }

    /** Waits up to five seconds for a condition, without failing: the assertions after it say what is wrong. */
    private static void eventually(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    /** The watches the server holds, as "path session" lines (4lw {@code wchp}). */
    /** The server's watches on queue nodes (children of a lock node). */
    private List<String> queueNodeWatches() throws Exception {
        return fx.serverWatches().stream().filter(wt -> wt.matches("/warden/locks/.*/_c_[^/ ]*__(WRIT|READ)__-?\\d+ .*")).toList();
    }

    private record Outcome(Status status, WardenException.ErrorCode code) {
        boolean granted() {
            return status == Status.GRANTED;
        }
    }

    private static Outcome outcome(CompletableFuture<AcquireResult> call) {
        try {
            return new Outcome(join(call).status(), null);
        } catch (RuntimeException e) {
            return new Outcome(null, code(e));
        }
    }

    private static AcquireRequest request(String session, String name, String requestId) {
        return new AcquireRequest(session, LockName.parse(name), Mode.EXCLUSIVE, 0, requestId, OnTimeout.CANCEL);
    }

    private static String uuid(AcquireRequest r) {
        return CellPaths.requestUuid(r.sessionId(), r.requestId());
    }

    private void createLockNode(String name) throws Exception {
        fx.curator.create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).forPath(WardenFixture.lockPath(name));
    }

    /**
     * The lock node's persisted cversion: the count of its children's creates, and the next sequence suffix. Clients
     * see {@code 2 * creates - children} (ZooKeeper's {@code DataNode.copyStat}), in int arithmetic.
     */
    private long childVersion(String name) throws Exception {
        Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(name));
        return Integer.toUnsignedLong(stat.getCversion() + stat.getNumChildren()) / 2;
    }

    /** Writes the lock node's cversion (the next sequence suffix) into the server's data tree. */
    private void setChildVersion(String name, int cversion) throws Exception {
        Stat stat = fx.curator.checkExists().forPath(WardenFixture.lockPath(name));
        zkServer().getZKDatabase().getDataTree().setCversionPzxid("/warden" + WardenFixture.lockPath(name), cversion, stat.getPzxid());
        assertThat(childVersion(name)).isEqualTo((long) cversion);
    }

    /** Runs the server's container reaper once now, instead of waiting for its one-minute timer. */
    private void reapContainers() throws Exception {
        Object embedded = field(testingMain(), "zooKeeperEmbedded");
        Object main = field(embedded, "mainsingle");
        ((ContainerManager) field(main, "containerManager")).checkContainers();
    }

    private ZooKeeperServer zkServer() throws Exception {
        return ((ZooKeeperServerEmbeddedAdapter) testingMain()).getServerCnxnFactory().getZooKeeperServer();
    }

    /** Curator's adapter for the embedded server behind {@code fx.server} (package-private API, so by reflection). */
    private Object testingMain() throws Exception {
        Method server = TestingServer.class.getDeclaredMethod("getTestingZooKeeperServer");
        server.setAccessible(true);
        Object testing = server.invoke(fx.server);
        Method main = testing.getClass().getDeclaredMethod("getMain");
        main.setAccessible(true);
        return main.invoke(testing);
    }

    private static Object field(Object owner, String name) throws Exception {
        for (Class<?> c = owner.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(owner);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(owner.getClass() + "." + name);
    }
}
