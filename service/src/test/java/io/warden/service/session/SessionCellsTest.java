package io.warden.service.session;

import io.warden.service.api.WardenException;
import io.warden.service.metrics.WardenMetrics;
import io.warden.service.queue.QueueListing;
import io.warden.service.time.ManualClock;
import io.warden.service.zk.CellLayout;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.PacketLimit;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.code;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A session in several cells (ZooKeeper ensembles): the home record lists the other cells ({@link SessionRecord#cells},
 * {@link SessionManager#addCell}, {@link SessionManager#cellsOf}), and each other cell holds a record of its own made by
 * {@link SessionManager#join}, tracked and expired there on the same TTL. Real ZooKeeper (two {@link TestingServer}s:
 * the home cell and cell "b"), session managers built as a gateway builds them (one per gateway and cell), time on a
 * shared {@link ManualClock}.
 */
class SessionCellsTest {
    private static final long TTL = 10_000;
    private static final Duration ZK_SESSION_TIMEOUT = Duration.ofSeconds(4);

    private final ManualClock clock = new ManualClock();
    private final Deque<AutoCloseable> closing = new ArrayDeque<>();
    private TestingServer homeServer;
    private TestingServer bServer;
    /** A plain client on the home cell's chroot, for looking at what the managers wrote. */
    private CuratorFramework home;
    private CuratorFramework b;

    @BeforeEach
    void setUp() throws Exception {
        homeServer = new TestingServer(true);
        closing.push(homeServer);
        bServer = new TestingServer(true);
        closing.push(bServer);
        home = client(homeServer);
        b = client(bServer);
        CellLayout.makeTop(home);
        CellLayout.makeShards(home);
        CellLayout.makeTop(b);
        CellLayout.makeShards(b);
    }

    @AfterEach
    void tearDown() throws Exception {
        while (!closing.isEmpty()) {
            closing.pop().close();
        }
    }

    private CuratorFramework client(TestingServer server) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(server.getConnectString()).namespace("warden")
                .sessionTimeoutMs((int) ZK_SESSION_TIMEOUT.toMillis()).connectionTimeoutMs(3_000)
                .retryPolicy(new BoundedExponentialBackoffRetry(100, 1000, 3)).defaultData(new byte[0]).build();
        c.start();
        closing.push(c);
        assertThat(c.blockUntilConnected(10, TimeUnit.SECONDS)).as("connected to " + server.getConnectString()).isTrue();
        return c;
    }

    /** The session manager of a gateway run {@code owner} for the cell of {@code server}, started. */
    private SessionManager manager(TestingServer server, Owner owner) throws InterruptedException {
        CuratorFramework c = client(server);
        WardenMetrics metrics = WardenMetrics.noop();
        Zk zk = new Zk(c, metrics);
        SessionManager m = new SessionManager(zk, clock, metrics, SessionListener.NONE,
                new QueueListing(zk, new PacketLimit(PacketLimit.ZOOKEEPER_DEFAULT), metrics), owner,
                Duration.ofSeconds(1), Duration.ofSeconds(120), Duration.ofSeconds(10), 1_000,
                SessionManager.vouchBound(ZK_SESSION_TIMEOUT));
        m.start();
        closing.push(m::stop); // before its client closes (pushed first, so closed after)
        return m;
    }

    private SessionManager manager(TestingServer server, String gatewayId) throws InterruptedException {
        return manager(server, Owner.newIncarnation(gatewayId));
    }

    private static <T> T get(CompletableFuture<T> f) {
        return f.orTimeout(20, TimeUnit.SECONDS).join();
    }

    private static boolean exists(CuratorFramework c, String sessionId) {
        return stat(c, sessionId) != null;
    }

    private static Stat stat(CuratorFramework c, String sessionId) {
        try {
            return c.checkExists().forPath(CellPaths.session(sessionId));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static SessionRecord stored(CuratorFramework c, String sessionId) throws Exception {
        return Json.readOrNull(c.getData().forPath(CellPaths.session(sessionId)), SessionRecord.class);
    }

    private static int version(TrackedSession t) {
        synchronized (t) {
            return t.version;
        }
    }

    private void advance(long ms) {
        clock.advance(Duration.ofMillis(ms));
    }

    /** Not expired 1 ms before {@code ms} from now, expired at it. */
    private void expiresIn(CuratorFramework c, String sessionId, long ms) {
        advance(ms - 1);
        assertThat(exists(c, sessionId)).as("not expired 1 ms before its TTL").isTrue();
        advance(1);
        await("expired at its TTL", () -> !exists(c, sessionId));
    }

    // ------------------------------------------------------------------ the record

    @Test
    void aRecord_listsItsCellsInJson_onlyWhenItHasAny_andAnOldRecordReadsAsListingNone() {
        SessionRecord plain = new SessionRecord("c", TTL, 250, "gw-a", "i1", "alice", "10.0.0.1");
        String plainJson = new String(Json.write(plain), StandardCharsets.UTF_8);
        assertThat(plain.cells()).isEmpty();
        assertThat(plainJson).doesNotContain("cells");
        assertThat(Json.readOrNull(plainJson.getBytes(StandardCharsets.UTF_8), SessionRecord.class)).isEqualTo(plain);

        SessionRecord listed = plain.withCell("b").withCell("c");
        String listedJson = new String(Json.write(listed), StandardCharsets.UTF_8);
        assertThat(listedJson).contains("\"cells\":[\"b\",\"c\"]");
        SessionRecord back = Json.readOrNull(listedJson.getBytes(StandardCharsets.UTF_8), SessionRecord.class);
        assertThat(back).isEqualTo(listed);
        assertThat(back.cells()).containsExactly("b", "c");

        // as a gateway that predates cells wrote it (and one that predates auth files: no principal, no address)
        String old = "{\"client_id\":\"c\",\"ttl_ms\":10000,\"lock_delay_ms\":0,\"gateway\":\"gw-old\",\"incarnation\":\"1\"}";
        SessionRecord oldRecord = Json.readOrNull(old.getBytes(StandardCharsets.UTF_8), SessionRecord.class);
        assertThat(oldRecord).isEqualTo(new SessionRecord("c", TTL, 0, "gw-old", "1"));
        assertThat(oldRecord.cells()).isNotNull().isEmpty();
        assertThat(new SessionRecord("c", TTL, 0, "g", "i", null, null, null).cells()).isNotNull().isEmpty();
    }

    @Test
    void withCell_addsOnceInOrder_andTheOtherCopiesKeepTheCells() {
        SessionRecord r = new SessionRecord("c", TTL, 0, "gw-a", "i1").withCell("b").withCell("c");
        assertThat(r.withCell("b")).isSameAs(r);
        assertThat(r.withCell("a").cells()).containsExactly("b", "c", "a");
        assertThat(r.withOwner("gw-x", "i9").cells()).containsExactly("b", "c");
        assertThat(r.withTtl(20_000).cells()).containsExactly("b", "c");
        assertThatThrownBy(() -> r.cells().add("d")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void record_readsTheRecord_andSaysSessionNotFoundForNone() throws Exception {
        SessionManager a = manager(homeServer, "gw-a");
        String s = get(a.open("alice", "10.0.0.1", "client-1", TTL, 250)).sessionId();
        SessionRecord r = get(a.record(s));
        assertThat(r).isEqualTo(stored(home, s));
        assertThat(r.clientId()).isEqualTo("client-1");
        assertThat(r.principal()).isEqualTo("alice");
        assertThat(r.cells()).isEmpty();

        // written by a gateway that predates cells: reads as listing none, and a cell can be added to it
        String old = "00" + "1".repeat(30);
        home.create().forPath(CellPaths.session(old), ("{\"client_id\":\"c\",\"ttl_ms\":10000,\"lock_delay_ms\":0,"
                + "\"gateway\":\"gw-old\",\"incarnation\":\"1\"}").getBytes(StandardCharsets.UTF_8));
        assertThat(get(a.record(old)).cells()).isEmpty();
        get(a.addCell(old, "b"));
        assertThat(stored(home, old).cells()).containsExactly("b");
        assertThat(stored(home, old).gateway()).as("the owner is left as it was").isEqualTo("gw-old");

        String none = "ab" + "0".repeat(30);
        assertThatThrownBy(() -> get(a.record(none)))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
        assertThatThrownBy(() -> get(a.addCell(none, "b")))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.SESSION_NOT_FOUND));
        assertThatThrownBy(() -> get(a.record("not-a-session")))
                .satisfies(e -> assertThat(code(e)).isEqualTo(WardenException.ErrorCode.INVALID_ARGUMENT));
        assertThat(a.cellsOf(none)).as("not tracked here").isNull();
    }

    // ------------------------------------------------------------------ addCell

    @Test
    void addCell_writesOnce_isIdempotent_andKeepsTheOrder() throws Exception {
        SessionManager a = manager(homeServer, "gw-a");
        String s = get(a.open("client-1", TTL, 0)).sessionId();
        int before = stat(home, s).getVersion();

        get(a.addCell(s, "b"));
        assertThat(stored(home, s).cells()).containsExactly("b");
        assertThat(stat(home, s).getVersion()).isEqualTo(before + 1);

        get(a.addCell(s, "b"));
        assertThat(stat(home, s).getVersion()).as("nothing written for a cell listed already").isEqualTo(before + 1);

        get(a.addCell(s, "c"));
        assertThat(stored(home, s).cells()).containsExactly("b", "c");
        assertThat(a.cellsOf(s)).containsExactly("b", "c");
        SessionRecord r = stored(home, s);
        assertThat(r.gateway()).isEqualTo("gw-a");
        assertThat(r.ttlMs()).isEqualTo(TTL);
        assertThat(r.clientId()).isEqualTo("client-1");
    }

    @Test
    void addCell_onASessionTrackedHere_keepsItsVersionCurrent_soItStillExpiresOnTime() throws Exception {
        SessionManager a = manager(homeServer, "gw-a");
        String s = get(a.open("client-1", TTL, 0)).sessionId();
        advance(3_000);

        get(a.addCell(s, "b"));
        TrackedSession t = a.tracker().get(s);
        assertThat(version(t)).as("the tracking took the version its write made").isEqualTo(stat(home, s).getVersion());
        assertThat(a.cellsOf(s)).containsExactly("b");

        assertThat(get(a.keepalive(s, null))).isEqualTo(TTL);
        expiresIn(home, s, TTL);
        assertThat(a.tracks(s)).isFalse();
        assertThat(a.cellsOf(s)).isNull();
    }

    /**
     * The router may add the cell at a gateway that does not track the session: the write moves the version under the
     * gateway that does. Its record watch takes the new version (and the cells, where its keepalives now go), and it
     * expires the session on time.
     */
    @Test
    void addCell_atAnotherGateway_leavesTheTrackingGatewayExpiringTheSessionOnTime() throws Exception {
        SessionManager a = manager(homeServer, "gw-a");
        SessionManager other = manager(homeServer, "gw-other");
        String s = get(a.open("client-1", TTL, 0)).sessionId();
        TrackedSession t = a.tracker().get(s);
        advance(3_000);

        get(other.addCell(s, "b"));
        assertThat(other.tracks(s)).isFalse();
        int now = stat(home, s).getVersion();
        await("the tracking gateway's watch takes the new version", () -> version(t) == now);
        await("and the cells", () -> List.of("b").equals(a.cellsOf(s)));
        assertThat(stored(home, s).gateway()).as("still the tracking gateway's").isEqualTo("gw-a");

        assertThat(get(a.keepalive(s, null))).isEqualTo(TTL);
        expiresIn(home, s, TTL);
    }

    /**
     * As above, with the expiry meeting the new version before the watch's re-read took it in: its multi fails with
     * BADVERSION, it reads the record, finds it still this gateway run's under the same tracking, and tries again at the
     * new version.
     */
    @Test
    void addCell_atAnotherGateway_beforeTheTrackingGatewayHeardOfIt_stillLetsItExpireTheSessionOnTime() throws Exception {
        SessionManager a = manager(homeServer, "gw-a");
        SessionManager other = manager(homeServer, "gw-other");
        String s = get(a.open("client-1", TTL, 0)).sessionId();
        TrackedSession t = a.tracker().get(s);
        int old = version(t);

        get(other.addCell(s, "b"));
        int now = stat(home, s).getVersion();
        await("the watch's re-read done", () -> version(t) == now);
        synchronized (t) {
            t.version = old; // as if the expiry had started before that re-read
        }

        expiresIn(home, s, TTL);
        assertThat(a.tracks(s)).isFalse();
        assertThat(version(t)).as("expired at the version read after BADVERSION").isEqualTo(now);
    }

    // ------------------------------------------------------------------ TTL changes and takeovers keep the cells

    @Test
    void aTtlChange_andATakeover_keepTheCells() throws Exception {
        SessionManager a = manager(homeServer, "gw-a");
        SessionManager other = manager(homeServer, "gw-other");
        String s = get(a.open("client-1", TTL, 0)).sessionId();
        get(a.addCell(s, "b"));

        assertThat(get(a.keepalive(s, 20_000L))).isEqualTo(20_000);
        assertThat(stored(home, s).ttlMs()).isEqualTo(20_000);
        assertThat(stored(home, s).cells()).containsExactly("b");
        assertThat(a.cellsOf(s)).containsExactly("b");

        assertThat(get(other.keepalive(s, null))).as("a takeover").isEqualTo(20_000);
        assertThat(other.cellsOf(s)).as("the taking gateway's tracking has the record's cells").containsExactly("b");
        assertThat(stored(home, s).gateway()).isEqualTo("gw-other");
        assertThat(stored(home, s).cells()).containsExactly("b");
        await("the first gateway lets go", () -> !a.tracks(s));

        assertThat(get(other.keepalive(s, 15_000L))).isEqualTo(15_000);
        assertThat(stored(home, s).cells()).containsExactly("b");
    }

    // ------------------------------------------------------------------ join

    @Test
    void join_makesTheRecordInTheOtherCell_tracksIt_keepsItAlive_andExpiresItThereOnItsOwnTtl() throws Exception {
        Owner gw = Owner.newIncarnation("gw-a");
        SessionManager homeCell = manager(homeServer, gw);
        SessionManager bCell = manager(bServer, gw);
        String s = get(homeCell.open("alice", "10.0.0.1", "client-1", TTL, 250)).sessionId();
        get(homeCell.addCell(s, "b"));
        SessionRecord homeRecord = get(homeCell.record(s));

        assertThat(get(bCell.join(s, homeRecord))).isEqualTo(TTL);
        SessionRecord there = stored(b, s);
        assertThat(there).isEqualTo(new SessionRecord("client-1", TTL, 250, "gw-a", gw.incarnation(), "alice", "10.0.0.1"));
        assertThat(there.cells()).as("only the home record lists cells").isEmpty();
        assertThat(bCell.tracks(s)).isTrue();
        assertThat(bCell.cellsOf(s)).isEmpty();
        assertThat(homeCell.cellsOf(s)).containsExactly("b");
        assertThat(bCell.tracker().quotas().total()).isEqualTo(1);

        for (int i = 0; i < 3; i++) {
            advance(8_000);
            assertThat(get(bCell.keepalive(s, null))).isEqualTo(TTL);
            assertThat(get(homeCell.keepalive(s, null))).isEqualTo(TTL);
        }
        assertThat(exists(b, s)).as("kept alive past its TTL").isTrue();
        assertThat(get(bCell.view(s)).ttlMs()).isEqualTo(TTL);

        // kept alive at home only: cell b expires it on its own TTL
        advance(TTL - 1);
        assertThat(get(homeCell.keepalive(s, null))).isEqualTo(TTL);
        assertThat(exists(b, s)).isTrue();
        advance(1);
        await("expired in cell b", () -> !exists(b, s));
        assertThat(bCell.tracks(s)).isFalse();
        assertThat(exists(home, s)).as("still alive at home").isTrue();
    }

    @Test
    void joinTwice_isAKeepalive() throws Exception {
        SessionManager homeCell = manager(homeServer, "gw-a");
        SessionManager bCell = manager(bServer, "gw-a");
        String s = get(homeCell.open("client-1", TTL, 0)).sessionId();
        SessionRecord homeRecord = get(homeCell.record(s));

        assertThat(get(bCell.join(s, homeRecord))).isEqualTo(TTL);
        int version = stat(b, s).getVersion();
        advance(8_000);
        assertThat(get(bCell.join(s, homeRecord))).isEqualTo(TTL);
        assertThat(stat(b, s).getVersion()).as("nothing written: a keepalive").isEqualTo(version);
        assertThat(bCell.tracker().quotas().total()).isEqualTo(1);

        expiresIn(b, s, TTL); // from the second join, not the first
    }

    /** Another gateway of cell b joins the session after this one did: the record exists, so it takes the session over. */
    @Test
    void join_ofASessionThatJoinedThroughAnotherGateway_takesItOver() throws Exception {
        SessionManager homeCell = manager(homeServer, "gw-a");
        SessionManager bFirst = manager(bServer, "gw-a");
        SessionManager bSecond = manager(bServer, "gw-b");
        String s = get(homeCell.open("client-1", TTL, 0)).sessionId();
        SessionRecord homeRecord = get(homeCell.record(s));
        get(bFirst.join(s, homeRecord));

        assertThat(get(bSecond.join(s, homeRecord))).isEqualTo(TTL);
        assertThat(bSecond.tracks(s)).isTrue();
        assertThat(stored(b, s).gateway()).isEqualTo("gw-b");
        assertThat(bSecond.tracker().quotas().total()).as("the create's reservation given back").isEqualTo(1);
        await("the first gateway lets go", () -> !bFirst.tracks(s));
        assertThat(get(bSecond.keepalive(s, null))).isEqualTo(TTL);
    }
}
