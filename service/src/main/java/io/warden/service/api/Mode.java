package io.warden.service.api;

/** How a request wants to hold a lock. */
public enum Mode {
    /** Alone: no other holder of the name. A writer. */
    EXCLUSIVE,
    /** Together with other SHARED holders, never with an EXCLUSIVE one. A reader. */
    SHARED,
    /**
     * One of at most {@code permits} holders of a counted semaphore, granted in queue order. Every request on a name
     * must agree on SEMAPHORE and its permits while the name has entries; to a plain Curator client on the same path a
     * semaphore entry is a writer.
     */
    SEMAPHORE
}
