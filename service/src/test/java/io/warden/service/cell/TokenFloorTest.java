package io.warden.service.cell;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;
import io.warden.service.config.ConfigLoader;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import io.warden.service.zk.CellPaths;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The token floor (contract §1: token = czxid + floor): a raise keeps the token of every request made before it —
 * release, check, views and watches all use the token its client was given — and every request made after it gets a
 * token above it, on every gateway of the cell, through every API (the lease API's {@code fencing_token} too).
 */
class TokenFloorTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long FLOOR = 1L << 40;

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void aRaise_keepsEveryTokenGiven_andPutsEveryNewTokenAboveIt_onEveryGateway() throws Exception {
        Gateway first = fx.gateway();
        Gateway second = fx.gateway();
        Warden w1 = first.warden();
        Warden w2 = second.warden();
        String s = session(w1, "holder", 60_000);
        AcquireResult held = join(w1.acquire(exclusive(s, "pay/a", 0)));
        long before = held.token();
        assertThat(before).as("no floor yet: the czxid").isEqualTo(held.revision());

        assertThat(raise("--to", Long.toString(FLOOR))).contains("raised the token floor from 0 to " + FLOOR);
        WardenFixture.await("both gateways to know the raise", () -> first.cellGuard().tokens().current() == FLOOR
                && second.cellGuard().tokens().current() == FLOOR);

        // The hold made before the raise keeps its token everywhere.
        LockName a = LockName.parse("pay/a");
        assertThat(w2.check(a, before).join().current()).isTrue();
        assertThat(w2.check(a, before).join().latestToken()).isEqualTo(before);
        assertThat(w2.lock(a).join().holders().get(0).token()).isEqualTo(before);
        assertThat(w1.session(s).join().holds().get(0).token()).isEqualTo(before);
        try (SseTestClient watch = SseTestClient.watch(second.httpPort(), "?name=pay/a&since_revision=0")) {
            SseTestClient.Event resync = watch.next();
            assertThat(resync.type()).isEqualTo("RESYNC");
            assertThat(resync.data().path("locks").get(0).path("holders").get(0).path("token").asLong()).isEqualTo(before);
            assertThat(w2.release(s, a, before).join()).as("released through the gateway that did not make it").isTrue();

            AcquireResult next = join(w2.acquire(exclusive(s, "pay/a", 0)));
            assertThat(next.token()).isGreaterThan(FLOOR + before).isEqualTo(next.revision() + FLOOR);
            assertThat(w1.check(a, next.token()).join().current()).isTrue();
            assertThat(watch.next().type()).isEqualTo("RELEASED");
            SseTestClient.Event queued = watch.next();
            SseTestClient.Event granted = watch.next();
            assertThat(queued.type()).isEqualTo("QUEUED");
            assertThat(granted.type()).isEqualTo("GRANTED");
            assertThat(granted.token()).isEqualTo(next.token());
            assertThat(granted.revision()).as("a revision is a zxid").isEqualTo(next.token() - FLOOR);
        }

        // The lease API's fencing token is a token like any other.
        HttpResponse<String> lease = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + first.httpPort() + "/lock/acquire"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"resource\":\"user:42\",\"client_id\":\"lease\",\"ttl\":10000}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(lease.statusCode()).as(lease.body()).isEqualTo(200);
        JsonNode granted = JSON.readTree(lease.body());
        assertThat(granted.path("fencing_token").asLong()).isEqualTo(granted.path("revision").asLong() + FLOOR);
    }

    @Test
    void aRaiseWhileAGatewayIsCutOff_isReadBeforeThatGatewayReportsATokenAgain() throws Exception {
        try (ZkCutProxy proxy = new ZkCutProxy(fx.server.getPort())) {
            Gateway cut = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
            Gateway other = fx.gateway();
            String s = session(other.warden(), "holder", 60_000);
            proxy.partition();
            WardenFixture.await("the cut gateway to see its connection gone", () -> !cut.warden().ready());

            raise("--to", Long.toString(FLOOR));
            AcquireResult made = join(other.warden().acquire(exclusive(s, "pay/b", 0)));
            assertThat(made.token()).isEqualTo(made.revision() + FLOOR);

            proxy.heal();
            WardenFixture.await("the cut gateway to be ready again", Duration.ofSeconds(30), () -> cut.warden().ready());
            LockName b = LockName.parse("pay/b");
            assertThat(cut.warden().lock(b).join().holders().get(0).token()).isEqualTo(made.token());
            assertThat(cut.warden().check(b, made.token()).join().current()).isTrue();
            assertThat(cut.cellGuard().tokens().current()).isEqualTo(FLOOR);
        }
    }

    @Test
    void theCommand_neverLowersTheFloor_andSaysWhenNothingNeedsDoing() throws Exception {
        fx.gateway();
        raise("--to", "5000");
        var err = new ByteArrayOutputStream();
        int status = FloorCommand.run(List.of("raise", "--to", "4999", "--zk", fx.server.getConnectString()),
                new ConfigLoader(Map.of()), new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true));
        assertThat(status).isEqualTo(FloorCommand.BAD_ARGUMENTS);
        assertThat(err.toString()).contains("would lower it");
        assertThat(fx.curator.getChildren().forPath(CellPaths.TOKEN_FLOOR)).containsExactly(CellPaths.floorNode(5000));

        assertThat(raise("--above", "10")).contains("nothing to raise");
        assertThat(fx.curator.getChildren().forPath(CellPaths.TOKEN_FLOOR)).as("no raise made")
                .containsExactly(CellPaths.floorNode(5000));
        assertThat(raise("show")).contains("token floor 5000");
        assertThat(FloorCommand.run(List.of("raise", "--zk", fx.server.getConnectString()), new ConfigLoader(Map.of()),
                new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(new ByteArrayOutputStream(), true)))
                .as("neither --above nor --to").isEqualTo(FloorCommand.BAD_ARGUMENTS);
    }

    /** Runs {@code token-floor raise ARGS} (or {@code show}) on the fixture's ZooKeeper; its output. */
    private String raise(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        List<String> all = new java.util.ArrayList<>(args[0].equals("show") ? List.of() : List.of("raise"));
        all.addAll(List.of(args));
        all.addAll(List.of("--zk", fx.server.getConnectString()));
        int status = FloorCommand.run(all, new ConfigLoader(Map.of()), new PrintStream(out, true), new PrintStream(err, true));
        assertThat(status).as("token-floor %s: %s%s", all, out, err).isZero();
        return out.toString();
    }
}
