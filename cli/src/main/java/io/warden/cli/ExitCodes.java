package io.warden.cli;

/**
 * The exit codes of {@code warden}, as listed in {@code --help}. {@code warden lock} exits with its command's code
 * once the command ran; the codes below are its own only when it did not get that far (or lost the lock).
 */
final class ExitCodes {
    static final int OK = 0;
    /** An unexpected failure or answer. */
    static final int ERROR = 1;
    /** A bad option or argument, or one the gateway rejected (400). */
    static final int USAGE = 2;
    /** Not acquired: the lock is held by someone else, or the wait ran out. */
    static final int NOT_ACQUIRED = 3;
    /** The lock was lost (or could no longer be confirmed) while the command ran; the command was killed. */
    static final int LOCK_LOST = 4;
    /** No gateway could be reached, or the cell is unavailable (503, no ZooKeeper quorum). */
    static final int UNREACHABLE = 5;
    /** Not found: no such session or lease, or the lease did not hold that lock. */
    static final int NOT_FOUND = 6;
    /** Not allowed: no or unknown credentials (401), or the principal may not do this (403). */
    static final int DENIED = 7;
    /** {@code warden lock}: the command could not be started (as a shell reports it). */
    static final int CANNOT_START = 127;


    private ExitCodes() {
    }
}
