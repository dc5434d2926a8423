package io.warden.it.jepsen;

/**
 * The resource of the fenced-counter workload: one value behind a fence, as a database row with a fence column
 * ({@code UPDATE ... SET v = :v, fence = :token WHERE fence <= :token}, contract §2.2). Reads are fenced too: a read
 * with a token raises the fence to it, so a holder whose grant was superseded can neither read nor write once its
 * successor has touched the register. It knows tokens only, not who sends them: two holders given one token are two
 * writers it cannot tell apart, which is what fencing tokens are for.
 *
 * <p>The workload increments through it under the lock: read at the start of a hold, write the value plus one at
 * its end. An increment is acknowledged when both were accepted. The checker's invariant: the final value equals the
 * acknowledged increments (a lost update means two holders read the same value under tokens the register could not
 * order). It also counts what it refused (stale reads and writes: the fence at work, not a violation).
 *
 * <p>Concurrency: every method is synchronized on the instance.
 */
final class FencedRegister {
    private long value;
    private long fence;
    private long acknowledged;
    private long refusedReads;
    private long refusedWrites;

    /** The value, or -1 when {@code token} is below the fence (the read is refused). */
    synchronized long read(long token) {
        if (token < fence) {
            refusedReads++;
            return -1;
        }
        fence = token;
        return value;
    }

    /** Writes {@code newValue} unless {@code token} is below the fence. */
    synchronized boolean write(long token, long newValue) {
        if (token < fence) {
            refusedWrites++;
            return false;
        }
        fence = token;
        value = newValue;
        return true;
    }

    /**
     * The end of an increment: writes {@code newValue} and, if the write was accepted, acknowledges it, as one step (the
     * checker reads both). True when accepted.
     */
    synchronized boolean writeAndAcknowledge(long token, long newValue) {
        if (!write(token, newValue)) {
            return false;
        }
        acknowledged++;
        return true;
    }

    synchronized Summary summary() {
        return new Summary(value, acknowledged, refusedReads, refusedWrites);
    }

    /** What the checker looks at: {@code value == acknowledged}. */
    record Summary(long value, long acknowledged, long refusedReads, long refusedWrites) {
        boolean ok() {
            return value == acknowledged;
        }
    }
}
