package io.warden.client;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * One grant of a {@link MultiLock}: every name held, each with its own fencing token ({@link #token(String)}). Pass
 * each resource the token of the name that guards it; what {@link Hold} says of tokens holds name by name, and so does
 * its warning: a lock is not a mutex (a paused holder may wake after its session expired and still write with its old
 * tokens; only the resource's conditional write can refuse that).
 *
 * <p>{@link #close()} and {@link #release()} are the same and idempotent: the first call ends the whole request (every
 * name, in one transaction, by its request id); later calls do nothing. After release, {@link #token(String)} throws
 * {@link IllegalStateException}.
 *
 * <p>Each name is tracked as a {@link Hold} of that name is, and the multi hold is what they say together:
 * {@link #isValid()} is false once released, once any name's grant is lost, and whenever the session is past its local
 * deadline (as {@link Hold#isValid()} says); {@link #lost()} completes as soon as any name's grant is lost (its session
 * is gone, or the grant ended elsewhere: an admin's force-release of one name, a release by token from another
 * process), for good. A lost name does not free the others: {@link #release()} still ends the whole request (every
 * name still held), then reports the loss.
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

    /** Whether this client can still be sure it holds every name (see {@link Hold#isValid()}, name by name). */
    boolean isValid();

    /**
     * Throws unless {@link #isValid()}.
     *
     * @throws IllegalStateException       when the hold was released by this client
     * @throws LockOwnershipLostException naming the first name that was lost, or that the session may have expired
     */
    void checkValid();

    /**
     * Completes, once and for good, when the grant of any name is lost (see {@link Hold#lost()}, name by name). It never
     * completes for a hold released while held. Dependent actions run on the client's event thread: keep them short.
     */
    CompletionStage<Void> lost();

    /**
     * Calls {@code listener} with this hold, once, when the service asks the holder of any of its names to let go (an
     * admin's revoke of one name): finish or abandon the work and {@link #release()} (the revoked name is
     * force-released after the revoke's grace). Runs as {@link Hold#onRevokeRequested} says; never for a hold released
     * or lost first.
     *
     * @return this hold
     */
    MultiHold onRevokeRequested(Consumer<? super MultiHold> listener);

    /**
     * Ends the whole request (every name it still holds); later calls do nothing. When no gateway can be reached in
     * time, the release goes on in the background and this method returns.
     *
     * @throws LockOwnershipLostException when a name was lost before the release (the others were released all the
     *                                    same): the caller's critical section may not have been exclusive
     */
    void release();

    @Override
    void close();
}
