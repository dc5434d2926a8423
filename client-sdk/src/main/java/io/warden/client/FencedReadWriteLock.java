package io.warden.client;

/**
 * A pair of {@link FencedLock}s on one name: any number of {@link #readLock()} holders together (SHARED), or one
 * {@link #writeLock()} holder (EXCLUSIVE). The queue is strictly FIFO; consecutive readers at its head are granted
 * together, and a reader never overtakes a queued writer, so writers do not starve. The locks of Curator's
 * {@code InterProcessReadWriteLock} on the same ZooKeeper path exclude, and are excluded by, these.
 *
 * <p>Thread-safety: immutable; its locks are safe for use by any number of threads.
 */
public interface FencedReadWriteLock {
    /** The lock name, {@code namespace/path}, of both locks. */
    String name();

    /** SHARED holds of the name. */
    FencedLock readLock();

    /** EXCLUSIVE holds of the name. */
    FencedLock writeLock();
}
