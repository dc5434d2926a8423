package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.LockEvent;
import io.warden.client.Watch;
import io.warden.client.WatchOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The watch workload of the proof suite: one SDK client ({@code io.warden.client.WardenClient}, its own session) in
 * the workload's JVM watching the prefix {@code jepsen} through the same client links as everybody else, from before
 * the first acquire to after the last. The SDK resumes the stream by revision on the next gateway whenever a fault
 * breaks it; every event is recorded with the moment it arrived, for {@link WatchChecker}.
 *
 * <p>Concurrency: the listener runs on the watch's own thread and appends to a concurrent queue; {@link #close()} and
 * {@link #write} are called by the workload's main thread.
 */
final class WatchRecorder implements AutoCloseable {
    /** One event as received: {@code received} in {@code System.nanoTime()}. */
    record Seen(long revision, String type, String name, String session, Long token, long received) {
    }

    /** What a run's watch saw: when the stream was first open, and every event in the order it came. */
    record Recording(long opened, long closed, List<Seen> events) {
    }

    private final io.warden.client.WardenClient sdk;
    private final Watch watch;
    private final long opened;
    private final ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
    private volatile long lastRevision = -1;
    private long closedAt;

    private WatchRecorder(List<URI> gateways) {
        this.sdk = io.warden.client.WardenClient.builder()
                .endpoints(gateways.stream().map(URI::toString).toArray(String[]::new))
                .clientId("jepsen-watcher").sessionTtl(Duration.ofSeconds(10)).build();
        this.watch = sdk.watch(WatchOptions.prefix("jepsen"), this::onEvent);
        this.opened = System.nanoTime();
    }

    static WatchRecorder start(List<URI> gateways) {
        return new WatchRecorder(gateways);
    }

    private void onEvent(LockEvent e) {
        seen.add(new Seen(e.revision(), e.type().name(), e.name(), e.sessionId(), e.token(), System.nanoTime()));
        lastRevision = Math.max(lastRevision, e.revision());
    }

    /** Waits until an event at or past {@code revision} has come, at most {@code timeout}; true if one did. */
    boolean awaitRevision(long revision, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (lastRevision < revision && System.nanoTime() - deadline < 0) {
            io.warden.it.support.Await.sleepQuietly(Duration.ofMillis(100));
        }
        return lastRevision >= revision;
    }

    @Override
    public void close() {
        closedAt = System.nanoTime();
        watch.close();
        sdk.close();
    }

    void write(Path file) {
        try {
            new ObjectMapper().writeValue(file.toFile(), new Recording(opened, closedAt, new ArrayList<>(seen)));
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file, e);
        }
    }

    static Recording read(Path file) {
        try {
            return new ObjectMapper().readValue(file.toFile(), Recording.class);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
    }
}
