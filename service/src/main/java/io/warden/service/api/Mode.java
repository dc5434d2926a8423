package io.warden.service.api;

/** How a request wants to hold a lock. */
public enum Mode {
    /** Alone: no other holder of the name. A writer. */
    EXCLUSIVE,
    /** Together with other SHARED holders, never with an EXCLUSIVE one. A reader. */
    SHARED
}
