package io.warden.console;

import io.warden.console.model.CellInfo;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.Health;
import io.warden.console.model.LockDetail;
import io.warden.console.model.LockEvent;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import io.warden.console.model.QueuedRequest;
import io.warden.console.model.SessionState;
import io.warden.console.model.WaitFor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Hand-built cells for the console's tests. {@link #cell()} is a small cell with a held lock and its queue, a
 * deadlock, a wait chain, shared holders and a hostile client id.
 */
public final class Fixtures {
    public static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");
    public static final String HOSTILE = "<script>alert(1)</script>";
    public static final String ALICE = "a11ce000000000000000000000000001";
    public static final String BOB = "b0b00000000000000000000000000002";
    public static final String CAROL = "ca401000000000000000000000000003";
    public static final String DAVE = "da4e0000000000000000000000000004";
    public static final String EVE = "e4e00000000000000000000000000005";
    public static final String FRANK = "f4a4c000000000000000000000000006";

    private Fixtures() {
    }

    public static Instant ago(long seconds) {
        return NOW.minusSeconds(seconds);
    }

    public static QueuedRequest holder(String session, String client, Mode mode, long token, int position, long heldSecondsAgo) {
        return new QueuedRequest(session, client, "req-" + token, mode, token, position, true, ago(heldSecondsAgo + 1),
                ago(heldSecondsAgo));
    }

    public static QueuedRequest waiter(String session, String client, Mode mode, long token, int position, long waitingSecondsAgo) {
        return new QueuedRequest(session, client, "req-" + token, mode, token, position, false, ago(waitingSecondsAgo), null);
    }

    public static SessionState session(String id, String client) {
        return new SessionState(id, client, 30_000, 12_000L, "gw-1", true, 0, ago(3600));
    }

    /** payments/invoice-42: alice holds (token 16), bob then carol wait. */
    public static LockState invoice42() {
        return new LockState("payments/invoice-42", List.of(
                holder(ALICE, "alice", Mode.EXCLUSIVE, 16, 0, 252),
                waiter(BOB, "bob", Mode.EXCLUSIVE, 18, 1, 120),
                waiter(CAROL, "carol", Mode.SHARED, 21, 2, 30)));
    }

    public static CellSnapshot cell() {
        List<LockState> locks = new ArrayList<>();
        locks.add(invoice42());
        // payments/invoice-43: bob holds, alice waits: with invoice-42, alice and bob deadlock
        locks.add(new LockState("payments/invoice-43", List.of(
                holder(BOB, "bob", Mode.EXCLUSIVE, 17, 0, 200),
                waiter(ALICE, "alice", Mode.EXCLUSIVE, 19, 1, 100))));
        // orders/o-1: carol and dave share it; eve (hostile client id) waits; frank waits behind her
        locks.add(new LockState("orders/o-1", List.of(
                holder(CAROL, "carol", Mode.SHARED, 10, 0, 7200),
                holder(DAVE, "dave", Mode.SHARED, 11, 1, 7100),
                waiter(EVE, HOSTILE, Mode.EXCLUSIVE, 12, 2, 600),
                waiter(FRANK, "frank", Mode.EXCLUSIVE, 13, 3, 500))));
        // a lock held by a plain Curator client (no Warden session)
        locks.add(new LockState("jobs/nightly", List.of(
                new QueuedRequest(null, "curator", null, Mode.EXCLUSIVE, 5, 0, true, ago(90_000), null))));
        List<SessionState> sessions = List.of(session(ALICE, "alice"), session(BOB, "bob"), session(CAROL, "carol"),
                session(DAVE, "dave"), session(EVE, HOSTILE), session(FRANK, "frank"),
                new SessionState("1d1e0000000000000000000000000007", "idle-worker", 10_000, null, "gw-2", false, 5000, ago(60)));
        return new CellSnapshot(ago(1), 4242, locks, sessions);
    }

    /**
     * The gateway's wait-for graph of {@link #cell()}: alice and bob deadlock (bob said FAIL); carol waits SHARED behind
     * bob's queued EXCLUSIVE; eve waits for the shared holders of orders/o-1, frank behind eve. The Curator holder of
     * jobs/nightly is no node of the graph.
     */
    public static WaitFor waitFor() {
        List<WaitFor.Edge> edges = List.of(
                new WaitFor.Edge(ALICE, "alice", "payments/invoice-43", Mode.EXCLUSIVE, BOB, "bob", Mode.EXCLUSIVE, 17, true),
                new WaitFor.Edge(BOB, "bob", "payments/invoice-42", Mode.EXCLUSIVE, ALICE, "alice", Mode.EXCLUSIVE, 16, true),
                new WaitFor.Edge(CAROL, "carol", "payments/invoice-42", Mode.SHARED, BOB, "bob", Mode.EXCLUSIVE, 18, false),
                new WaitFor.Edge(EVE, HOSTILE, "orders/o-1", Mode.EXCLUSIVE, CAROL, "carol", Mode.SHARED, 10, true),
                new WaitFor.Edge(EVE, HOSTILE, "orders/o-1", Mode.EXCLUSIVE, DAVE, "dave", Mode.SHARED, 11, true),
                new WaitFor.Edge(FRANK, "frank", "orders/o-1", Mode.EXCLUSIVE, EVE, HOSTILE, Mode.EXCLUSIVE, 12, false));
        WaitFor.Cycle cycle = new WaitFor.Cycle(List.of(
                new WaitFor.Member(ALICE, "alice", "alice-req-43", "a43", "payments/invoice-43", Mode.EXCLUSIVE, false, List.of(BOB)),
                new WaitFor.Member(BOB, "bob", "bob-req-42", "b42", "payments/invoice-42", Mode.EXCLUSIVE, true, List.of(ALICE))),
                4201, 2_500);
        return new WaitFor(ago(1), 4242, false, edges, edges.size(), List.of(cycle));
    }

    public static LockDetail invoice42Detail() {
        return new LockDetail(invoice42(), 4242, List.of(
                new LockEvent(4240, "QUEUED", CAROL, Mode.SHARED, 21, ago(30)),
                new LockEvent(4100, "QUEUED", BOB, Mode.EXCLUSIVE, 18, ago(120)),
                new LockEvent(4000, "GRANTED", ALICE, Mode.EXCLUSIVE, 16, ago(252))));
    }

    public static Health health() {
        return new Health("gw-1", true, true, List.of("gw-1", "gw-2"), true, "zk1:2181,zk2:2181,zk3:2181", List.of(
                new Health.ZkServer("zk1:2181", "follower", 4294971000L, 12, null),
                new Health.ZkServer("zk2:2181", "leader", 4294971002L, 9, null),
                new Health.ZkServer("zk3:2181", null, null, null, "Connection refused")));
    }

    /** A gateway that serves only its default cell. */
    public static List<CellInfo> oneCell() {
        return List.of(new CellInfo(CellInfo.DEFAULT, "zk1:2181,zk2:2181,zk3:2181", "/warden", true, null, List.of()));
    }

    /** The default cell, serving, and cell {@code b} (namespace {@code pay}), which lost its ensemble. */
    public static List<CellInfo> twoCells(String detail) {
        return List.of(new CellInfo(CellInfo.DEFAULT, "zk1:2181,zk2:2181,zk3:2181", "/warden", true, null, List.of()),
                new CellInfo("b", "zkb1:2181,zkb2:2181", "/warden-b", false, detail, List.of("pay")));
    }

    /** Serves {@code console} alone on a free loopback port (stop it with {@code app.stop()}). */
    public static io.javalin.Javalin serve(WardenConsole console) {
        return io.javalin.Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            console.mount(cfg);
        }).start("127.0.0.1", 0);
    }
}
