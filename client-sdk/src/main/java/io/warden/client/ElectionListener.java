package io.warden.client;

/**
 * Told when an {@link Election}'s candidate becomes leader and when that leadership ends. For every
 * {@link Leadership}, {@link #elected} is called once and then {@link #defeated} once, whatever ends it: the hold was
 * lost, its session's local deadline passed, the candidate resigned, or the election or its client was closed.
 *
 * <p>Called on the election's own thread, one call at a time, in order. A listener should return quickly: while it
 * runs, later calls wait (but {@link Election#isLeader()} and {@link Leadership#isValid()} do not: they turn false
 * at once, whatever the listener does). An exception thrown by a listener is logged and the election goes on.
 *
 * <p>Thread-safety: implementations are called from one thread at a time.
 */
public interface ElectionListener {
    /** This candidate leads from now on, until {@code leadership} is no longer {@linkplain Leadership#isValid() valid}. */
    default void elected(Leadership leadership) {
    }

    /**
     * {@code leadership} has ended: {@link Leadership#isValid()} is false for good. When the hold was lost or its
     * session's deadline passed, this is called before the hold is given back: another candidate may already lead.
     */
    default void defeated(Leadership leadership) {
    }
}
