package io.warden.service.lock;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.warden.console.model.AuditEntry;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.RevokeResult;
import io.warden.service.api.Warden;
import io.warden.service.api.WardenException;
import io.warden.service.queue.QueueNodeData;
import io.warden.service.support.WardenFixture;
import io.warden.service.watch.EventBatch;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import io.warden.service.watch.WatchFilter;
import io.warden.service.watch.WatchSink;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Graded revocation on a real ZooKeeper, time on the fixture's manual clock: the request is recorded with the hold and
 * seen on the watch; the hold is force-released at the end of its grace and not a moment before; a hold released
 * meanwhile (and its successor) is left alone; a repeat changes nothing; a token that does not hold is refused with
 * nothing written; a gateway that goes away leaves its revocation to another.
 */
class RevokeTest {
    private static final long TTL = 600_000;

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    /** Every event the gateway publishes, in order. */
    private static final class Events implements WatchSink {
        final List<WatchEvent> seen = new CopyOnWriteArrayList<>();

        @Override
        public boolean events(EventBatch batch, int[] selected) {
            List<WatchEvent> all = batch.events();
            for (int i = 0; i < (selected == null ? all.size() : selected.length); i++) {
                seen.add(all.get(selected == null ? i : selected[i]));
            }
            return true;
        }

        @Override
        public boolean resync(Resync resync) {
            return true;
        }

        @Override
        public void heartbeat() {
        }

        @Override
        public void close(String reason) {
        }

        boolean has(WatchEvent.Type type, String name, long token) {
            return seen.stream().anyMatch(e -> e.type() == type && e.name().equals(name) && e.token() == token);
        }
    }

    private Events watch(Gateway g) {
        Events events = new Events();
        g.watches().subscribe(WatchFilter.everything(), null, events);
        return events;
    }

    private static boolean current(Warden w, String name, long token) {
        return w.check(LockName.parse(name), token).orTimeout(20, TimeUnit.SECONDS).join().current();
    }

    private static RevokeResult revoke(Warden w, String name, long token, long graceMs) {
        return w.revoke(LockName.parse(name), token, graceMs, "maintenance", "alice").orTimeout(20, TimeUnit.SECONDS).join();
    }

    private List<AuditEntry> audit(Gateway g) {
        return g.consoleBackend().auditLog(100).orTimeout(20, TimeUnit.SECONDS).join();
    }

    private boolean recorded(String name, long token) throws Exception {
        return fx.curator.checkExists().forPath(CellPaths.revocation(LockName.parse(name), token)) != null;
    }

    @Test
    void revoke_holdStillHeldAtTheDeadline_isForceReleasedThen_andTheWaiterGranted() throws Exception {
        Gateway g = fx.gateway();
        Events events = watch(g);
        Warden w = g.warden();
        String holder = WardenFixture.session(w, "holder", TTL);
        String waiter = WardenFixture.session(w, "waiter", TTL);
        String name = "rv/deadline";
        long token = join(w.acquire(exclusive(holder, name, 0))).token();
        CompletableFuture<AcquireResult> next = w.acquire(exclusive(waiter, name, 60_000));
        await("the waiter is queued", () -> fx.queueSize(name) == 2);

        RevokeResult r = revoke(w, name, token, 5_000);

        assertThat(r.repeated()).isFalse();
        assertThat(r.sessionId()).isEqualTo(holder);
        assertThat(r.graceMs()).isEqualTo(5_000);
        // Recorded in ZooKeeper, with the hold and under /revocations; and on the watch.
        String node = fx.queue(name).stream().sorted().filter(n -> {
            try {
                return Json.readOrNull(fx.curator.getData().forPath(WardenFixture.lockPath(name) + "/" + n),
                        QueueNodeData.class).sessionId().equals(holder);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }).findFirst().orElseThrow();
        QueueNodeData data = Json.readOrNull(fx.curator.getData().forPath(WardenFixture.lockPath(name) + "/" + node),
                QueueNodeData.class);
        assertThat(data.revoke()).isEqualTo(new QueueNodeData.RevokeNote(5_000, "maintenance", "alice", g.gatewayId()));
        assertThat(data.sessionId()).isEqualTo(holder);
        assertThat(recorded(name, token)).isTrue();
        await("the watch says REVOKE_REQUESTED", () -> events.has(WatchEvent.Type.REVOKE_REQUESTED, name, token));

        fx.clock.advance(Duration.ofMillis(4_999));
        assertThat(current(w, name, token)).as("not forced before its grace").isTrue();
        assertThat(next).isNotDone();

        fx.clock.advance(Duration.ofMillis(1));
        AcquireResult granted = next.get(20, TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(AcquireResult.Status.GRANTED);
        assertThat(granted.token()).isGreaterThan(token);
        assertThat(current(w, name, token)).isFalse();
        await("the record is gone", () -> {
            try {
                return !recorded(name, token);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        await("both steps are audited", () -> audit(g).stream().map(AuditEntry::action).toList()
                .containsAll(List.of("revoke", "revoke-deadline")));
        assertThat(audit(g).stream().filter(e -> e.action().equals("revoke-deadline")).findFirst().orElseThrow().outcome())
                .startsWith("done: force-released");
        assertThat(events.seen.stream().filter(e -> e.token() == token).map(WatchEvent::type).toList())
                .containsSubsequence(WatchEvent.Type.REVOKE_REQUESTED, WatchEvent.Type.RELEASED);
    }

    @Test
    void revoke_holderReleasesInTime_successorIsNeverTouched() throws Exception {
        Gateway g = fx.gateway();
        Warden w = g.warden();
        String holder = WardenFixture.session(w, "holder", TTL);
        String waiter = WardenFixture.session(w, "waiter", TTL);
        String name = "rv/in-time";
        long token = join(w.acquire(exclusive(holder, name, 0))).token();
        CompletableFuture<AcquireResult> next = w.acquire(exclusive(waiter, name, 60_000));
        await("the waiter is queued", () -> fx.queueSize(name) == 2);
        revoke(w, name, token, 5_000);

        assertThat(w.release(holder, LockName.parse(name), token).get(20, TimeUnit.SECONDS)).isTrue();
        long successor = next.get(20, TimeUnit.SECONDS).token();
        await("the revocation finishes when the hold ends", () -> {
            try {
                return !recorded(name, token);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        fx.clock.advance(Duration.ofMillis(10_000));

        assertThat(current(w, name, successor)).as("the successor keeps its hold").isTrue();
        await("audited as let go", () -> audit(g).stream().anyMatch(e -> e.action().equals("revoke-deadline")
                && e.outcome().contains("let go")));
    }

    @Test
    void revokeTwice_secondIsRepeated_andWritesNothing() throws Exception {
        Gateway g = fx.gateway();
        Warden w = g.warden();
        String holder = WardenFixture.session(w, "holder", TTL);
        String name = "rv/twice";
        long token = join(w.acquire(exclusive(holder, name, 0))).token();
        RevokeResult first = revoke(w, name, token, 30_000);
        await("the request is audited", () -> audit(g).size() == 1);
        long zxid = fx.lastZxid();

        RevokeResult second = w.revoke(LockName.parse(name), token, 1, "again", "bob").get(20, TimeUnit.SECONDS);

        assertThat(second.repeated()).isTrue();
        assertThat(second.graceMs()).as("the first request's grace").isEqualTo(30_000);
        assertThat(second.reason()).isEqualTo("maintenance");
        assertThat(second.revision()).isEqualTo(first.revision());
        // The audit entry of the no-op is the only write.
        await("the repeat is audited", () -> audit(g).stream().anyMatch(e -> e.outcome().startsWith("no-op")));
        assertThat(fx.lastZxid()).isEqualTo(zxid + 1);
    }

    @Test
    void manyRevokesOfOneHold_leaveOneRecord_andOnePendingEntry() throws Exception {
        Gateway g = fx.gateway();
        Warden w = g.warden();
        String holder = WardenFixture.session(w, "holder", TTL);
        String name = "rv/many";
        long token = join(w.acquire(exclusive(holder, name, 0))).token();
        List<CompletableFuture<RevokeResult>> all = new java.util.ArrayList<>();
        for (int i = 0; i < 200; i++) {
            all.add(w.revoke(LockName.parse(name), token, 60_000, "r" + i, "alice"));
        }
        long firsts = all.stream().map(f -> f.orTimeout(30, TimeUnit.SECONDS).join()).filter(r -> !r.repeated()).count();

        assertThat(firsts).as("exactly one request was written").isEqualTo(1);
        assertThat(fx.curator.getChildren().forPath(CellPaths.REVOCATIONS)).hasSize(1);
        assertThat(g.revocations().pendingCount()).isEqualTo(1);
    }

    @Test
    void revoke_ofAQueuedOrStaleToken_isInvalidToken_andChangesNothing() throws Exception {
        Gateway g = fx.gateway();
        Warden w = g.warden();
        String holder = WardenFixture.session(w, "holder", TTL);
        String waiter = WardenFixture.session(w, "waiter", TTL);
        String name = "rv/not-held";
        long token = join(w.acquire(exclusive(holder, name, 0))).token();
        CompletableFuture<AcquireResult> waiting = w.acquire(exclusive(waiter, name, 60_000));
        await("the waiter is queued", () -> fx.queueSize(name) == 2);
        long queuedToken = 0;
        for (String node : fx.queue(name)) {
            var stat = new org.apache.zookeeper.data.Stat();
            byte[] data = fx.curator.getData().storingStatIn(stat).forPath(WardenFixture.lockPath(name) + "/" + node);
            if (waiter.equals(Json.readOrNull(data, QueueNodeData.class).sessionId())) {
                queuedToken = stat.getCzxid();
            }
        }
        assertThat(queuedToken).isGreaterThan(token);
        long zxid = fx.lastZxid();

        for (long t : new long[]{queuedToken, token + 1_000_000, token - 1}) {
            Throwable err = catchThrowable(() -> revoke(w, name, t, 1_000));
            assertThat(WardenFixture.code(err)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT);
            assertThat(((WardenException.InvalidArgumentException) unwrap(err)).field()).isEqualTo("token");
        }
        Throwable negative = catchThrowable(() -> revoke(w, name, token, -1));
        assertThat(((WardenException.InvalidArgumentException) unwrap(negative)).field()).isEqualTo("grace_ms");
        Throwable huge = catchThrowable(() -> revoke(w, name, token, RevokeResult.MAX_GRACE_MS + 1));
        assertThat(((WardenException.InvalidArgumentException) unwrap(huge)).field()).isEqualTo("grace_ms");

        assertThat(fx.lastZxid()).isEqualTo(zxid);
        assertThat(current(w, name, token)).isTrue();
        assertThat(waiting).isNotDone();
    }

    @Test
    void revoke_withGraceZero_forcesAtOnce() throws Exception {
        Gateway g = fx.gateway();
        Events events = watch(g);
        Warden w = g.warden();
        String holder = WardenFixture.session(w, "holder", TTL);
        String name = "rv/zero";
        long token = join(w.acquire(exclusive(holder, name, 0))).token();

        revoke(w, name, token, 0);
        fx.clock.advance(Duration.ZERO);

        await("the hold is released", () -> !current(w, name, token));
        await("the event came first", () -> events.has(WatchEvent.Type.RELEASED, name, token));
        assertThat(events.seen.stream().filter(e -> e.token() == token).map(WatchEvent::type).toList())
                .containsSubsequence(WatchEvent.Type.REVOKE_REQUESTED, WatchEvent.Type.RELEASED);
    }

    @Test
    void revoke_gatewayThatTookItGoesAway_anotherForcesAfterTheGrace() throws Exception {
        Gateway first = fx.gateway();
        Gateway second = fx.gateway();
        Warden w = first.warden();
        String holder = WardenFixture.session(w, "holder", TTL);
        String name = "rv/failover";
        long token = join(w.acquire(exclusive(holder, name, 0))).token();
        revoke(w, name, token, 5_000);
        await("the other gateway knows the revocation", () -> {
            fx.clock.advance(Duration.ofMillis(100));
            return second.revocations().pendingCount() == 1;
        });

        first.close();
        await("its hold is still there", () -> current(second.warden(), name, token));
        // Polls and the grace: the taker counts the grace from when it first saw the record, so it is never early.
        await("the other gateway forces it", () -> {
            fx.clock.advance(Duration.ofMillis(500));
            return !current(second.warden(), name, token);
        });
        await("the record is gone", () -> {
            try {
                return !recorded(name, token);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        await("audited by the taker", () -> audit(second).stream().anyMatch(e -> e.action().equals("revoke-deadline")
                && e.gateway().equals(second.gatewayId())));
    }

    @Test
    void holdersGatewayCutOffFromZooKeeper_theRevokingGatewayStillForcesAtTheDeadline() throws Exception {
        Gateway direct = fx.gateway();
        try (io.warden.service.support.ZkCutProxy proxy = new io.warden.service.support.ZkCutProxy(fx.server.getPort())) {
            Gateway behind = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
            try {
                String holder = WardenFixture.session(behind.warden(), "holder", TTL);
                String waiter = WardenFixture.session(direct.warden(), "waiter", TTL);
                String name = "rv/cut-off";
                long token = join(behind.warden().acquire(exclusive(holder, name, 0))).token();
                CompletableFuture<AcquireResult> next = direct.warden().acquire(exclusive(waiter, name, 60_000));
                await("the waiter is queued", () -> fx.queueSize(name) == 2);
                revoke(direct.warden(), name, token, 3_000);

                proxy.partition(); // the holder's gateway hears nothing more, and can do nothing
                fx.clock.advance(Duration.ofMillis(2_999));
                assertThat(current(direct.warden(), name, token)).isTrue();
                fx.clock.advance(Duration.ofMillis(1));

                assertThat(next.get(20, TimeUnit.SECONDS).status()).isEqualTo(AcquireResult.Status.GRANTED);
                assertThat(current(direct.warden(), name, token)).isFalse();
            } finally {
                proxy.heal();
                behind.close(); // before the proxy goes, or it waits out its ZooKeeper session
            }
        }
    }

    private static Throwable unwrap(Throwable t) {
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
