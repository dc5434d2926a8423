package io.warden.service.console;

import io.warden.console.model.AdminResult;
import io.warden.console.model.AuditEntry;
import io.warden.console.model.CellInfo;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.Health;
import io.warden.console.model.LockDetail;
import io.warden.console.model.LockEvent;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import io.warden.console.model.QueuedRequest;
import io.warden.console.model.SessionState;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static io.warden.service.support.WardenFixture.shared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** The console's view of a real cell (real ZooKeeper, real gateways) and its audited admin actions. */
class ConsoleBridgeTest {
    private WardenFixture fx;
    private Gateway gw;
    private Warden w;
    private ConsoleBridge console;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gw = fx.gateway();
        w = gw.warden();
        console = gw.consoleBackend();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private CellSnapshot snapshot() {
        fx.clock.advance(ConsoleBridge.SNAPSHOT_TTL.plusMillis(1)); // past the shared copy's lifetime
        return console.snapshot().orTimeout(20, TimeUnit.SECONDS).join();
    }

    private static AuditEntry entry(String action, String target) {
        return new AuditEntry(Instant.now(), "alice", action, target, "stuck since the deploy", "127.0.0.1", null, null);
    }

    @Test
    void snapshot_showsHoldersThenWaitersInQueueOrder_withTokensClientsAndSessions() {
        String a = session(w, "billing-a", 10_000);
        String b = session(w, "billing-b", 10_000);
        String c = session(w, "reporting", 10_000);
        AcquireResult held = join(w.acquire(exclusive(a, "payments/invoice-42", 0)));
        CompletableFuture<AcquireResult> second = w.acquire(exclusive(b, "payments/invoice-42", 60_000));
        await("b queued", () -> fx.queueSize("payments/invoice-42") == 2);
        CompletableFuture<AcquireResult> third = w.acquire(shared(c, "payments/invoice-42", 60_000));
        await("c queued", () -> fx.queueSize("payments/invoice-42") == 3);

        CellSnapshot s = snapshot();

        assertThat(s.locks()).extracting(LockState::name).containsExactly("payments/invoice-42");
        LockState lock = s.locks().get(0);
        assertThat(lock.namespace()).isEqualTo("payments");
        assertThat(lock.queue()).extracting(QueuedRequest::sessionId, QueuedRequest::clientId, QueuedRequest::mode,
                        QueuedRequest::position, QueuedRequest::holds)
                .containsExactly(tuple(a, "billing-a", Mode.EXCLUSIVE, 0, true), tuple(b, "billing-b", Mode.EXCLUSIVE, 1, false),
                        tuple(c, "reporting", Mode.SHARED, 2, false));
        assertThat(lock.queue().get(0).token()).isEqualTo(held.token());
        assertThat(lock.queue().get(1).token()).isGreaterThan(held.token());
        assertThat(lock.queue()).allSatisfy(r -> assertThat(r.requestedAt()).isBefore(Instant.now().plusSeconds(5)));
        assertThat(s.revision()).isGreaterThanOrEqualTo(lock.queue().get(2).token());
        assertThat(s.sessions()).extracting(SessionState::sessionId, SessionState::clientId, SessionState::gateway,
                        SessionState::gatewayLive, SessionState::ttlMs)
                .containsExactlyInAnyOrder(tuple(a, "billing-a", gw.gatewayId(), true, 10_000L),
                        tuple(b, "billing-b", gw.gatewayId(), true, 10_000L), tuple(c, "reporting", gw.gatewayId(), true, 10_000L));
        // The ticker moved 1 s since the sessions opened: the tracking gateway's measure says so.
        assertThat(s.sessions()).allSatisfy(ss -> assertThat(ss.ttlRemainingMs()).isBetween(8_000L, 9_000L));
        second.cancel(true);
        third.cancel(true);
    }

    @Test
    void snapshot_asksTheTrackingGatewayForTheTtlLeft() {
        Gateway other = fx.gateway();
        String here = session(w, "here", 10_000);
        String there = session(other.warden(), "there", 20_000);

        CellSnapshot s = snapshot();

        assertThat(s.sessions()).extracting(SessionState::sessionId, SessionState::gateway, SessionState::ttlRemainingMs)
                .containsExactlyInAnyOrder(tuple(here, gw.gatewayId(), 10_000L - 1_001L),
                        tuple(there, other.gatewayId(), 20_000L - 1_001L));
        other.close(); // its sessions are adopted by the leader, this gateway, with a fresh TTL
        await("the session shows as tracked here", () -> snapshot().sessions().stream()
                .anyMatch(ss -> ss.sessionId().equals(there) && ss.gateway().equals(gw.gatewayId()) && ss.gatewayLive()
                        && ss.ttlRemainingMs() != null));
    }

    @Test
    void snapshot_isSharedForASecond_thenReadAgain() {
        String a = session(w, "svc", 10_000);
        CellSnapshot first = snapshot();
        join(w.acquire(exclusive(a, "jobs/nightly", 0)));
        assertThat(console.snapshot().join()).isSameAs(first);
        assertThat(snapshot().locks()).extracting(LockState::name).containsExactly("jobs/nightly");
    }

    @Test
    void lock_showsRecentEventsNewestFirst_andWhenTheGrantWasSeen() {
        String a = session(w, "svc-a", 10_000);
        String b = session(w, "svc-b", 10_000);
        AcquireResult first = join(w.acquire(exclusive(a, "jobs/report", 0)));
        CompletableFuture<AcquireResult> waiting = w.acquire(exclusive(b, "jobs/report", 60_000));
        await("b queued", () -> fx.queueSize("jobs/report") == 2);
        assertThat(w.release(a, LockName.parse("jobs/report"), first.token()).join()).isTrue();
        AcquireResult second = join(waiting);

        await("the release and the grant are in the console's events", () -> console.lock("jobs/report").join()
                .map(d -> d.recentEvents().size() >= 5).orElse(false));
        LockDetail d = console.lock("jobs/report").join().orElseThrow();
        assertThat(d.recentEvents()).extracting(LockEvent::type, LockEvent::token).startsWith(
                tuple("GRANTED", second.token()), tuple("RELEASED", first.token()), tuple("QUEUED", second.token()));
        assertThat(d.recentEvents()).allSatisfy(e -> assertThat(e.seenAt()).isNotNull());
        QueuedRequest holder = d.lock().holders().get(0);
        assertThat(holder.sessionId()).isEqualTo(b);
        assertThat(holder.grantedAt()).isNotNull().isAfterOrEqualTo(holder.requestedAt().minusSeconds(1));
        assertThat(holder.heldSince()).isEqualTo(holder.grantedAt());
        assertThat(console.lock("jobs/free").join()).isEmpty();
    }

    @Test
    void snapshot_showsADirectModeCuratorHolder_withoutASession() throws Exception {
        InterProcessReadWriteLock direct = new InterProcessReadWriteLock(fx.curator, WardenFixture.lockPath("shared/res"));
        assertThat(direct.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
        try {
            QueuedRequest r = snapshot().locks().get(0).queue().get(0);
            assertThat(r.sessionId()).isNull();
            assertThat(r.clientId()).isEqualTo("curator");
            assertThat(r.holds()).isTrue();
            AdminResult refused = console.forceRelease("shared/res", r.token(), entry("FORCE_RELEASE", "shared/res#" + r.token()))
                    .join();
            assertThat(refused.done()).isFalse();
            assertThat(refused.message()).contains("direct-mode");
            assertThat(fx.queueSize("shared/res")).isEqualTo(1);
        } finally {
            direct.writeLock().release();
        }
    }

    @Test
    void forceRelease_freesTheHold_promotesTheWaiter_andIsAudited() {
        String a = session(w, "stuck-worker", 10_000);
        String b = session(w, "next-worker", 10_000);
        AcquireResult stuck = join(w.acquire(exclusive(a, "payments/invoice-42", 0)));
        CompletableFuture<AcquireResult> waiting = w.acquire(exclusive(b, "payments/invoice-42", 60_000));
        await("b queued", () -> fx.queueSize("payments/invoice-42") == 2);

        AdminResult r = console.forceRelease("payments/invoice-42", stuck.token(),
                entry("FORCE_RELEASE", "payments/invoice-42#" + stuck.token())).join();

        assertThat(r.done()).isTrue();
        assertThat(r.message()).contains("released payments/invoice-42 token " + stuck.token()).contains(a);
        assertThat(join(waiting).status()).isEqualTo(AcquireResult.Status.GRANTED);
        LockView view = w.lock(LockName.parse("payments/invoice-42")).join();
        assertThat(view.holders()).extracting(h -> h.sessionId()).containsExactly(b);

        AdminResult again = console.forceRelease("payments/invoice-42", stuck.token(),
                entry("FORCE_RELEASE", "payments/invoice-42#" + stuck.token())).join();
        assertThat(again.done()).isFalse();
        assertThat(again.message()).contains("does not hold");

        List<AuditEntry> log = console.auditLog(10).join();
        assertThat(log).extracting(AuditEntry::actor, AuditEntry::action, AuditEntry::target, AuditEntry::reason,
                        AuditEntry::gateway)
                .containsExactly(
                        tuple("alice", "FORCE_RELEASE", "payments/invoice-42#" + stuck.token(), "stuck since the deploy", gw.gatewayId()),
                        tuple("alice", "FORCE_RELEASE", "payments/invoice-42#" + stuck.token(), "stuck since the deploy", gw.gatewayId()));
        assertThat(log.get(0).outcome()).startsWith("no-op: ");
        assertThat(log.get(1).outcome()).startsWith("done: released");
    }

    @Test
    void expireSession_ofASessionTrackedByAnotherGateway_releasesItsHolds_andTheSessionIsGone() {
        Gateway other = fx.gateway();
        Warden w2 = other.warden();
        String a = session(w2, "on-other-gateway", 10_000);
        String b = session(w, "waiter", 10_000);
        join(w2.acquire(exclusive(a, "jobs/etl", 0)));
        CompletableFuture<AcquireResult> waiting = w.acquire(exclusive(b, "jobs/etl", 60_000));
        await("b queued", () -> fx.queueSize("jobs/etl") == 2);

        AdminResult r = console.expireSession(a, entry("EXPIRE_SESSION", a)).orTimeout(20, TimeUnit.SECONDS).join();

        assertThat(r.done()).as(r.message()).isTrue();
        assertThat(join(waiting).status()).isEqualTo(AcquireResult.Status.GRANTED);
        await("the other gateway stops tracking it", () -> !other.tracksSession(a));
        assertThat(w2.keepalive(a, null).handle((v, e) -> e == null ? "alive" : WardenFixture.code(e).name()).join())
                .isEqualTo("SESSION_NOT_FOUND");
        assertThat(snapshot().sessions()).extracting(SessionState::sessionId).containsExactly(b);
        await("the expiry is in the event log", () -> console.lock("jobs/etl").join()
                .map(d -> d.recentEvents().stream().anyMatch(e -> e.type().equals("EXPIRED") && a.equals(e.sessionId())))
                .orElse(false));

        AdminResult again = console.expireSession(a, entry("EXPIRE_SESSION", a)).join();
        assertThat(again.done()).isFalse();
        assertThat(again.message()).contains("does not exist");
        assertThat(console.auditLog(10).join()).extracting(AuditEntry::outcome)
                .satisfiesExactly(o -> assertThat(o).startsWith("no-op: "), o -> assertThat(o).startsWith("done: expired"));
    }

    @Test
    void health_reportsThisGateway_andWhatZooKeeperSaysOfItself() {
        Health h = console.health().orTimeout(20, TimeUnit.SECONDS).join();
        assertThat(h.gatewayId()).isEqualTo(gw.gatewayId());
        assertThat(h.ready()).isTrue();
        assertThat(h.zkConnected()).isTrue();
        assertThat(h.gateways()).containsExactly(gw.gatewayId());
        assertThat(h.servers()).singleElement().satisfies(s -> {
            assertThat(s.reachable()).as(String.valueOf(s.error())).isTrue();
            assertThat(s.mode()).isEqualTo("standalone");
            assertThat(s.zxid()).isPositive();
            assertThat(s.connections()).isPositive();
        });
    }

    @Test
    void cells_ofAOneCellGateway_areTheDefaultAlone_withItsEnsemble() {
        List<CellInfo> cells = console.cells().orTimeout(20, TimeUnit.SECONDS).join();
        assertThat(cells).singleElement().satisfies(c -> {
            assertThat(c.name()).isEqualTo(CellInfo.DEFAULT);
            assertThat(c.serving()).isTrue();
            assertThat(c.detail()).isNull();
            assertThat(c.zk()).isEqualTo(fx.server.getConnectString());
            assertThat(c.namespaces()).isEmpty();
        });
    }

    @Test
    void health_saysWhichServerDoesNotAnswer() throws Exception {
        ZkServers probe = new ZkServers(fx.server.getConnectString() + ",127.0.0.1:1");
        try {
            List<Health.ZkServer> servers = probe.probe().orTimeout(20, TimeUnit.SECONDS).join();
            assertThat(servers).extracting(Health.ZkServer::reachable).containsExactly(true, false);
            assertThat(servers.get(1).error()).contains("Connect");
        } finally {
            probe.close();
        }
    }

    @Test
    void auditLog_keepsTheNewestEntries() {
        for (int i = 0; i < 3; i++) {
            console.expireSession("0123456789abcdef0123456789abcd" + i + i, entry("EXPIRE_SESSION", "s" + i)).join();
        }
        assertThat(console.auditLog(2).join()).extracting(AuditEntry::target).containsExactly("s2", "s1");
        assertThat(Duration.between(console.auditLog(1).join().get(0).at(), Instant.now())).isLessThan(Duration.ofMinutes(1));
    }
}
