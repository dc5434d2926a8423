package io.warden.console.view;

import io.warden.console.model.LockState;
import io.warden.console.model.QueuedRequest;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One lock as a table row: who holds it, how many wait, since when.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param mode            EXCLUSIVE, SHARED or SEMAPHORE as held now, or {@code FREE} when nothing holds it (only waiters, e.g.
 *                        behind a lock-delay)
 * @param holderClients   the client ids of its holders, in queue order, without repeats
 * @param heldSince       the earliest {@link QueuedRequest#heldSince()} of its holders, or null
 * @param oldestWaitSince when its longest-waiting request was made, or null without waiters
 * @param oldestWaiter    the client id of that request, or null
 * @param tooLargeEntries 0, or the lock's entries when it has too many for the gateway to read: then the mode is
 *                        {@link #TOO_LARGE} and nothing else is known
 */
public record LockRow(String name, String namespace, String mode, int holders, List<String> holderClients,
                      int waiters, Instant heldSince, Instant oldestWaitSince, String oldestWaiter, int tooLargeEntries) {
    /** The mode shown for a lock the gateway could not read. */
    public static final String TOO_LARGE = "TOO_LARGE";

    public LockRow {
        Objects.requireNonNull(name, "name");
        holderClients = List.copyOf(holderClients);
    }

    public static LockRow of(LockState lock) {
        if (lock.tooLarge()) {
            return new LockRow(lock.name(), lock.namespace(), TOO_LARGE, 0, List.of(), 0, null, null, null,
                    lock.tooLargeEntries());
        }
        List<QueuedRequest> holders = lock.holders();
        List<QueuedRequest> waiters = lock.waiters();
        String mode = holders.isEmpty() ? "FREE" : holders.get(0).mode().name();
        Instant heldSince = holders.stream().map(QueuedRequest::heldSince).min(Instant::compareTo).orElse(null);
        QueuedRequest oldest = waiters.stream()
                .min((a, b) -> a.requestedAt().compareTo(b.requestedAt())).orElse(null);
        List<String> clients = holders.stream().map(QueuedRequest::clientId).distinct().toList();
        return new LockRow(lock.name(), lock.namespace(), mode, holders.size(), clients, waiters.size(), heldSince,
                oldest == null ? null : oldest.requestedAt(), oldest == null ? null : oldest.clientId(), 0);
    }

    /** The holders' client ids joined for a table cell, at most three then "+N". */
    public String holderSummary() {
        if (tooLargeEntries > 0) {
            return tooLargeEntries + " entries, too many to read";
        }
        if (holderClients.isEmpty()) {
            return "—";
        }
        int shown = Math.min(3, holderClients.size());
        String head = String.join(", ", holderClients.subList(0, shown));
        return holderClients.size() > shown ? head + " +" + (holderClients.size() - shown) : head;
    }
}
