package io.warden.client.fencing;

import io.warden.client.Hold;
import java.util.Objects;

/**
 * The fencing pattern in one place. A lock alone cannot keep a paused holder from writing after its lock passed on
 * (see {@link Hold}: a lock is not a mutex); the resource can, by checking the token with the write itself. Keep the
 * last accepted token beside the data, and make every write conditional on it, in one statement:
 * <pre>{@code
 * // invoices(id, amount, fence): fence is the token of the last write, 0 before the first
 * try (Hold hold = lock.acquire(Duration.ofSeconds(5))) {
 *     FencedWrite.apply(hold, token -> {
 *         try (PreparedStatement st = db.prepareStatement(
 *                 "UPDATE invoices SET amount = ?, fence = ? WHERE id = ? AND fence < ?")) {
 *             st.setBigDecimal(1, amount);
 *             st.setLong(2, token);
 *             st.setLong(3, invoiceId);
 *             st.setLong(4, token);
 *             return st.executeUpdate();          // 0 rows: a newer token has written; nothing changed
 *         }
 *     });
 * }
 * }</pre>
 * Use {@code fence <= ?} instead when one grant writes the same row more than once. The check and the write must be
 * one atomic step of the resource (one conditional {@code UPDATE}, a compare-and-set, a conditional put); reading
 * the fence first and writing after is the same race as checking {@link Hold#isValid()} first. A row that does not
 * exist yet needs its own fenced insert (e.g. {@code MERGE}/{@code INSERT ... ON CONFLICT ... WHERE fence < ?}) or
 * must be created with fence 0 beforehand.
 *
 * <p>Thread-safety: stateless.
 */
public final class FencedWrite {
    private FencedWrite() {
    }

    /**
     * One conditional write of the resource: given the token, writes only if the token is newer than the stored one.
     * Called once, on the thread that called {@link FencedWrite#apply}; it needs no thread-safety of its own.
     */
    @FunctionalInterface
    public interface Write<E extends Exception> {
        /**
         * @return how many records the write changed: 0 means the resource refused the token
         */
        long apply(long token) throws E;
    }

    /**
     * Writes under a hold: checks that the hold is still valid (which narrows the window, but proves nothing), runs
     * {@code write} with its token, and refuses a write that changed nothing.
     *
     * @return what {@code write} returned (at least 1)
     * @throws IllegalStateException       when the hold was released
     * @throws io.warden.client.LockOwnershipLostException when the hold is lost or its session suspended (nothing
     *                                     was written)
     * @throws StaleTokenException         when the resource refused the token (nothing was written)
     * @throws E                           what {@code write} throws
     */
    public static <E extends Exception> long apply(Hold hold, Write<E> write) throws E {
        Objects.requireNonNull(hold, "hold");
        hold.checkValid();
        return apply(hold.name(), hold.token(), write);
    }

    /**
     * Writes with a token kept from earlier (a queued job, a retried request): runs {@code write} and refuses a
     * write that changed nothing. The resource's check is the only one here.
     *
     * @throws StaleTokenException when the resource refused the token (nothing was written)
     * @throws E                   what {@code write} throws
     */
    public static <E extends Exception> long apply(String lockName, long token, Write<E> write) throws E {
        Objects.requireNonNull(write, "write");
        if (token <= 0) {
            throw new IllegalArgumentException("a token is positive, got " + token + " for lock '" + lockName + "'");
        }
        long changed = write.apply(token);
        if (changed <= 0) {
            throw new StaleTokenException(lockName, token);
        }
        return changed;
    }
}
