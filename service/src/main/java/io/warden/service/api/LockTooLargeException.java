package io.warden.service.api;

/**
 * A lock whose queue has more entries than this gateway reads in one ZooKeeper reply (RESOURCE_EXHAUSTED, 429): a limit
 * of this lock, not of the gateway, so another gateway would answer the same, and the call is not worth repeating until
 * the lock has shrunk. Warden itself admits at most {@code max-entries-per-lock} entries per lock; the rest are entries
 * of other ZooKeeper clients on the same node (plain Curator locks), which Warden cannot refuse. The problem document
 * carries {@link #lockName()} as {@code lock} and {@link #entries()} as {@code entries}.
 */
public final class LockTooLargeException extends WardenException {
    private final String lockName;
    private final int entries;
    private final int listable;

    /**
     * @param entries    the lock's entries (its node's child count)
     * @param listable   the most this gateway lists
     * @param packetBytes the gateway's ZooKeeper packet limit ({@code zk-max-packet-bytes})
     * @param what       what could not be done, for the detail ("its holders and waiters cannot be shown")
     */
    public LockTooLargeException(String lockName, int entries, int listable, int packetBytes, String what) {
        super(ErrorCode.RESOURCE_EXHAUSTED, "lock " + lockName + " has " + entries + " entries in its queue, more than "
                + "this gateway reads at once (" + listable + ": a listing of half its ZooKeeper packet limit, "
                + "zk-max-packet-bytes " + packetBytes + "); " + what + " until it has fewer. Warden admits at most "
                + "max-entries-per-lock holders and waiters per lock: the rest were made by other ZooKeeper clients on "
                + "the lock's node");
        this.lockName = lockName;
        this.entries = entries;
        this.listable = listable;
    }

    public String lockName() {
        return lockName;
    }

    public int entries() {
        return entries;
    }

    public int listable() {
        return listable;
    }
}
