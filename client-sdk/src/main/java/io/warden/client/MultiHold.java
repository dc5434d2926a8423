package io.warden.client;

import java.util.List;
import java.util.Map;

/**
 * One grant of a {@link MultiLock}: every name held, each with its own fencing token ({@link #token(String)}). Pass
 * each resource the token of the name that guards it; what {@link Hold} says of tokens holds name by name, and so does
 * its warning: a lock is not a mutex (a paused holder may wake after its session expired and still write with its old
 * tokens; only the resource's conditional write can refuse that).
 *
 * <p>{@link #close()} and {@link #release()} are the same and idempotent: the first call ends the whole request (every
 * name, in one transaction, by its request id); later calls do nothing. After release, {@link #token(String)} throws
 * {@link IllegalStateException}. {@link #isValid()} is false once released or once the session is no longer sure to be
 * alive (Curator's rule: after SUSPENDED you cannot be sure you hold the locks; after LOST you do not).
 *
 * <p>Thread-safety: safe for use by any number of threads; release happens exactly once.
 */
public interface MultiHold extends AutoCloseable {
    /** The names held, in the order the lock gave them. */
    List<String> names();

    /** The token of {@code name}'s grant; IllegalArgumentException for a name not held here. */
    long token(String name);

    /** Every name's token, in order. */
    Map<String, Long> tokens();

    boolean isValid();

    void release();

    @Override
    void close();
}
