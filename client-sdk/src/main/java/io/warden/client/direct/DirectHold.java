package io.warden.client.direct;

import io.warden.client.Hold;
import io.warden.client.LockMode;
import io.warden.client.LockOwnershipLostException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.KeeperException;

/**
 * A grant made straight in ZooKeeper: our EPHEMERAL_SEQUENTIAL node under the lock's path, whose czxid plus the cell's
 * token floor is the token.
 * See {@link Hold} for what it promises, and {@link DirectLocks} for when it is lost (Curator's rule: after SUSPENDED
 * you cannot be sure you hold the lock; after LOST you do not).
 *
 * <p>Validity also needs the local deadline of the node's ZooKeeper session ({@link SessionDeadline}): a holder
 * paused past its session timeout is not valid the moment it resumes, before Curator's events say why.
 *
 * <p>Concurrency: {@code released} goes false → true once, by compare-and-set, so exactly one caller deletes the
 * node; {@code lostWhy} goes null → reason once, by compare-and-set, on Curator's event thread or a releasing
 * thread, and completes {@code lostFuture} on that thread.
 */
final class DirectHold implements Hold {
    private static final System.Logger log = System.getLogger(DirectHold.class.getName());

    private final DirectLocks locks;
    private final String name;
    private final LockMode mode;
    private final String path;
    private final long token;
    /** The ZooKeeper session the node was made in (its ephemeral owner). */
    private final long sessionId;
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicReference<String> lostWhy = new AtomicReference<>();
    private final CompletableFuture<Void> lostFuture = new CompletableFuture<>();

    DirectHold(DirectLocks locks, String name, LockMode mode, String path, long token, long sessionId) {
        this.locks = locks;
        this.sessionId = sessionId;
        this.name = name;
        this.mode = mode;
        this.path = path;
        this.token = token;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LockMode mode() {
        return mode;
    }

    /** The lock node's path below the chroot, e.g. {@code /locks/payments/3fa/invoice-42/_c_…-__WRIT__0000000003}. */
    String path() {
        return path;
    }

    @Override
    public long token() {
        if (released.get()) {
            throw new IllegalStateException("the hold of lock '" + name + "' (token " + token + ") was already released");
        }
        return token;
    }

    /**
     * Not released, not lost, the Curator connection neither SUSPENDED nor LOST (nor read-only), and the local deadline
     * of the node's ZooKeeper session not passed: ZooKeeper answered a request of that session sent less than the
     * session timeout (minus a margin) ago ({@link SessionDeadline}).
     */
    @Override
    public boolean isValid() {
        return !released.get() && lostWhy.get() == null && locks.connected() && locks.sessionAlive(sessionId);
    }

    @Override
    public void checkValid() {
        if (released.get()) {
            throw new IllegalStateException("the hold of lock '" + name + "' (token " + token + ") was already released");
        }
        String why = lostWhy.get();
        if (why != null) {
            throw new LockOwnershipLostException(name, token, why);
        }
        if (!locks.connected()) {
            throw new LockOwnershipLostException(name, token, "the ZooKeeper connection is " + locks.state()
                    + ": until it is RECONNECTED the session may expire and the lock pass to another holder");
        }
        if (!locks.sessionAlive(sessionId)) {
            throw new LockOwnershipLostException(name, token, "no answer from ZooKeeper in session 0x"
                    + Long.toHexString(sessionId) + " within its timeout: the session may have expired and the lock "
                    + "passed to another holder");
        }
    }

    /** Completes on Curator's event thread when the ZooKeeper session is LOST or the node is deleted by someone else. */
    @Override
    public CompletionStage<Void> lost() {
        return lostFuture.minimalCompletionStage();
    }

    /**
     * Deletes the lock node (a guaranteed delete: if ZooKeeper cannot be reached, Curator keeps trying in the
     * background, and the node goes with the session anyway). Any thread may release. A hold that was lost is deleted
     * all the same: "lost" may be only what this client concluded (a LOST that Curator declared while the ZooKeeper
     * session lived on), and a node left behind would block the lock for that session's life.
     */
    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        locks.forget(this);
        String why = lostWhy.get();
        if (why != null) {
            LockOwnershipLostException lost = new LockOwnershipLostException(name, token, why + " before the release");
            locks.deleteQuietly(path, lost);
            throw lost;
        }
        try {
            locks.client().delete().guaranteed().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            markLost("its lock node was already gone at release");
            throw new LockOwnershipLostException(name, token, "its lock node was already gone at release");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.log(System.Logger.Level.WARNING, "release of lock ''{0}'' (token {1}) interrupted; Curator deletes {2} in the background",
                    name, token, path);
        } catch (Exception e) {
            log.log(System.Logger.Level.WARNING, "release of lock ''{0}'' (token {1}) not confirmed ({2}); Curator deletes {3} in the background",
                    name, token, e.toString(), path);
        }
    }

    @Override
    public void close() {
        release();
    }

    /** Completed when someone asks this holder to let go (Curator's {@code Revoker} wrote {@code __REVOKE__}). */
    private final CompletableFuture<Void> revokeFuture = new CompletableFuture<>();

    /**
     * Calls {@code listener} once when the lock node's data is set to {@code __REVOKE__} (Curator's {@code Revoker},
     * or a gateway's revoke of this hold): on Curator's event thread, or at once when that happened before.
     */
    @Override
    public Hold onRevokeRequested(java.util.function.Consumer<? super Hold> listener) {
        java.util.Objects.requireNonNull(listener, "listener");
        revokeFuture.thenRun(() -> {
            if (!released.get() && lostWhy.get() == null) {
                listener.accept(this);
            }
        });
        return this;
    }

    void revokeRequested() {
        if (!released.get() && lostWhy.get() == null && !revokeFuture.isDone()) {
            log.log(System.Logger.Level.INFO, "{0}: asked to let go (revoke)", this);
            revokeFuture.complete(null);
        }
    }

    void markLost(String why) {
        if (lostWhy.compareAndSet(null, why)) {
            lostFuture.complete(null);
        }
    }

    @Override
    public String toString() {
        return "Hold[" + name + " " + mode + " token " + token + " direct"
                + (released.get() ? " released" : lostWhy.get() != null ? " lost" : "") + "]";
    }
}
