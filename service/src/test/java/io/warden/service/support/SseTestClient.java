package io.warden.service.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A Server-Sent Events client of {@code GET /v1/watch} for tests: parses the stream on a reader thread, hands events
 * out with a deadline, keeps every event and comment received, and tells a clean end of the stream (the response
 * ended) from a broken one (the connection was cut). A non-200 answer's problem document is one event of type
 * {@code problem}.
 *
 * <p>Thread-safety: one test thread takes events; the reader thread only adds to thread-safe collections.
 */
public final class SseTestClient implements AutoCloseable {
    public static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Object END = new Object();
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One event: the SSE {@code id} (null when the frame had none), its {@code event} type and JSON {@code data}. */
    public record Event(String id, String type, JsonNode data) {
        public long revision() {
            return data.get("revision").asLong();
        }

        public String name() {
            return data.path("name").asText(null);
        }

        public String sessionId() {
            return data.path("session_id").asText(null);
        }

        public long token() {
            return data.path("token").asLong();
        }

        /** What identifies an event across streams: revision, type, lock and token. */
        public String key() {
            return revision() + " " + type + " " + name() + " " + (type.equals("RESYNC") ? "" : token());
        }

        @Override
        public String toString() {
            return type + (id == null ? "" : "@" + id) + " " + data;
        }
    }

    /** How the stream ended: {@code clean} when the response ended normally, else the error that broke it. */
    public record End(boolean clean, String error) {
    }

    private final HttpResponse<Stream<String>> response;
    private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final List<Event> received = new CopyOnWriteArrayList<>();
    private final List<String> comments = new CopyOnWriteArrayList<>();
    private final CompletableFuture<End> end = new CompletableFuture<>();
    private final Thread reader;

    private SseTestClient(HttpResponse<Stream<String>> response) {
        this.response = response;
        this.reader = new Thread(this::read, "sse-test-reader");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** Opens {@code /v1/watch{query}} whatever the answer (see {@link #status()}). */
    public static SseTestClient open(int port, String query) {
        return open(port, query, Map.of());
    }

    public static SseTestClient open(int port, String query, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/watch" + query))
                .header("Accept", "text/event-stream").GET();
        headers.forEach(b::header);
        try {
            return new SseTestClient(CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofLines()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Opens {@code /v1/watch{query}} and returns once the response headers are in, failing unless it is a 200. */
    public static SseTestClient watch(int port, String query) {
        SseTestClient c = open(port, query);
        if (c.status() != 200) {
            String body = String.valueOf(c.next().data());
            c.close();
            throw new AssertionError("GET /v1/watch" + query + " answered " + c.status() + ": " + body);
        }
        return c;
    }

    public int status() {
        return response.statusCode();
    }

    public String contentType() {
        return response.headers().firstValue("Content-Type").orElse(null);
    }

    private void read() {
        String id = null;
        String type = null;
        StringBuilder data = new StringBuilder();
        try (Stream<String> lines = response.body()) {
            for (var it = lines.iterator(); it.hasNext(); ) {
                String line = it.next();
                if (line.isEmpty()) {
                    if (data.length() > 0) {
                        add(new Event(id, type, JSON.readTree(data.toString())));
                    }
                    id = null;
                    type = null;
                    data.setLength(0);
                } else if (line.startsWith(":")) {
                    comments.add(line.substring(1).trim());
                } else if (line.startsWith("id: ")) {
                    id = line.substring(4);
                } else if (line.startsWith("event: ")) {
                    type = line.substring(7);
                } else if (line.startsWith("data: ")) {
                    data.append(line.substring(6));
                } else if (status() != 200) {
                    data.append(line); // a problem document
                }
            }
            if (status() != 200 && data.length() > 0) {
                add(new Event(null, "problem", JSON.readTree(data.toString())));
            }
            end.complete(new End(true, null));
        } catch (IOException | RuntimeException e) {
            end.complete(new End(false, e.toString()));
        } finally {
            events.add(END);
        }
    }

    private void add(Event e) {
        received.add(e);
        events.add(e);
    }

    /** The next event, within the deadline; fails when the stream has ended. */
    public Event next() {
        try {
            Object o = events.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            if (o == null) {
                throw new AssertionError("no event within " + DEADLINE);
            }
            if (o == END) {
                events.add(END);
                throw new AssertionError("the stream ended: " + end.join());
            }
            return (Event) o;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public List<Event> next(int n) {
        List<Event> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(next());
        }
        return out;
    }

    /** Every event received so far, in order (also those not yet taken with {@link #next}). */
    public List<Event> received() {
        return List.copyOf(received);
    }

    /** The revision of the last {@code id:} received, or -1. */
    public long lastId() {
        long last = -1;
        for (Event e : received) {
            if (e.id() != null) {
                last = Long.parseLong(e.id());
            }
        }
        return last;
    }

    public List<String> comments() {
        return List.copyOf(comments);
    }

    /** Waits until the stream ends (events not taken yet do not matter), and says how. */
    public End awaitEnd() {
        return end.orTimeout(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    @Override
    public void close() {
        response.body().close();
        reader.interrupt();
    }
}
