package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A watch that resumes after the cell's revisions went back (ZooKeeper restored from a backup, or a new ensemble):
 * every revision it saved is in the gateway's future, and the gateway answers with a RESYNC at its own, lower,
 * revision (issue 10, finding 17). The watch must take that RESYNC as the new truth and the events after it; before,
 * it dropped the RESYNC and every later event as "older than the last revision", and went silent for good.
 * Against a scripted SSE server, as in {@link SseWatchResumeTest}: the gateway's side is tested in the service module
 * (WatchStreamTest.sinceRevisionInTheFuture_isAnsweredWithAResync_thenLiveEvents).
 */
class SseWatchRestoreTest {
    private static final String SESSION = "0123456789abcdef0123456789abcdef";

    private HttpServer server;
    private ScheduledExecutorService scheduler;
    private final List<String> queries = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();

    @BeforeEach
    void setUp() throws Exception {
        scheduler = Executors.newSingleThreadScheduledExecutor();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/watch", exchange -> {
            queries.add(exchange.getRequestURI().getRawQuery());
            String body = switch (connections.incrementAndGet()) {
                case 1 -> event(100, "GRANTED", 100);                   // then the cell is restored from a backup
                case 2 -> "id: 7\nevent: RESYNC\ndata: {\"revision\":7,\"type\":\"RESYNC\",\"locks\":[{\"name\":\"jobs/a\","
                        + "\"mode\":\"EXCLUSIVE\",\"holders\":[{\"session_id\":\"" + SESSION + "\",\"client_id\":\"c\","
                        + "\"mode\":\"EXCLUSIVE\",\"token\":5}],\"waiters\":[]}]}\n\n" + event(8, "RELEASED", 5);
                default -> ": nothing new\n\n";
            };
            exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body.getBytes(StandardCharsets.UTF_8));
            }
        });
        server.start();
    }

    @AfterEach
    void tearDown() {
        server.stop(0);
        scheduler.shutdownNow();
    }

    private static String event(long revision, String type, long token) {
        return "id: " + revision + "\nevent: " + type + "\ndata: {\"revision\":" + revision + ",\"type\":\"" + type
                + "\",\"name\":\"jobs/a\",\"session_id\":\"" + SESSION + "\",\"mode\":\"EXCLUSIVE\",\"token\":" + token + "}\n\n";
    }

    @Test
    void aResyncAtALowerRevision_isTheNewStart_andTheEventsAfterItArrive() {
        HttpGateway gateway = new HttpGateway(List.of(URI.create("http://127.0.0.1:" + server.getAddress().getPort())),
                scheduler, System::nanoTime);
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        SseWatch watch = new SseWatch(gateway, WatchOptions.prefix("jobs"), -1, events::add, scheduler,
                Duration.ofSeconds(2), () -> { });
        try {
            watch.start();
            Cell.await("a third stream", () -> queries.size() >= 3);
            Cell.await("three events", () -> events.size() >= 3);

            assertThat(events).extracting(LockEvent::revision).containsExactly(100L, 7L, 8L);
            assertThat(events).extracting(LockEvent::type).containsExactly(LockEvent.Type.GRANTED,
                    LockEvent.Type.RESYNC, LockEvent.Type.RELEASED);
            assertThat(queries.get(2)).isEqualTo("prefix=jobs&since_revision=7");
            assertThat(watch.lastRevision()).isEqualTo(8);
        } finally {
            watch.close();
        }
    }
}
