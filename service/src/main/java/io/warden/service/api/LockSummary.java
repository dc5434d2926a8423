package io.warden.service.api;

/**
 * One live lock in a listing.
 *
 * @param tooLargeEntries 0 for a lock that was read; otherwise its entries, too many for the gateway to read: then
 *                        {@code mode} is null and {@code holders} and {@code waiters} are 0 (not known)
 */
public record LockSummary(String name, LockView.LockMode mode, int holders, int waiters, int tooLargeEntries) {
    public LockSummary(String name, LockView.LockMode mode, int holders, int waiters) {
        this(name, mode, holders, waiters, 0);
    }

    /** A lock with {@code entries} entries, too many for the gateway to read. */
    public static LockSummary tooLarge(String name, int entries) {
        return new LockSummary(name, null, 0, 0, entries);
    }
}
