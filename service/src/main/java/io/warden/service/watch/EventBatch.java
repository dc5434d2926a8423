package io.warden.service.watch;

import java.util.List;
import java.util.function.Function;

/**
 * The events of one ZooKeeper transaction, as the hub publishes them: every watch gets a transaction's events in one
 * call (the ones its filter covers), and the history keeps them together.
 *
 * <p>Serialised once: the wire form of each event is made the first time a stream asks for it ({@link #frames}) and
 * shared by every stream that sends it, instead of once per watch. {@link #frameBytes} is what the frames take, counted
 * once in the watches' memory budget while any stream still has them queued ({@link #refs}).
 *
 * <p>Concurrency: the events are immutable. {@code frames} is filled on the hub's thread only (streams ask for frames
 * while the hub offers them the batch) and read by the streams' writers afterwards: the hand-over through each stream's
 * monitor publishes it. {@code refs} is changed under {@link WatchMemory}'s accounting, from any thread.
 */
public final class EventBatch {
    private final long revision;
    private final List<WatchEvent> events;
    private byte[][] frames;
    private byte[][] redactedFrames;
    private long frameBytes;
    private int refs;
    /** Under the budget's lock: the frame bytes the budget counts for this batch (0 while no stream has it queued). */
    private long charged;

    EventBatch(long revision, List<WatchEvent> events) {
        this.revision = revision;
        this.events = List.copyOf(events);
    }

    /** The zxid of the transaction; every event's revision. */
    public long revision() {
        return revision;
    }

    public List<WatchEvent> events() {
        return events;
    }

    /**
     * The wire form of every event, made by {@code encoder} on the first call (on the hub's thread) and shared after;
     * every caller passes the same encoder (the HTTP layer's).
     */
    public byte[][] frames(Function<WatchEvent, byte[]> encoder) {
        if (frames == null) {
            frames = encode(encoder);
        }
        return frames;
    }

    /** Every event's frame by {@code encoder}, counted in {@link #frameBytes}. */
    private byte[][] encode(Function<WatchEvent, byte[]> encoder) {
        byte[][] made = new byte[events.size()][];
        for (int i = 0; i < made.length; i++) {
            made[i] = encoder.apply(events.get(i));
            frameBytes += made[i].length;
        }
        return made;
    }

    /**
     * The wire form of every event for streams that may not see session ids (docs/api.md, authorization), made on the
     * first call (on the hub's thread) and shared by every such stream, as {@link #frames} is by the others.
     */
    public byte[][] redactedFrames(Function<WatchEvent, byte[]> encoder) {
        if (redactedFrames == null) {
            redactedFrames = encode(encoder);
        }
        return redactedFrames;
    }

    long charged() {
        return charged;
    }

    void charge(long bytes) {
        charged = bytes;
    }

    /** What the frames made so far take, both variants (0 before {@link #frames} or {@link #redactedFrames} was called). */
    public long frameBytes() {
        return frameBytes;
    }

    /** Under the budget's lock: whether some stream has it queued. */
    boolean isRetained() {
        return refs > 0;
    }

    /** Under the budget's lock: one more stream has this batch queued; true when it is the first. */
    boolean retain() {
        return refs++ == 0;
    }

    /** Under the budget's lock: a stream wrote or dropped it; true when no stream has it queued any more. */
    boolean release() {
        return --refs == 0;
    }

    @Override
    public String toString() {
        return "batch " + revision + " (" + events.size() + " events)";
    }
}
