package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The watch API over {@code GET /v1/watch} against real gateways: order, filters, resume and failover. */
class WatchTest {
    private static final String NAME = "jobs/nightly-report";

    private Cell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
    }

    @AfterEach
    void tearDown() {
        cell.close();
    }

    @Test
    void acquireAndRelease_eventsArriveInOrder_onOneThread() {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        Set<Thread> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (Watch watch = alice.watch(WatchOptions.name(NAME), e -> {
            threads.add(Thread.currentThread());
            events.add(e);
        })) {
            long first;
            long second;
            try (Hold h = alice.lock(NAME).acquire(Duration.ofSeconds(5))) {
                first = h.token();
            }
            try (Hold h = bob.lock(NAME).acquire(Duration.ofSeconds(5))) {
                second = h.token();
            }

            Cell.await("six events", () -> events.size() >= 6);
            assertThat(events).extracting(LockEvent::type).containsExactly(
                    LockEvent.Type.QUEUED, LockEvent.Type.GRANTED, LockEvent.Type.RELEASED,
                    LockEvent.Type.QUEUED, LockEvent.Type.GRANTED, LockEvent.Type.RELEASED);
            assertThat(events).extracting(LockEvent::sessionId).containsExactly(
                    alice.sessionId(), alice.sessionId(), alice.sessionId(), bob.sessionId(), bob.sessionId(), bob.sessionId());
            assertThat(events).extracting(LockEvent::token).containsExactly(first, first, first, second, second, second);
            assertThat(events).allSatisfy(e -> {
                assertThat(e.name()).isEqualTo(NAME);
                assertThat(e.mode()).isEqualTo(LockMode.EXCLUSIVE);
                assertThat(e.locks()).isEmpty();
            });
            assertThat(events.get(0).revision()).as("an acquire that holds at once: QUEUED+GRANTED at its token")
                    .isEqualTo(first).isEqualTo(events.get(1).revision());
            assertThat(events).extracting(LockEvent::revision).isSorted();
            assertThat(watch.lastRevision()).isEqualTo(events.get(5).revision());
            assertThat(threads).hasSize(1);
        }
    }

    @Test
    void prefixWatch_seesOnlyLocksUnderThePrefix() {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Cell.url(gw));
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        try (Watch ignored = alice.watch(WatchOptions.prefix("jobs/night"), events::add)) {
            alice.lock("jobs/daily").acquire(Duration.ofSeconds(5)).close();
            alice.lock("other/nightly").acquire(Duration.ofSeconds(5)).close();
            alice.lock(NAME).acquire(Duration.ofSeconds(5)).close();

            Cell.await("three events", () -> events.size() >= 3);
            Cell.holdsFor("nothing else arrives", Duration.ofMillis(300), () -> events.size() == 3);
            assertThat(events).extracting(LockEvent::name).containsOnly(NAME);
        }
    }

    @Test
    void sinceRevisionZero_startsWithAResyncOfTheCurrentState() {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Cell.url(gw));
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        try (Hold hold = alice.lock(NAME).acquire(Duration.ofSeconds(5));
             Watch ignored = alice.watch(WatchOptions.name(NAME), 0, events::add)) {
            Cell.await("the resync", () -> !events.isEmpty());
            LockEvent resync = events.get(0);
            assertThat(resync.type()).isEqualTo(LockEvent.Type.RESYNC);
            assertThat(resync.revision()).isGreaterThanOrEqualTo(hold.token());
            assertThat(resync.locks()).singleElement().satisfies(lock -> {
                assertThat(lock.name()).isEqualTo(NAME);
                assertThat(lock.mode()).isEqualTo("EXCLUSIVE");
                assertThat(lock.holders()).singleElement().satisfies(h -> {
                    assertThat(h.token()).isEqualTo(hold.token());
                    assertThat(h.sessionId()).isEqualTo(alice.sessionId());
                });
            });
        }
    }

    @Test
    void close_stopsTheWatch_andCompletesDone() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Cell.url(gw));
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        Watch watch = alice.watch(WatchOptions.name(NAME), events::add);
        watch.close();
        watch.close();
        watch.done().toCompletableFuture().get();
        alice.lock(NAME).acquire(Duration.ofSeconds(5)).close();
        Cell.holdsFor("no events after close", Duration.ofMillis(300), events::isEmpty);
    }

    @Test
    void invalidOptions_areRefusedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> WatchOptions.name("no-namespace")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> WatchOptions.prefix("Bad")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Bad");
    }

    @Test
    void gatewayOfTheStreamStops_watchResumesOnTheOther_withoutGapOrRepeat() {
        Gateway g1 = cell.gateway();
        Gateway g2 = cell.gateway();
        WardenClient watcher = cell.client("watcher", Cell.url(g1), Cell.url(g2));
        WardenClient reference = cell.client("reference", Cell.url(g2));
        WardenClient actor = cell.client("actor", Cell.url(g2));
        List<LockEvent> moved = new CopyOnWriteArrayList<>();
        List<LockEvent> stayed = new CopyOnWriteArrayList<>();
        List<Long> tokens = new ArrayList<>();
        try (Watch a = watcher.watch(WatchOptions.prefix("jobs"), moved::add);
             Watch b = reference.watch(WatchOptions.prefix("jobs"), stayed::add)) {
            for (int i = 0; i < 5; i++) {
                try (Hold h = actor.lock("jobs/j" + (i % 2)).acquire(Duration.ofSeconds(5))) {
                    tokens.add(h.token());
                }
            }
            Cell.await("the moving watch saw the first events", () -> moved.size() >= 15);

            g1.close(); // the stream of `a` ends; it resumes at g2

            for (int i = 5; i < 12; i++) {
                try (Hold h = actor.lock("jobs/j" + (i % 2)).acquire(Duration.ofSeconds(5))) {
                    tokens.add(h.token());
                }
            }

            Cell.await("the uninterrupted watch saw every event", () -> stayed.size() >= 36);
            Cell.await("the moving watch caught up", () -> moved.size() >= 36);
            Cell.holdsFor("nothing more arrives", Duration.ofMillis(300), () -> moved.size() == 36 && stayed.size() == 36);
            assertThat(moved).as("no gap, no repeat, no resync").isEqualTo(stayed);
            assertThat(moved).filteredOn(e -> e.type() == LockEvent.Type.GRANTED).extracting(LockEvent::token)
                    .containsExactlyElementsOf(tokens);
            assertThat(a.lastRevision()).isEqualTo(b.lastRevision());
            assertThat(((SseWatch) a).streamsOpened()).as("the moving watch resumed once").isEqualTo(2);
            assertThat(((SseWatch) b).streamsOpened()).as("the other one never had to").isEqualTo(1);
        }
    }
}
