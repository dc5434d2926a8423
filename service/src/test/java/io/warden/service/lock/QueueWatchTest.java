package io.warden.service.lock;

import io.warden.service.support.WardenFixture;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.warden.service.support.WardenFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BlockerWatches}' queue watches (semaphore waiters): one watch per queue whatever the number of waiters, and the
 * waiters that read the queue before the watch was set are woken, together when they registered before the watch's reply
 * was looked at (the engine then reads the queue once for every call woken while a read is in flight).
 */
class QueueWatchTest {
    private WardenFixture fx;
    /** A ZooKeeper client of the test's own (no gateway): nothing else reads through it, so its counts are the watches'. */
    private io.warden.service.zk.Zk zk;
    private io.micrometer.core.instrument.simple.SimpleMeterRegistry registry;
    private final List<List<Object>> wakes = new CopyOnWriteArrayList<>();
    private BlockerWatches<Object> watches;
    private final String lock = "/locks/t/000/q";

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        io.warden.service.metrics.WardenMetrics metrics = new io.warden.service.metrics.WardenMetrics(registry);
        zk = new io.warden.service.zk.Zk(fx.curator, metrics);
        watches = new BlockerWatches<>(zk, fx.clock, metrics, c -> true,
                c -> wakes.add(List.of(c)), calls -> wakes.add(List.copyOf(calls)));
        fx.curator.create().creatingParentsIfNeeded().forPath(lock + "/_c_a-sem2-__WRIT__0000000000");
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    /** The getChildren calls made through the test's client (its ZooKeeper operation metric). */
    private double childReads() {
        return registry.find("warden.zk.operation").tag("op", "getChildren").timers().stream()
                .mapToDouble(t -> t.count()).sum();
    }

    private int cversion() throws Exception {
        return fx.curator.checkExists().forPath(lock).getCversion();
    }

    @Test
    void tenWaitersThatReadBeforeTheWatchWasSet_areWokenTogetherOnce() throws Exception {
        int stale = cversion();
        fx.curator.create().withMode(CreateMode.PERSISTENT).forPath(lock + "/_c_b-sem2-__WRIT__0000000001");
        List<Object> calls = new ArrayList<>();
        // Registered before the watch's reply is looked at (it needs this lock), each having read the queue before the
        // create above: the watch does not cover what they missed.
        synchronized (watches) {
            for (int i = 0; i < 10; i++) {
                Object call = "call-" + i;
                calls.add(call);
                watches.watchQueue(lock, call, stale);
            }
        }
        await("the stale waiters woken", () -> wakes.stream().mapToInt(List::size).sum() == 10);
        assertThat(wakes.stream().flatMap(List::stream).toList()).containsExactlyInAnyOrderElementsOf(calls);
        // The first may be woken alone (its watch's reply can come back before the others register); the rest, which
        // registered before the reply was looked at, together.
        assertThat(wakes).as("wake-ups").hasSizeLessThanOrEqualTo(2);
    }

    @Test
    void waitersThatReadTheQueueAsWatched_shareOneWatch_andAChangeWakesThemTogether() throws Exception {
        int now = cversion();
        assertThat(zk.childrenAndStat(lock).join().stat().getCversion()).as("cversion read by the client").isEqualTo(now);
        double reads = childReads();
        List<Object> calls = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Object call = "call-" + i;
            calls.add(call);
            watches.watchQueue(lock, call, now);
        }
        await("the watch set", () -> childReads() - reads >= 1);
        assertThat(childReads() - reads).as("one getChildren for ten waiters").isEqualTo(1);
        assertThat(wakes).isEmpty();

        fx.curator.create().withMode(CreateMode.PERSISTENT).forPath(lock + "/_c_b-sem2-__WRIT__0000000001");
        await("the waiters woken", () -> !wakes.isEmpty());
        assertThat(wakes).hasSize(1);
        assertThat(wakes.get(0)).containsExactlyInAnyOrderElementsOf(calls);
    }
}
