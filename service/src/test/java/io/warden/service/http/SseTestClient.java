package io.warden.service.http;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A Server-Sent Events client for tests: opens {@code GET /v1/watch?...}, parses the stream on a reader thread and
 * hands out events with deadlines. Comments (heartbeats) are skipped.
 */
final class SseTestClient implements AutoCloseable {
    static final Duration DEADLINE = Duration.ofSeconds(20);
    private static final Object END = new Object();
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One event: the SSE {@code id} and {@code event} fields and the JSON {@code data}. */
    record Event(String id, String type, JsonNode data) {
        long revision() {
            return data.get("revision").asLong();
        }

        String name() {
            return data.path("name").asText(null);
        }

        String sessionId() {
            return data.path("session_id").asText(null);
        }

        long token() {
            return data.path("token").asLong();
        }

        @Override
        public String toString() {
            return type + "@" + id + " " + data;
        }
    }

    private final HttpResponse<Stream<String>> response;
    private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final Thread reader;

    private SseTestClient(HttpResponse<Stream<String>> response) {
        this.response = response;
        this.reader = new Thread(this::read, "sse-test-reader");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    static SseTestClient open(int port, String query) {
        return open(port, query, Map.of());
    }

    static SseTestClient open(int port, String query, Map<String, String> headers) {
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

    int status() {
        return response.statusCode();
    }

    String contentType() {
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
                        events.add(new Event(id, type, HttpTestClient.MAPPER.readTree(data.toString())));
                    }
                    id = null;
                    type = null;
                    data.setLength(0);
                } else if (line.startsWith(":")) {
                    continue;
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
                events.add(new Event(null, "problem", HttpTestClient.MAPPER.readTree(data.toString())));
            }
        } catch (IOException | UncheckedIOException e) {
            // closed by the test or the server
        } finally {
            events.add(END);
        }
    }

    /** The next event, within the deadline. */
    Event next() {
        try {
            Object o = events.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            if (o == null) {
                throw new AssertionError("no event within " + DEADLINE);
            }
            if (o == END) {
                events.add(END);
                throw new AssertionError("the stream ended");
            }
            return (Event) o;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    List<Event> next(int n) {
        List<Event> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(next());
        }
        return out;
    }

    /** Waits until the server ends the stream; fails if an event comes first or nothing happens in time. */
    void awaitEnd() {
        try {
            Object o = events.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            if (o != END) {
                throw new AssertionError("expected the stream to end, got " + o);
            }
            events.add(END);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        response.body().close();
        reader.interrupt();
    }
}
