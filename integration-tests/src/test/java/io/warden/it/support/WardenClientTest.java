package io.warden.it.support;

import com.sun.net.httpserver.HttpServer;
import io.warden.it.support.WardenClient.SessionNotFoundException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The proof suite's client records what each call may have done. A release whose first attempt reached a gateway and
 * lost its reply, sent again after the session expired, is answered 404: the history must not say "not released"
 * then, or the checker sees the lock held by a session whose hold had in fact ended (a soak of 30 minutes reported
 * such a lock as past its search budget, a violation it could not name).
 */
class WardenClientTest {
    private HttpServer server;

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.stop(0);
        }
    }

    /** A gateway stand-in: the first {@code lost} calls are read and their connections closed unanswered; then 404. */
    private WardenClient clientOf(int lost) throws IOException {
        AtomicInteger calls = new AtomicInteger();
        server = HttpServer.create(new InetSocketAddress(LoopbackPorts.HOST, 0), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            if (calls.incrementAndGet() <= lost) {
                exchange.close(); // the reply is lost
                return;
            }
            byte[] body = "{\"code\":\"SESSION_NOT_FOUND\",\"detail\":\"session s does not exist\"}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
            exchange.sendResponseHeaders(404, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        URI base = URI.create("http://" + LoopbackPorts.HOST + ":" + server.getAddress().getPort());
        return new WardenClient(WardenClient.newHttpClient(), List.of(base), 0, Duration.ofSeconds(10));
    }

    @Test
    void a404AfterAnAttemptWhoseReplyWasLost_isAmbiguous() throws IOException {
        WardenClient client = clientOf(1);
        assertThatThrownBy(() -> client.release("s", "l", 7))
                .isInstanceOfSatisfying(SessionNotFoundException.class, e -> assertThat(e.ambiguous()).isTrue());
    }

    @Test
    void a404ToTheFirstAttempt_isNot() throws IOException {
        WardenClient client = clientOf(0);
        assertThatThrownBy(() -> client.release("s", "l", 7))
                .isInstanceOfSatisfying(SessionNotFoundException.class, e -> assertThat(e.ambiguous()).isFalse());
    }
}
