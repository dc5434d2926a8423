package io.warden.console.view;

import io.warden.console.model.LockDetail;
import io.warden.console.model.LockEvent;
import io.warden.console.model.QueuedRequest;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The lock page: holders, then the waiters in queue order, then recent events.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param name            the lock's name as asked for
 * @param asOf            when it was read; its revision is the read's zxid (-1 for a free lock)
 * @param tooLargeEntries 0, or the lock's entries when it has too many for the gateway to read (no queue is shown)
 */
public record LockView(String name, String mode, List<QueuedRequest> holders, List<QueuedRequest> waiters,
                       List<LockEvent> events, AsOf asOf, int tooLargeEntries) {
    public LockView {
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
        events = List.copyOf(events);
    }

    public static LockView of(String name, Optional<LockDetail> detail, Instant now) {
        if (detail.isEmpty()) {
            return new LockView(name, "FREE", List.of(), List.of(), List.of(), new AsOf(now, -1, now), 0);
        }
        LockDetail d = detail.get();
        if (d.lock().tooLarge()) {
            return new LockView(d.lock().name(), LockRow.TOO_LARGE, List.of(), List.of(), d.recentEvents(),
                    new AsOf(now, d.revision(), now), d.lock().tooLargeEntries());
        }
        Comparator<QueuedRequest> order = Comparator.comparingInt(QueuedRequest::position);
        List<QueuedRequest> holders = d.lock().holders().stream().sorted(order).toList();
        List<QueuedRequest> waiters = d.lock().waiters().stream().sorted(order).toList();
        String mode = holders.isEmpty() ? "FREE" : holders.get(0).mode().name();
        return new LockView(d.lock().name(), mode, holders, waiters, d.recentEvents(), new AsOf(now, d.revision(), now), 0);
    }

    /** No holders and no waiters: the lock is free (ZooKeeper keeps no node for it). */
    public boolean free() {
        return holders.isEmpty() && waiters.isEmpty() && tooLargeEntries == 0;
    }

    /** Whether the lock has too many entries for the gateway to read: its holders and waiters are not known. */
    public boolean tooLarge() {
        return tooLargeEntries > 0;
    }

    /** When the longest-waiting request was made, or null without waiters. */
    public Instant oldestWait() {
        return waiters.stream().map(QueuedRequest::requestedAt).min(Comparator.naturalOrder()).orElse(null);
    }

    public String namespace() {
        int slash = name.indexOf('/');
        return slash < 0 ? name : name.substring(0, slash);
    }
}
