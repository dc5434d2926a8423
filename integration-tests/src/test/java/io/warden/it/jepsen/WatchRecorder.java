package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.LockEvent;
import io.warden.client.Watch;
import io.warden.client.WatchOptions;
import io.warden.it.support.LinkProxy;
import io.warden.it.support.LoopbackPorts;
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
 * <p>Its calls go through a {@link LinkProxy} of its own in front of each client link, so that the workload can cut
 * its stream on purpose ({@link #cut()}, {@link #reconnect()}) while the other clients go on.
 *
 * <p>Concurrency: the listener runs on the watch's own thread and appends to a concurrent queue; {@link #close()},
 * {@link #write}, {@link #cut()} and {@link #reconnect()} are called by the workload's main thread.
 */
final class WatchRecorder implements AutoCloseable {
    /** One event as received: {@code received} in {@code System.nanoTime()}. */
    record Seen(long revision, String type, String name, String session, Long token, long received) {
    }

    /** What a run's watch saw: when the stream was first open, and every event in the order it came. */
    record Recording(long opened, long closed, List<Seen> events) {
    }

    /** The watcher's own links, one in front of each gateway's client link. */
    private final List<LinkProxy> links;
    private final io.warden.client.WardenClient sdk;
    private final Watch watch;
    private final long opened;
    private final ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
    private volatile long lastRevision = -1;
    private long closedAt;

    private WatchRecorder(List<URI> gateways) {
        List<LinkProxy> mine = new ArrayList<>();
        for (int i = 0; i < gateways.size(); i++) {
            mine.add(new LinkProxy("watcher-gw" + (i + 1), gateways.get(i).getPort()));
        }
        this.links = List.copyOf(mine);
        this.sdk = io.warden.client.WardenClient.builder()
                .endpoints(links.stream().map(l -> "http://" + LoopbackPorts.HOST + ":" + l.port()).toArray(String[]::new))
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

    /** Whether an event of {@code type} on {@code name} with {@code token} has come, waiting at most {@code timeout}. */
    boolean awaitEvent(String type, String name, long token, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!hasEvent(type, name, token)) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            io.warden.it.support.Await.sleepQuietly(Duration.ofMillis(20));
        }
        return true;
    }

    boolean hasEvent(String type, String name, long token) {
        return seen.stream().anyMatch(e -> e.type().equals(type) && name.equals(e.name()) && e.token() != null
                && e.token() == token);
    }

    /**
     * Cuts the stream: the gateways' replies to the watcher (its events, and its session's keepalive answers) are
     * dropped from now on, while its requests still arrive; the stream stays open, so the SDK does not know yet.
     */
    void cut() {
        links.forEach(LinkProxy::dropReplies);
    }

    /**
     * Ends a {@link #cut()}: closes the watcher's connections, then lets replies through again, so the SDK resumes
     * the stream after the last revision it received. The close comes first, while replies are still dropped: an event
     * the gateway sent during the cut can then never slip through between the two steps.
     */
    void reconnect() {
        links.forEach(LinkProxy::reset);
        links.forEach(LinkProxy::heal);
    }

    @Override
    public void close() {
        closedAt = System.nanoTime();
        watch.close();
        sdk.close();
        links.forEach(LinkProxy::close);
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
