package io.warden.client.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.client.Hold;
import io.warden.client.LockOwnershipLostException;
import io.warden.client.WardenClient;
import io.warden.client.direct.DirectLocks;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fencing example: a real SQL table (H2, in memory) guarded by a Warden lock, each write a conditional
 * {@code UPDATE invoices SET amount = ?, fence = ? WHERE id = ? AND fence < ?}. A holder that lost its lock while
 * paused and writes late, with its older token, changes nothing — whichever kind of client took the lock after it.
 */
class FencedInvoiceExampleTest {
    private static final String NAME = "payments/invoice-42";
    private static final long INVOICE = 42;
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** The example's resource: one table, one fenced write. */
    static final class Invoices {
        private final Connection db;

        Invoices(Connection db) throws SQLException {
            this.db = db;
            try (var st = db.createStatement()) {
                st.execute("CREATE TABLE invoices (id BIGINT PRIMARY KEY, amount DECIMAL(12, 2) NOT NULL,"
                        + " fence BIGINT NOT NULL DEFAULT 0)");
            }
        }

        void create(long id, BigDecimal amount) throws SQLException {
            try (PreparedStatement st = db.prepareStatement("INSERT INTO invoices (id, amount) VALUES (?, ?)")) {
                st.setLong(1, id);
                st.setBigDecimal(2, amount);
                st.executeUpdate();
            }
        }

        /** The fenced write: changes the row only when {@code token} is newer than the last token that wrote it. */
        long setAmount(long id, BigDecimal amount, long token) throws SQLException {
            try (PreparedStatement st = db.prepareStatement(
                    "UPDATE invoices SET amount = ?, fence = ? WHERE id = ? AND fence < ?")) {
                st.setBigDecimal(1, amount);
                st.setLong(2, token);
                st.setLong(3, id);
                st.setLong(4, token);
                return st.executeUpdate();
            }
        }

        BigDecimal amount(long id) throws SQLException {
            return read(id).getBigDecimal("amount");
        }

        long fence(long id) throws SQLException {
            return read(id).getLong("fence");
        }

        private ResultSet read(long id) throws SQLException {
            PreparedStatement st = db.prepareStatement("SELECT amount, fence FROM invoices WHERE id = ?");
            st.closeOnCompletion();
            st.setLong(1, id);
            ResultSet rs = st.executeQuery();
            assertThat(rs.next()).as("invoice %s exists", id).isTrue();
            return rs;
        }
    }

    private WardenFixture fx;
    private Gateway gateway;
    private WardenClient http;
    private CuratorFramework curator;
    private DirectLocks direct;
    private Connection db;
    private Invoices invoices;

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").sessionTtlMin(Duration.ofMillis(500)).build());
        http = WardenClient.builder().endpoints(url()).clientId("billing-worker-a").sessionTtl(Duration.ofSeconds(5))
                .requestTimeout(Duration.ofSeconds(3)).build();
        curator = CuratorFrameworkFactory.builder().connectString(fx.server.getConnectString())
                .retryPolicy(new RetryNTimes(10, 100)).build();
        curator.start();
        assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        direct = DirectLocks.of(curator);
        db = DriverManager.getConnection("jdbc:h2:mem:invoices-" + UUID.randomUUID());
        invoices = new Invoices(db);
        invoices.create(INVOICE, new BigDecimal("10.00"));
    }

    @AfterEach
    void tearDown() throws Exception {
        db.close();
        direct.close();
        curator.close();
        http.close();
        gateway.close();
        fx.close();
    }

    private String url() {
        return "http://127.0.0.1:" + gateway.httpPort();
    }

    @Test
    void lateWriteOfAHolderThatLostItsLock_updatesNothing_andIsRefused() throws Exception {
        // Holder A (over HTTP) writes under its lock, then "pauses" — a GC pause, a stopped VM — with its token.
        Hold a = http.lock(NAME).acquire(WAIT);
        long tokenA = a.token();
        assertThat(FencedWrite.apply(a, token -> invoices.setAmount(INVOICE, new BigDecimal("100.00"), token))).isEqualTo(1);

        // While A is paused its session expires (here: closed behind its back), and the lock passes on.
        closeSessionBehindItsBack(http.sessionId());

        // Holder B (direct mode) gets the lock with a larger token and writes.
        try (Hold b = direct.lock(NAME).acquire(Duration.ofSeconds(20))) {
            assertThat(b.token()).isGreaterThan(tokenA);
            FencedWrite.apply(b, token -> invoices.setAmount(INVOICE, new BigDecimal("200.00"), token));
        }

        // A wakes up and finishes its write, with the token it had: 0 rows, refused.
        assertThat(invoices.setAmount(INVOICE, new BigDecimal("999.00"), tokenA)).isZero();
        assertThatThrownBy(() -> FencedWrite.apply(NAME, tokenA,
                token -> invoices.setAmount(INVOICE, new BigDecimal("999.00"), token)))
                .isInstanceOf(StaleTokenException.class)
                .isInstanceOf(LockOwnershipLostException.class)
                .hasMessageContaining(NAME).hasMessageContaining(String.valueOf(tokenA));
        assertThat(invoices.amount(INVOICE)).isEqualByComparingTo("200.00");
        assertThat(invoices.fence(INVOICE)).isGreaterThan(tokenA);
    }

    @Test
    void holdersInTurn_eachWriteIsAccepted_andAnOlderTokenNeverOverwritesANewerOne() throws Exception {
        long older;
        try (Hold first = direct.lock(NAME).acquire(WAIT)) {
            older = first.token();
            FencedWrite.apply(first, token -> invoices.setAmount(INVOICE, new BigDecimal("1.00"), token));
        }
        try (Hold second = http.lock(NAME).acquire(WAIT)) {
            FencedWrite.apply(second, token -> invoices.setAmount(INVOICE, new BigDecimal("2.00"), token));
            assertThat(invoices.fence(INVOICE)).isEqualTo(second.token());
        }
        // A delayed retry of the first holder's write arrives last.
        assertThatThrownBy(() -> FencedWrite.apply(NAME, older,
                token -> invoices.setAmount(INVOICE, new BigDecimal("1.00"), token)))
                .isInstanceOf(StaleTokenException.class);
        assertThat(invoices.amount(INVOICE)).isEqualByComparingTo("2.00");
    }

    @Test
    void apply_withALostHold_writesNothing() throws Exception {
        Hold hold = direct.lock(NAME).acquire(WAIT);
        fx.curator.delete().forPath(WardenFixture.lockPath(NAME) + "/" + fx.queue(NAME).get(0)); // an operator removed the lock
        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> FencedWrite.apply(hold, token -> invoices.setAmount(INVOICE, BigDecimal.ONE, token)))
                .isInstanceOf(LockOwnershipLostException.class);
        assertThat(invoices.fence(INVOICE)).isZero();
    }

    @Test
    void apply_withAReleasedHold_throwsIllegalState() {
        Hold hold = direct.lock(NAME).acquire(WAIT);
        hold.release();
        assertThatThrownBy(() -> FencedWrite.apply(hold, token -> invoices.setAmount(INVOICE, BigDecimal.ONE, token)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(NAME);
    }

    private void closeSessionBehindItsBack(String sessionId) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(url() + "/v1/sessions/" + sessionId)).DELETE().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
    }
}
