package io.warden.client;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One term of leadership of an {@link Election}: from the grant of its lock to this candidate until the hold is lost,
 * stops being valid, or is given up. A later term, of this candidate or another, always has a larger
 * {@link #token()}: pass it to the resource with every write the leader makes, and let the resource refuse lower ones.
 * <pre>{@code
 * election.addListener(new ElectionListener() {
 *     public void elected(Leadership term) {
 *         scheduler.submit(() -> {
 *             while (term.isValid()) {
 *                 jobs.claimNext(term.token());   // UPDATE jobs SET owner_fence = :token WHERE ... AND owner_fence < :token
 *             }
 *         });
 *     }
 * });
 * election.campaign();
 * }</pre>
 *
 * <p><b>Leadership is a lease.</b> It lasts as long as the hold of the election's lock is {@linkplain Hold#isValid()
 * valid}: over HTTP, until the session's local deadline (the send time of the last acknowledged keepalive plus the TTL,
 * minus a margin) or until the session or the grant is known to be gone. A leader paused past that (a GC pause, a
 * stopped VM) is no longer leader when it resumes, and another candidate may lead by then: {@link #isValid()} is false
 * the instant it resumes, but a write already on its way is not stopped by anything but the token. Once false,
 * {@link #isValid()} stays false: a term never comes back, even when a later keepalive shows that the session lived
 * (the election then gives the lock back and campaigns again, for a new term with a new token).
 *
 * <p>Thread-safety: safe from any thread. Concurrency: {@code ended} goes false → true once; the hold is released once,
 * by whoever gives it back first ({@code givingBack} false → true), and {@code givenBack} completes when that is done.
 */
public final class Leadership {
    private final String name;
    private final Hold hold;
    private final long token;
    private final Runnable onEnd;
    private final TermRules rules;
    private final AtomicBoolean ended = new AtomicBoolean();
    private final AtomicBoolean givingBack = new AtomicBoolean();
    /** Completes once the hold was given back (or the attempt ended), by whoever gave it back. */
    private final java.util.concurrent.CompletableFuture<Void> givenBack = new java.util.concurrent.CompletableFuture<>();
    /** Why the term ended; null while it lasts (written once, before {@code ended} is set). */
    private volatile String why;

    Leadership(String name, Hold hold, long token, TermRules rules, Runnable onEnd) {
        this.name = name;
        this.hold = hold;
        this.token = token;
        this.rules = rules;
        this.onEnd = onEnd;
    }

    /** The election's name (its lock's name, {@code namespace/path}). */
    public String name() {
        return name;
    }

    /** The fencing token of this term: larger than every earlier term's, of any candidate. Still readable after the end. */
    public long token() {
        return token;
    }

    /**
     * Whether this term still lasts: the election's hold is valid and was not given up. False for good from the first
     * moment it was not. {@code true} is no promise for the next instant (see "leadership is a lease").
     */
    public boolean isValid() {
        if (ended.get()) {
            return false;
        }
        if (!rules.lasts(hold)) {
            end("its hold " + (hold.lost().toCompletableFuture().isDone() ? "was lost" : "stopped being valid (no keepalive "
                    + "acknowledged before the session's local deadline)"));
            return false;
        }
        return true;
    }

    /**
     * Throws unless {@link #isValid()}.
     *
     * @throws LockOwnershipLostException when the term has ended
     */
    public void checkValid() {
        if (!isValid()) {
            throw new LockOwnershipLostException(name, token, "the leadership ended: " + why);
        }
    }

    /** Ends the term (once): {@link #isValid()} is false from now on. True the first time. */
    boolean end(String reason) {
        if (ended.get()) {
            return false;
        }
        synchronized (this) {
            if (ended.get()) {
                return false;
            }
            why = reason;
            ended.set(true);
        }
        onEnd.run();
        return true;
    }

    String why() {
        return why;
    }

    /**
     * Gives the hold back (once; the release names the token); a second caller waits until the first is done, so
     * whoever returns from here knows the release was answered (or goes on in the background). A hold already lost
     * needs no release.
     */
    void giveBack() {
        if (!givingBack.compareAndSet(false, true)) {
            givenBack.join();
            return;
        }
        try {
            hold.release();
        } catch (LockOwnershipLostException alreadyGone) {
            // nothing to give back
        } catch (RuntimeException e) {
            System.getLogger(Leadership.class.getName()).log(System.Logger.Level.WARNING,
                    "election ''{0}'': giving back the hold of token {1} failed; it ends with the session: {2}",
                    name, token, e.toString());
        } finally {
            givenBack.complete(null);
        }
    }

    Hold hold() {
        return hold;
    }

    @Override
    public String toString() {
        return "Leadership[" + name + " token " + token + (ended.get() ? " ended: " + why : "") + "]";
    }
}
