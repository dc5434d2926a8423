package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * An ERROR "GET /v1/sessions/{id}/keepalive failed unexpectedly" was seen while a gateway shut
 * down during a CLI test. Its cause: a WebSocket upgrade whose connection breaks before the 101 response is written —
 * the client went away, or the gateway's stop closed the connection of an upgrade in flight (the SDK reconnects as
 * soon as the 1001 close of the drain arrives). Jetty's upgrade then fails with an {@code EofException}, which
 * {@code JettyWebSocketServlet.service} rethrows as an {@code IOException}; Javalin hands exceptions of an upgrade to
 * the HTTP exception mapper, and {@link Problems} takes every exception that is not Warden's for a bug: an ERROR with
 * a correlation id and a 500 nobody can receive.
 *
 * <p>Reproduced here without timing luck: the client sends the upgrade request and resets the connection at once, so
 * the 101 cannot be written.
 */
class KeepaliveUpgradeCutTest {
    private WardenFixture fixture;
    private Logger root;
    private ListAppender<ILoggingEvent> logs;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new WardenFixture();
        root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
    }

    @AfterEach
    void tearDown() throws Exception {
        root.detachAppender(logs);
        fixture.close();
    }

    @Test
    void upgradeCutByTheClient_isNotLoggedAsAnInternalError() throws Exception {
        Gateway gw = fixture.gateway();
        HttpTestClient http = new HttpTestClient(gw.httpPort());
        String sid = http.postJson("/v1/sessions", "client_id", "ws", "ttl_ms", 60_000).json().get("session_id").asText();

        for (int i = 0; i < 20; i++) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", gw.httpPort()), 5000);
                OutputStream out = s.getOutputStream();
                out.write(("GET /v1/sessions/" + sid + "/keepalive HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        + "Sec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                s.setSoLinger(true, 0); // close() resets the connection: the gateway cannot write its 101
            }
        }
        // A keepalive socket after them still works.
        try (WsTestClient ws = new WsTestClient(gw.httpPort(), "/v1/sessions/" + sid + "/keepalive")) {
            ws.send("ping");
            assertThat(ws.nextFrame()).contains("ttl_ms_remaining");
        }
        // An observation over time, not a synchronisation: the failed upgrades log (if at all) within milliseconds.
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() - end < 0) {
            List<ILoggingEvent> logged;
            synchronized (logs) { // the appender appends under its own lock
                logged = List.copyOf(logs.list);
            }
            List<String> errors = logged.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
                    .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()).toList();
            assertThat(errors).as("a client that leaves during the upgrade is no error of the gateway").isEmpty();
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }
}
