package io.warden.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A grant made through the HTTP API. See {@link Hold} for what it promises. It is lost when its session is lost, when a
 * release found the grant gone, or when the session's watch of its own holds ({@link HoldWatch}) saw the grant end
 * elsewhere (a force-release, a release by token from another process).
 *
 * <p>Concurrency: {@code released} goes false → true once, by compare-and-set, so exactly one caller releases;
 * {@code lostWhy} is volatile, set (null → reason) by the session's loss, by a release that found the grant gone, or
 * by the hold watch's thread; {@code lostFuture} completes once, on the client's event thread.
 */
final class HttpHold implements Hold {
    private static final System.Logger log = System.getLogger(HttpHold.class.getName());

    private final String name;
    private final LockMode mode;
    private final long token;
    /** The revision the GRANTED answer reflected: the grant was in place at it. */
    private final long grantRevision;
    /** The cell the grant came from (a gateway that serves several cells), or null: which hold watch follows it. */
    private final String cell;
    private final LockCalls calls;
    private final AtomicBoolean released = new AtomicBoolean();
    private final CompletableFuture<Void> lostFuture = new CompletableFuture<>();
    /** Completed (on the event thread) when the holder is asked to let go. */
    private final CompletableFuture<Void> revokeFuture = new CompletableFuture<>();
    /** Null while not lost; then why, for good. */
    private volatile String lostWhy;

    HttpHold(String name, LockMode mode, long token, long grantRevision, LockCalls calls) {
        this(name, mode, token, grantRevision, calls, null);
    }

    /** {@code cell}: the cell the grant's answer named (a gateway that serves several), or null. */
    HttpHold(String name, LockMode mode, long token, long grantRevision, LockCalls calls, String cell) {
        this.name = name;
        this.mode = mode;
        this.token = token;
        this.grantRevision = grantRevision;
        this.calls = calls;
        this.cell = cell;
    }

    /** The cell the lock is in, as the grant's answer named it; null from a one-cell gateway. */
    String cell() {
        return cell;
    }

    /** The token, also after release (for the hold watch). */
    long tokenValue() {
        return token;
    }

    /** The revision at which the grant was known to be in place (its GRANTED answer's). */
    long grantRevision() {
        return grantRevision;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LockMode mode() {
        return mode;
    }

    @Override
    public long token() {
        if (released.get()) {
            throw new IllegalStateException("the hold of lock '" + name + "' (token " + token + ") was already released");
        }
        return token;
    }

    @Override
    public boolean isValid() {
        return !released.get() && lostWhy == null && calls.session().connected();
    }

    @Override
    public void checkValid() {
        if (released.get()) {
            throw new IllegalStateException("the hold of lock '" + name + "' (token " + token + ") was already released");
        }
        String why = lostWhy;
        if (why != null) {
            throw new LockOwnershipLostException(name, token, why);
        }
        if (calls.session().state() == SessionState.LOST) {
            throw new LockOwnershipLostException(name, token, "its session was lost");
        }
        if (!calls.session().connected()) {
            throw new LockOwnershipLostException(name, token, "its session is " + calls.session().state()
                    + ": no keepalive was acknowledged before the local deadline, so the lock may have passed to another holder");
        }
    }

    @Override
    public CompletionStage<Void> lost() {
        return lostFuture.minimalCompletionStage();
    }

    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        Session session = calls.session();
        session.untrack(this);
        String why = lostWhy;
        if (why != null) {
            throw new LockOwnershipLostException(name, token, why + ", before the release");
        }
        if (session.state() == SessionState.LOST) {
            throw new LockOwnershipLostException(name, token, "its session was lost before the release");
        }
        if (session.state() == SessionState.CLOSED) {
            return; // closing the session released it
        }
        HttpGateway.Reply<Wire.Released> reply;
        try {
            reply = calls.release(name, token).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            calls.releaseInBackground(name, token);
            return;
        } catch (ExecutionException e) {
            Throwable cause = Failures.unwrap(e);
            if (Failures.sessionGone(cause)) {
                session.markLost(cause.getMessage());
                throw new LockOwnershipLostException(name, token, "its session was lost before the release");
            }
            if (Failures.retryable(cause)) {
                log.log(System.Logger.Level.WARNING, "release of lock ''{0}'' (token {1}) not confirmed ({2}); retrying in the background",
                        name, token, cause.toString());
                calls.releaseInBackground(name, token);
                return;
            }
            throw Failures.rethrow(cause);
        }
        if (!reply.value().released() && reply.attempts() == 1) {
            // With one attempt the answer is unambiguous: the grant was gone before this release. (After a retry,
            // released:false may only mean that an earlier attempt, whose reply was lost, released it.)
            markLost("the service no longer knew the grant at release");
            throw new LockOwnershipLostException(name, token, "the service no longer knew the grant at release");
        }
    }

    @Override
    public void close() {
        release();
    }

    /** The session is gone, and with it this grant. */
    void sessionLost() {
        markLost("its session was lost");
    }

    /**
     * The session's watch saw this grant end, and not by this client's release: an admin's force-release, a release by
     * token from elsewhere, an expiry. Ignored once this client released it (the event is then its own release's).
     */
    void endedElsewhere(String why) {
        if (released.get()) {
            return;
        }
        if (markLost("its grant ended elsewhere: " + why)) {
            log.log(System.Logger.Level.WARNING, "{0}: its grant ended elsewhere ({1})", this, why);
            calls.session().untrack(this);
        }
    }

    @Override
    public Hold onRevokeRequested(java.util.function.Consumer<? super Hold> listener) {
        java.util.Objects.requireNonNull(listener, "listener");
        revokeFuture.thenRun(() -> {
            if (!released.get() && lostWhy == null) {
                listener.accept(this);
            }
        });
        return this;
    }

    /** The session's watch saw a REVOKE_REQUESTED for this grant. */
    void revokeRequested() {
        if (released.get() || lostWhy != null || revokeFuture.isDone()) {
            return;
        }
        log.log(System.Logger.Level.INFO, "{0}: asked to let go (revoke)", this);
        calls.session().runEvent(() -> revokeFuture.complete(null));
    }

    /** Marks the hold lost (once) and completes {@link #lost()} on the event thread; true the first time. */
    private boolean markLost(String why) {
        synchronized (this) {
            if (lostWhy != null) {
                return false;
            }
            lostWhy = why;
        }
        calls.session().runEvent(() -> lostFuture.complete(null));
        return true;
    }

    /**
     * The release of the whole request this grant belongs to (a {@link HttpMultiHold}'s) is under way: from now on an
     * end of the grant is this client's own, no longer watched. Returns why it was lost before, or null.
     */
    String releasedWithRequest() {
        released.set(true);
        calls.session().untrack(this);
        return lostWhy;
    }

    /** Why the hold was lost, or null while it is not. */
    String lostWhy() {
        return lostWhy;
    }

    /** Closing the client deleted the session, which released this grant. */
    void releasedWithSession() {
        released.set(true);
    }

    @Override
    public String toString() {
        return "Hold[" + name + " " + mode + " token " + token + (released.get() ? " released" : lostWhy != null ? " lost" : "") + "]";
    }
}
