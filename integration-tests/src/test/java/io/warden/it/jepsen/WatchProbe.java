package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.it.support.Await;
import io.warden.it.support.WardenClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A plain watch of one lock on one gateway ({@code GET /v1/watch?name=}, from now, never resumed), to learn that this
 * gateway has put a change into its watch streams: once a probe has an event, every stream of that gateway that was
 * live before it has had it too, and a stream resumed there afterwards must get it from the gateway's history.
 *
 * <p>Why "from now" is enough: the gateway queues a new watch's activation on its one watch thread before it answers
 * the request's headers, and that thread takes the changes in ZooKeeper's order, each after whatever was queued before
 * it; so a probe whose headers have come gets every change committed after that (on a gateway whose view of the locks
 * is ready, as it is once the gateway says so).
 *
 * <p>Concurrency: one reader thread appends to a concurrent queue; the other methods are called by one thread.
 */
final class WatchProbe implements AutoCloseable {
    /** One event: its type and token. */
    private record Seen(String type, long token) {
    }

    private final String where;
    private final InputStream body;
    private final ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();

    private WatchProbe(String where, InputStream body) {
        this.where = where;
        this.body = body;
        Thread reader = new Thread(this::read, "watch-probe " + where);
        reader.setDaemon(true);
        reader.start();
    }

    /** Opens the probe and returns once the gateway has answered 200 (the watch is live from then on). */
    static WatchProbe open(HttpClient http, URI gateway, String lock) {
        URI uri = gateway.resolve("/v1/watch?name=" + URLEncoder.encode(lock, StandardCharsets.UTF_8));
        HttpRequest request = HttpRequest.newBuilder(uri).header("Accept", "text/event-stream")
                .timeout(Duration.ofSeconds(10)).GET().build();
        HttpResponse<InputStream> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException("opening a watch probe at " + uri, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (response.statusCode() != 200) {
            try (InputStream in = response.body()) {
                throw new IllegalStateException("watch probe at " + uri + ": HTTP " + response.statusCode() + " "
                        + new String(in.readNBytes(4096), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return new WatchProbe(uri.toString(), response.body());
    }

    private void read() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.startsWith("data:")) {
                    JsonNode data = WardenClient.JSON.readTree(line.substring(5).trim());
                    seen.add(new Seen(data.path("type").asText(), data.path("token").asLong(-1)));
                }
            }
        } catch (IOException closed) {
            // closed by close(), or the gateway went: awaitEvent then times out and says where
        }
    }

    /** Waits until an event of {@code type} with {@code token} has come; throws {@link AssertionError} after {@code timeout}. */
    void awaitEvent(String type, long token, Duration timeout) {
        Await.until(type + " of token " + token + " on the watch probe " + where, timeout, Duration.ofMillis(20),
                () -> seen.contains(new Seen(type, token)));
    }

    @Override
    public void close() {
        try {
            body.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
