package io.warden.service.watch;

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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A reading client of {@code GET /v1/watch} for the watch tests: parses the Server-Sent Events on a reader thread,
 * hands events out with a deadline, keeps the comments, and tells a clean end of the stream (the response ended) from
 * a broken one (the connection was cut).
 */
final class SseReader implements AutoCloseable {
    static final Duration DEADLINE = Duration.ofSeconds(30);
    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One event: the SSE {@code id} (null when the frame had none), its {@code event} type and JSON {@code data}. */
    record Event(String id, String type, JsonNode data) {
        long revision() {
            return data.get("revision").asLong();
        }

        String name() {
            return data.path("name").asText(null);
        }

        long token() {
            return data.path("token").asLong();
        }

        /** What identifies an event across streams: revision, type, lock and token. */
        String key() {
            return revision() + " " + type + " " + name() + " " + (type.equals("RESYNC") ? "" : token());
        }

        @Override
        public String toString() {
            return type + "@" + revision() + (id == null ? "" : " id " + id) + " " + name() + " token " + token();
        }
    }

    /** How the stream ended: {@code clean} when the response ended normally, else the error that broke it. */
    record End(boolean clean, String error) {
    }

    private final HttpResponse<Stream<String>> response;
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final List<Event> received = new CopyOnWriteArrayList<>();
    private final List<String> comments = new CopyOnWriteArrayList<>();
    private final CompletableFuture<End> end = new CompletableFuture<>();
    private final Thread reader;

    private SseReader(HttpResponse<Stream<String>> response) {
        this.response = response;
        this.reader = new Thread(this::read, "sse-reader");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** Opens {@code /v1/watch{query}} and returns once the response headers (200) are in: the watch is subscribed. */
    static SseReader open(int port, String query) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/watch" + query))
                .header("Accept", "text/event-stream").GET().build();
        try {
            HttpResponse<Stream<String>> r = CLIENT.send(request, HttpResponse.BodyHandlers.ofLines());
            if (r.statusCode() != 200) {
                String body = String.join("\n", r.body().toList());
                throw new AssertionError("GET /v1/watch" + query + " answered " + r.statusCode() + ": " + body);
            }
            return new SseReader(r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
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
                        Event e = new Event(id, type, JSON.readTree(data.toString()));
                        received.add(e);
                        events.add(e);
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
                }
            }
            end.complete(new End(true, null));
        } catch (IOException | UncheckedIOException e) {
            end.complete(new End(false, e.toString()));
        } catch (RuntimeException e) {
            end.complete(new End(false, e.toString()));
        }
    }

    /** The next event, within the deadline. */
    Event next() {
        try {
            Event e = events.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            if (e == null) {
                throw new AssertionError("no event within " + DEADLINE + (end.isDone() ? "; the stream ended: " + end.join() : ""));
            }
            return e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    List<Event> next(int n) {
        List<Event> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(next());
        }
        return out;
    }

    /** Every event received so far, in order (also those not yet taken with {@link #next}). */
    List<Event> received() {
        return List.copyOf(received);
    }

    /** The revision of the last {@code id:} received, or -1. */
    long lastId() {
        long last = -1;
        for (Event e : received) {
            if (e.id() != null) {
                last = Long.parseLong(e.id());
            }
        }
        return last;
    }

    List<String> comments() {
        return List.copyOf(comments);
    }

    /** Waits until the stream ends, and says how. */
    End awaitEnd() {
        return end.orTimeout(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    @Override
    public void close() {
        response.body().close();
        reader.interrupt();
    }
}
