package io.warden.client;

import io.warden.service.Gateway;
import io.warden.service.config.CellAddress;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a gateway that serves two cells (the default one and {@code b}, which serves {@code pay}), a hold learns that its
 * grant ended elsewhere in either cell: the client keeps one watch of its session per cell its holds are in, because
 * the gateway names each grant's cell and a cell's revisions are its own.
 */
class TwoCellsHoldWatchTest {
    private Cell cell;
    private TestingServer cellB;
    private Gateway gw;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
        cellB = new TestingServer(true);
        gw = cell.gateway(cell.config().toBuilder()
                .cells(List.of(new CellAddress("b", cellB.getConnectString(), null)))
                .routes(Map.of("pay", "b")).build());
    }

    @AfterEach
    void tearDown() throws Exception {
        cell.close();
        cellB.close();
    }

    @Test
    void aHoldReleasedElsewhere_isLost_inTheOtherCell_andInTheDefaultOne() throws Exception {
        WardenClient alice = cell.client("alice", Duration.ofSeconds(5), Cell.url(gw));
        Hold inB = alice.lock("pay/invoice-1").acquire(Duration.ofSeconds(5));
        Hold inDefault = alice.lock("web/page-1").acquire(Duration.ofSeconds(5));

        assertThat(cell.release(gw, alice.sessionId(), "pay/invoice-1", inB.token()).path("released").asBoolean()).isTrue();
        inB.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(inB.isValid()).isFalse();
        assertThat(inDefault.isValid()).as("the other cell's hold is not touched").isTrue();

        assertThat(cell.release(gw, alice.sessionId(), "web/page-1", inDefault.token()).path("released").asBoolean()).isTrue();
        inDefault.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(alice.state()).as("the session lives on").isEqualTo(SessionState.CONNECTED);
    }

    @Test
    void aCellParameter_isRefusedWithANameOrAPrefix_andForACellNotServed() throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        String base = Cell.url(gw) + "/v1/watch?session_id=0123456789abcdef0123456789abcdef";
        for (String query : List.of("&cell=b&prefix=pay", "&cell=nowhere")) {
            java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base
                    + query)).timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(query).isEqualTo(400);
            assertThat(r.body()).as(query).contains("\"field\":\"cell\"");
        }
    }
}
