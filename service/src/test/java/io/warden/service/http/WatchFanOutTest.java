package io.warden.service.http;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import io.warden.service.watch.EventBatch;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import io.warden.service.watch.WatchFilter;
import io.warden.service.watch.WatchHub;
import io.warden.service.watch.WatchSink;
import io.warden.service.watch.WatchSource;
import io.warden.service.zk.Zk;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * What one event costs the watch thread, in counts. Each event was serialised once per watch on
 * the one thread that also applies ZooKeeper's notifications, every watch's filter was tried on every event, and the
 * hand-off from ZooKeeper's thread had no bound (delivery lag 0.8 s at 1,000 watchers, 2.4 s at 3,000; an
 * {@code OutOfMemoryError} in ZooKeeper's event thread under stalled watches).
 */
class WatchFanOutTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void eachEventIsSerialisedOnce_notOncePerWatch() {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        String s = WardenFixture.session(w, "fan", 60_000);
        long start = join(w.acquire(exclusive(s, "fan/start", 0))).token();
        int watchers = 200;
        List<SseTestClient> streams = new ArrayList<>();
        try {
            for (int i = 0; i < watchers; i++) {
                streams.add(SseTestClient.watch(gw.httpPort(), "?prefix=fan&since_revision=" + start));
            }
            long encodedBefore = SseStream.ENCODED.get();
            WatchHub.Stats before = gw.watches().stats();
            for (int i = 0; i < 10; i++) {
                join(w.acquire(exclusive(s, "fan/lock-" + i, 0))); // QUEUED and GRANTED: one transaction each
            }
            w.closeSession(s).join(); // 11 RELEASED: one transaction
            int events = 2 * 10 + 11;
            for (SseTestClient sse : streams) {
                List<SseTestClient.Event> got = sse.next(events);
                assertThat(got.get(events - 1).type()).isEqualTo("RELEASED");
                assertThat(got.get(events - 1).id()).isEqualTo(Long.toString(got.get(events - 1).revision()));
            }
            long encoded = SseStream.ENCODED.get() - encodedBefore;
            long deliveries = gw.watches().stats().deliveries() - before.deliveries();
            System.out.printf("%d watchers, %d events: %d serialisations, %d deliveries%n", watchers, events, encoded, deliveries);
            assertThat(encoded).as("serialisations of %d events to %d watches", events, watchers).isEqualTo(events);
            // one call per watch and transaction (and the gateway's three own watches of everything: the console's event
            // log, the revocations' listener, and the removed requests' listener that answers a deadlock victim's call)
            assertThat(deliveries).isLessThanOrEqualTo((watchers + 3) * 11L);
        } finally {
            streams.forEach(SseTestClient::close);
        }
    }

    @Test
    void anEventCostsTheWatchesThatWantIt_notEveryWatch() {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        List<WatchSource.Subscription> subs = new ArrayList<>();
        Recording hot = new Recording();
        subs.add(gw.watches().subscribe(WatchFilter.name(LockName.parse("idx/hot")), null, hot));
        for (int i = 0; i < 2000; i++) {
            subs.add(gw.watches().subscribe(WatchFilter.name(LockName.parse("idx/lock-" + i)), null, new Recording()));
            if (i % 3 == 0) {
                subs.add(gw.watches().subscribe(WatchFilter.of(null, "idx/lock-" + i + "-"), null, new Recording()));
            }
        }
        subs.add(gw.watches().subscribe(WatchFilter.of(null, "other"), null, new Recording()));
        // the SDK's watches of their own sessions' holds: indexed by session, not checked per event
        for (int i = 0; i < 1000; i++) {
            subs.add(gw.watches().subscribe(new WatchFilter(null, "", "other-session-" + i), null, new Recording()));
        }
        String s = WardenFixture.session(w, "idx", 60_000);
        Recording own = new Recording();
        subs.add(gw.watches().subscribe(new WatchFilter(null, "", s), null, own));
        // a first transaction seen by the hot watch: every subscription above is active by then
        AcquireResult first = join(w.acquire(exclusive(s, "idx/hot", 0)));
        WardenFixture.await("the hot watch and the session's saw the first grant", () -> hot.events.size() >= 2 && own.events.size() >= 2);
        WatchHub.Stats before = gw.watches().stats();
        w.release(s, LockName.parse("idx/hot"), first.token()).join();
        for (int i = 0; i < 49; i++) {
            AcquireResult r = join(w.acquire(exclusive(s, "idx/hot", 0)));
            w.release(s, LockName.parse("idx/hot"), r.token()).join();
        }
        int events = 1 + 49 * 3;
        WardenFixture.await("the hot watch saw every event", () -> hot.events.size() >= 2 + events);
        long checks = gw.watches().stats().filterChecks() - before.filterChecks();
        System.out.printf("%d watches, %d events: %d filter checks%n", subs.size(), events, checks);
        // the hot watch, the session's own watch, and the gateway's three own watches of everything (the console's event
        // log, the revocations' listener, the removed requests' listener) per event, nothing else
        assertThat(checks).as("filter checks for %d events with %d watches", events, subs.size()).isLessThanOrEqualTo(5L * events);
        WardenFixture.await("the session's own watch saw every event", () -> own.events.size() >= 2 + events);
        subs.forEach(WatchSource.Subscription::cancel);
    }

    /**
     * The hand-off from ZooKeeper's event thread to the watch thread is bounded: when the watch thread is held up (here
     * a sink that blocks it, as a starved CPU would), notifications past the bound are dropped rather than queued, and
     * once it runs again it rebuilds the mirror from a full read and every watch gets a RESYNC that is exact.
     */
    @Test
    void aWatchThreadThatFallsBehind_dropsAndRebuilds_insteadOfQueueingWithoutBound() throws Exception {
        Gateway gw = fx.gateway(); // makes the cell's nodes, and the changes
        Warden w = gw.warden();
        int bound = 200;
        try (WatchHub hub = new WatchHub(new Zk(fx.curator, new WardenMetrics(new SimpleMeterRegistry())), "/warden",
                fx.clock, "behind-test", WatchHub.DEFAULT_HISTORY, bound)) {
            hub.start();
            assertThat(hub.awaitReady(Duration.ofSeconds(20))).isTrue();
            CountDownLatch unblock = new CountDownLatch(1);
            Recording blocker = new Recording() {
                @Override
                public boolean events(EventBatch batch, int[] selected) {
                    try {
                        unblock.await(60, TimeUnit.SECONDS); // holds the watch thread up
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return super.events(batch, selected);
                }
            };
            Recording watcher = new Recording();
            hub.subscribe(WatchFilter.of(null, "behind"), null, blocker);
            hub.subscribe(WatchFilter.of(null, "behind"), null, watcher);
            String s = WardenFixture.session(w, "behind", 120_000);
            join(w.acquire(exclusive(s, "behind/first", 0)));
            WardenFixture.await("the watch thread is held up", () -> hub.stats().deliveries() >= 1);
            int locks = 300; // 3 notifications each the hub wants: the request record, the client-id note, the node
            for (int i = 0; i < locks; i++) {
                join(w.acquire(exclusive(s, "behind/lock-" + i, 0)));
            }
            WardenFixture.await("notifications were dropped", () -> hub.stats().droppedNotifications() > 0);
            unblock.countDown();
            WardenFixture.await("the watch got a RESYNC after the rebuild", () -> watcher.resyncs.size() >= 1);
            WatchHub.Stats stats = hub.stats();
            System.out.printf("bound %d: most waiting %d, dropped %d, fell behind %d time(s)%n", bound,
                    stats.mostPendingNotifications(), stats.droppedNotifications(), stats.fallBehinds());
            assertThat(stats.mostPendingNotifications()).isLessThanOrEqualTo(bound);
            assertThat(stats.fallBehinds()).isPositive();
            Resync resync = watcher.resyncs.get(0);
            assertThat(resync.locks()).as("exact: every hold made while the thread was behind").hasSize(locks + 1);
            assertThat(resync.locks()).allSatisfy(l -> assertThat(l.holders()).hasSize(1));
        }
    }

    /** An in-process watch that keeps what it gets. */
    private static class Recording implements WatchSink {
        final List<WatchEvent> events = new CopyOnWriteArrayList<>();
        final List<Resync> resyncs = new CopyOnWriteArrayList<>();

        @Override
        public boolean events(EventBatch batch, int[] selected) {
            List<WatchEvent> all = batch.events();
            if (selected == null) {
                events.addAll(all);
            } else {
                for (int i : selected) {
                    events.add(all.get(i));
                }
            }
            return true;
        }

        @Override
        public boolean resync(Resync resync) {
            resyncs.add(resync);
            return true;
        }

        @Override
        public void heartbeat() {
        }

        @Override
        public void close(String reason) {
        }
    }
}
