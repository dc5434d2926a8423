package io.warden.service.http;

import static io.warden.service.support.WardenFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.warden.service.Gateway;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The watch mirror is bounded by its estimated heap ({@code watch-mirror-bytes}), not only by what the cell holds: with
 * 512-character names it took about 1.1 KB per held lock where docs/operations.md counted 590 bytes, and nothing bounded
 * it but the cell. Past the bound the mirror is dropped (its heap freed): watches wait, locks and reads are
 * served as usual, and once the cell fits again the next read brings the mirror back and every watch gets a RESYNC.
 */
class WatchMirrorBoundTest {
    /** About 60 held locks with short names (660 bytes each, estimated). */
    private static final long BOUND = 40_000;

    private WardenFixture fixture;
    private Gateway gateway;
    private HttpTestClient http;
    private Logger root;
    private ListAppender<ILoggingEvent> logs;

    @BeforeEach
    void start() throws Exception {
        root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
        fixture = new WardenFixture();
        gateway = fixture.gateway(fixture.config().withWatchMirrorBytes(BOUND));
        http = new HttpTestClient(gateway.httpPort(), OpenApiContract.load());
    }

    @AfterEach
    void stop() throws Exception {
        root.detachAppender(logs);
        fixture.close();
    }

    private double gauge(String name) {
        return gateway.metrics().registry().find(name).gauge().value();
    }

    private long lines(Level level, String text) {
        return logs.list.stream().filter(e -> e.getLevel() == level && e.getFormattedMessage().contains(text)).count();
    }

    @Test
    void pastItsBound_theMirrorIsDropped_theRestGoesOn_andItComesBackWhenTheCellFitsAgain() {
        assertThat(gauge("warden.watch.mirror.limit.bytes")).isEqualTo(BOUND);
        String s = http.postJson("/v1/sessions", "client_id", "bulk", "ttl_ms", 120_000).json().get("session_id").asText();
        SseTestClient watch = SseTestClient.watch(gateway.httpPort(), "?prefix=bulk");
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            HttpTestClient.Reply r = http.postJson("/v1/acquire", "session_id", s, "name", "bulk/l-" + i);
            assertThat(r.json().get("status").asText()).as(r.toString()).isEqualTo("GRANTED");
            tokens.add(r.json().get("token").asLong());
        }
        await("the mirror is dropped", () -> lines(Level.WARN, "watch mirror dropped") == 1);
        assertThat(logs.list.stream().filter(e -> e.getFormattedMessage().contains("watch mirror dropped")).findFirst()
                .orElseThrow().getFormattedMessage()).contains("watch-mirror-bytes").contains(String.valueOf(BOUND));
        await("its heap is given back", () -> gauge("warden.watch.mirror.bytes") == 0);
        assertThat(gateway.watches().counts().join()).as("no cell counts from a dropped mirror").isEmpty();

        // Locks, reads and listings do not need the mirror.
        HttpTestClient.Reply other = http.postJson("/v1/acquire", "session_id", s, "name", "other/x");
        assertThat(other.json().get("status").asText()).isEqualTo("GRANTED");
        assertThat(http.get("/v1/locks/bulk/l-7").json().get("holders")).hasSize(1);
        assertThat(http.get("/v1/locks?namespace=bulk&limit=1000").json().get("locks")).hasSize(100);

        for (int i = 20; i < 100; i++) { // 20 locks stay: about 13 KB
            assertThat(http.postJson("/v1/release", "session_id", s, "name", "bulk/l-" + i, "token", tokens.get(i))
                    .json().get("released").asBoolean()).isTrue();
        }
        // The mirror is read again 30 s (on the gateway's clock) after it was dropped.
        fixture.clock.advance(Duration.ofSeconds(31));
        SseTestClient.Event resync;
        do {
            resync = watch.next();
        } while (!resync.type().equals("RESYNC"));
        assertThat(resync.data().get("locks")).hasSize(20);
        await("the mirror is back", () -> gateway.watches().counts().join().map(c -> c.locks() == 21).orElse(false));
        assertThat(gauge("warden.watch.mirror.bytes")).isBetween(1.0, (double) BOUND);
        assertThat(lines(Level.INFO, "fits in its bound again")).isEqualTo(1);
        assertThat(lines(Level.WARN, "watch mirror dropped")).as("one WARN per episode").isEqualTo(1);

        // Events flow again.
        assertThat(http.postJson("/v1/release", "session_id", s, "name", "bulk/l-3", "token", tokens.get(3))
                .json().get("released").asBoolean()).isTrue();
        assertThat(watch.next().type()).isEqualTo("RELEASED");
        watch.close();
    }
}
