package io.warden.service.watch;

import java.util.List;

/**
 * Where a watch's output goes (the HTTP layer's Server-Sent Events stream). Every method is called on the hub's one
 * thread and must not block: a sink queues what it is given and writes it elsewhere.
 *
 * <p>A sink bounds what it queues. When it cannot take more (a slow consumer) it answers false, closes itself, and the
 * hub drops it; the client then resumes with its last revision.
 */
public interface WatchSink {
    /** Events of one ZooKeeper transaction (or one replay), in order; false when the sink is full or closed. */
    boolean events(List<WatchEvent> events);

    /** The current state instead of events that are gone; false when the sink is full or closed. */
    boolean resync(Resync resync);

    /** Nothing happened for a while: a comment that keeps proxies from closing an idle stream. */
    void heartbeat();

    /** The hub ends the watch (gateway stopping); the sink closes its stream. */
    void close(String reason);
}
