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
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The resume rules of {@link SseWatch} against a scripted SSE server: streams cut in the middle of a revision, after a
 * RESYNC, and what the watch asks for on each reconnect. (Real gateways cannot be made to cut a stream between two
 * events of one revision on demand.)
 */
class SseWatchResumeTest {
    private static final String SESSION = "0123456789abcdef0123456789abcdef";

    private HttpServer server;
    private ScheduledExecutorService scheduler;
    private final List<String> queries = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    /** What the server sends on its n-th connection (from 1); set by each test before its watch starts. */
    private volatile IntFunction<String> script = n -> ": nothing new\n\n";

    private static String resync(long revision, long token) {
        return "id: " + revision + "\nevent: RESYNC\ndata: {\"revision\":" + revision + ",\"type\":\"RESYNC\",\"locks\":[{\"name\":\"jobs/a\","
                + "\"mode\":\"EXCLUSIVE\",\"holders\":[{\"session_id\":\"" + SESSION + "\",\"client_id\":\"c\","
                + "\"mode\":\"EXCLUSIVE\",\"token\":" + token + "}],\"waiters\":[]}]}\n\n";
    }

    private SseWatch watch(List<LockEvent> events) {
        HttpGateway gateway = new HttpGateway(List.of(URI.create("http://127.0.0.1:" + server.getAddress().getPort())),
                scheduler, System::nanoTime);
        return new SseWatch(gateway, WatchOptions.prefix("jobs"), -1, events::add, scheduler, Duration.ofSeconds(2), () -> { });
    }

    @BeforeEach
    void setUp() throws Exception {
        scheduler = Executors.newSingleThreadScheduledExecutor();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/watch", exchange -> {
            queries.add(exchange.getRequestURI().getRawQuery());
            String body = script.apply(connections.incrementAndGet());
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
    void cutsMidRevisionAndAfterAResync_resumeWithoutGapsOrRepeats() {
        script = n -> switch (n) {
            // cut after the first of two events of revision 5
            case 1 -> ": watching\n\n" + event(5, "QUEUED", 5);
            // since_revision=4: revision 5 again (QUEUED is dropped as seen), then a RESYNC at 9
            case 2 -> event(5, "QUEUED", 5) + event(5, "GRANTED", 5) + event(6, "RELEASED", 5) + resync(9, 8);
            // since_revision=9 (a RESYNC includes everything up to its revision)
            case 3 -> event(10, "RELEASED", 8);
            default -> ": nothing new\n\n";
        };
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        SseWatch watch = watch(events);
        try {
            watch.start();
            Cell.await("five events", () -> events.size() >= 5);
            Cell.await("a fourth stream", () -> queries.size() >= 4);

            assertThat(events).extracting(LockEvent::revision).containsExactly(5L, 5L, 6L, 9L, 10L);
            assertThat(events).extracting(LockEvent::type).containsExactly(LockEvent.Type.QUEUED,
                    LockEvent.Type.GRANTED, LockEvent.Type.RELEASED, LockEvent.Type.RESYNC, LockEvent.Type.RELEASED);
            LockEvent resync = events.get(3);
            assertThat(resync.locks()).singleElement().satisfies(l -> {
                assertThat(l.name()).isEqualTo("jobs/a");
                assertThat(l.holders()).singleElement().extracting(LockState.Holder::token).isEqualTo(8L);
            });
            assertThat(queries.subList(0, 4)).containsExactly("prefix=jobs", "prefix=jobs&since_revision=4",
                    "prefix=jobs&since_revision=9", "prefix=jobs&since_revision=9");
            assertThat(watch.lastRevision()).isEqualTo(10);
        } finally {
            watch.close();
        }
        assertThat(watch.done().toCompletableFuture()).isCompleted();
    }

    /**
     * A watch that resumes after the cell's revisions went back (ZooKeeper restored from a backup, or a new ensemble):
     * every revision it saved is in the gateway's future, and the gateway answers with a RESYNC at its own, lower,
     * revision. The watch must take that RESYNC as the new start and the events after it;
     * before, it dropped the RESYNC and every later event as "older than the last revision", and went silent for good.
     */
    @Test
    void aResyncAtALowerRevision_isTheNewStart_andTheEventsAfterItArrive() {
        script = n -> switch (n) {
            case 1 -> event(100, "GRANTED", 100);                       // then the cell is restored from a backup
            case 2 -> resync(7, 5) + event(8, "RELEASED", 5);
            default -> ": nothing new\n\n";
        };
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        SseWatch watch = watch(events);
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
