package io.warden.service.queue;

/**
 * What the gateway knows, without asking ZooKeeper, of how many entries lock queues have: the seam through which the
 * watch mirror (which sees every queue node come and go) spares the engine a read of a lock's stat before each listing
 * ({@link QueueListing}) and an acquire on a full lock its write (the lock engine's admission).
 *
 * <p>Lock names are as {@link io.warden.service.api.LockName#toString()} writes them. Both answers are as of a moment
 * ago: a lock may grow or shrink meanwhile, which callers allow for (a margin, or a read before acting).
 *
 * <p>Implementations are called from any thread (Curator's event thread above all) and must not block or do I/O.
 */
public interface QueueSizes {
    /** Knows nothing: every lock may be of any size, and none is known to be large. */
    QueueSizes UNKNOWN = new QueueSizes() {
        @Override
        public boolean mayHave(String name, int entries) {
            return true;
        }

        @Override
        public boolean knownToHave(String name, int entries) {
            return false;
        }
    };

    /** Whether the lock may have {@code entries} entries or more: false only when the gateway knows it has fewer. */
    boolean mayHave(String name, int entries);

    /** Whether the gateway knows the lock has {@code entries} entries or more: false when it does not know. */
    boolean knownToHave(String name, int entries);
}
