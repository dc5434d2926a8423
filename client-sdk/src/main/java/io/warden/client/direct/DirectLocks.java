package io.warden.client.direct;

import io.warden.client.FencedLock;
import io.warden.client.FencedReadWriteLock;
import io.warden.client.Hold;
import io.warden.client.LockMode;
import io.warden.client.WardenClientException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Warden locks taken straight in ZooKeeper, for applications that have a ZooKeeper connection of their own: the same
 * {@link FencedLock} and {@link Hold} API as {@link io.warden.client.WardenClient}, with no gateway in between.
 * <pre>{@code
 * CuratorFramework curator = CuratorFrameworkFactory.newClient("zk1:2181,zk2:2181", new ExponentialBackoffRetry(100, 5));
 * curator.start();
 * DirectLocks locks = DirectLocks.of(curator);                     // the cell's chroot, default /warden
 * try (Hold hold = locks.lock("payments/invoice-42").acquire(Duration.ofSeconds(5))) {
 *     store.write(record, hold.token());                          // its lock node's czxid plus the token floor
 * }
 * }</pre>
 *
 * <h2>Same locks as the gateway's</h2>
 * A lock {@code ns/path} is Curator's {@code InterProcessReadWriteLock} on {@code {chroot}} + {@link io.warden.client.LockNames#zkPath} — the
 * path, node names ({@code _c_{uuid}-__WRIT__{seq}}, {@code _c_{uuid}-__READ__{seq}}) and queue rules the gateway
 * uses (docs/design.md, ZooKeeper layout) — so direct holders and holders through any gateway of the cell exclude each
 * other, and the tokens of one name grow across both. Each acquire is a new Curator lock with its own
 * EPHEMERAL_SEQUENTIAL node (so, as over HTTP, acquires are not reentrant: a second acquire queues behind the first);
 * the token is that node's czxid, read right after the grant, plus the cell's token floor for it (0 unless an operator
 * raised it: {@link DirectFloor}, one more read per grant); release deletes the node as Curator does (a guaranteed
 * delete), from any thread.
 *
 * <h2>Losing a lock</h2>
 * A direct hold lives as long as the Curator client's ZooKeeper session, not a Warden session: no TTL, no
 * keepalives, no lock-delay. Curator's rule holds: after {@link ConnectionState#SUSPENDED} you cannot be sure you
 * hold the lock ({@link Hold#isValid()} is false until {@link ConnectionState#RECONNECTED}); after
 * {@link ConnectionState#LOST} you do not ({@link Hold#lost()} completes, for good). A hold is also lost when its
 * node is deleted by someone else (an operator, or a gateway's force release). Connection events reach this class
 * on Curator's event thread, a little after they happen, so {@link Hold#isValid()} does not wait for them: it is also
 * false once the <em>local deadline</em> of the node's ZooKeeper session has passed — the send time of the latest
 * request of that session that ZooKeeper answered, plus the negotiated session timeout, minus a margin (500 ppm of the
 * timeout and 100 ms). While a hold lives, a probe ({@code exists("/")}) every third of the session timeout keeps it
 * fresh. A holder paused past its session timeout (a GC pause, SIGSTOP, a frozen VM) is therefore not valid the
 * moment it resumes, before any event arrives. The token, checked by the resource, is what makes writes safe (see
 * {@link Hold} and {@link io.warden.client.fencing.FencedWrite}).
 *
 * <p>An acquire that spans a LOST is judged by its node's ephemeral owner: a node of the current ZooKeeper session is a
 * valid grant; a node of an earlier session is deleted and the acquire fails. {@link Hold#release()} deletes the node
 * even when the hold was lost.
 *
 * <h2>Differences from the HTTP client's locks</h2>
 * {@link FencedLock#acquire} throws no {@link io.warden.client.SessionLostException} (there is no Warden session);
 * ZooKeeper failures that Curator's retry policy gives up on are thrown as {@link WardenClientException} without a
 * code. A waiting {@link FencedLock#acquireAsync} call holds a thread of these locks until it ends (Curator's lock
 * blocks its thread); cancelling it interrupts that thread, and Curator deletes the queued node. Interrupting a
 * blocked {@link FencedLock#acquire} likewise deletes the node, with Curator's guaranteed delete: when the delete
 * cannot be confirmed at once, Curator finishes it in the background, and the node may go a moment after the call
 * returned.
 *
 * <p>Needs Curator ({@code curator-recipes}) on the classpath: an optional dependency of the SDK.
 *
 * <p>Thread-safety: safe for use by any number of threads. Concurrency: {@code holds} is a concurrent map of the
 * live holds by node path, written by acquiring and releasing threads and read by Curator's event thread;
 * {@code state} and {@code losses} are written only by Curator's connection-state thread; {@code closed} goes
 * false → true once; {@code deadline} is thread-safe (see {@link SessionDeadline}) and has one timer thread of its own,
 * stopped by {@link #close()}.
 */
public final class DirectLocks implements AutoCloseable {
    /** The chroot of a cell unless configured otherwise (docs/design.md, ZooKeeper layout). */
    public static final String DEFAULT_CHROOT = "/warden";

    private static final System.Logger log = System.getLogger(DirectLocks.class.getName());
    private static final byte[] LOCK_DATA = "warden-direct".getBytes(StandardCharsets.UTF_8);
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final CuratorFramework client;
    private final String chroot;
    private final ConnectionStateListener listener = (c, newState) -> stateChanged(newState);
    private final Map<String, DirectHold> holds = new ConcurrentHashMap<>();
    /** Runs {@link FencedLock#acquireAsync} waits: Curator's lock blocks its thread. Threads are made on demand. */
    private final ExecutorService waiters = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "warden-direct-acquire-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong losses = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The local bound on the ZooKeeper session's life, from the last answers of ZooKeeper. */
    private final SessionDeadline deadline;
    private volatile ConnectionState state;

    private DirectLocks(CuratorFramework client, String chroot) {
        this.client = client.usingNamespace(DirectNames.namespace(chroot));
        this.chroot = chroot;
        this.deadline = new SessionDeadline(client, () -> !holds.isEmpty(), System::nanoTime);
        this.state = client.getZookeeperClient().isConnected() ? ConnectionState.CONNECTED : ConnectionState.SUSPENDED;
        client.getConnectionStateListenable().addListener(listener);
    }

    /** Locks of the cell whose chroot is {@value #DEFAULT_CHROOT}, whatever the namespace of {@code client}. */
    public static DirectLocks of(CuratorFramework client) {
        return of(client, DEFAULT_CHROOT);
    }

    /**
     * Locks of the cell whose chroot is {@code chroot} (the gateways' {@code chroot} setting, e.g. {@code /warden}),
     * whatever the namespace of {@code client}: lock {@code ns/path} is at {@code {chroot}} +
     * {@link io.warden.client.LockNames#zkPath}{@code ("ns/path")}.
     *
     * @param client a started Curator client; it stays the caller's to close (after this)
     * @throws IllegalArgumentException when the client is not started or the chroot is not an absolute path
     */
    public static DirectLocks of(CuratorFramework client, String chroot) {
        Objects.requireNonNull(client, "client");
        if (client.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalArgumentException("the Curator client must be started, it is " + client.getState());
        }
        return new DirectLocks(client, chroot);
    }

    /** The cell's chroot these locks live under. */
    public String chroot() {
        return chroot;
    }

    /**
     * The EXCLUSIVE lock of {@code name} (the write lock of {@link #readWriteLock}).
     *
     * @throws IllegalArgumentException when the name is not {@code namespace/path} as the gateway accepts it
     */
    public FencedLock lock(String name) {
        return new DirectFencedLock(this, DirectNames.check(name), LockMode.EXCLUSIVE);
    }

    /**
     * The SHARED and EXCLUSIVE locks of {@code name}.
     *
     * @throws IllegalArgumentException when the name is not {@code namespace/path} as the gateway accepts it
     */
    public FencedReadWriteLock readWriteLock(String name) {
        String checked = DirectNames.check(name);
        return new DirectReadWriteLock(checked, new DirectFencedLock(this, checked, LockMode.SHARED),
                new DirectFencedLock(this, checked, LockMode.EXCLUSIVE));
    }

    /** Whether the Curator connection is up as far as these locks know (CONNECTED or RECONNECTED, not read-only). */
    public boolean connected() {
        ConnectionState s = state;
        return s == ConnectionState.CONNECTED || s == ConnectionState.RECONNECTED;
    }

    /**
     * Stops: releases every hold still held, cancels waiting {@link FencedLock#acquireAsync} calls, and stops
     * listening to the Curator client (which stays open). Later acquires throw {@link IllegalStateException}.
     * Safe to call twice.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        waiters.shutdownNow();
        for (DirectHold hold : new ArrayList<>(holds.values())) {
            try {
                hold.release();
            } catch (RuntimeException e) {
                log.log(System.Logger.Level.DEBUG, "closing: {0} was already lost: {1}", hold, e.getMessage());
            }
        }
        client.getConnectionStateListenable().removeListener(listener);
        deadline.close();
    }

    // --- for DirectFencedLock and DirectHold ---

    CuratorFramework client() {
        return client;
    }

    byte[] lockData() {
        return LOCK_DATA.clone();
    }

    ExecutorService waiters() {
        return waiters;
    }

    ConnectionState state() {
        return state;
    }

    /**
     * Whether ZooKeeper session {@code sessionId} cannot have expired yet: an answer in that session, sent less than
     * the session timeout (minus a margin) ago, says so. See {@link SessionDeadline}.
     */
    boolean sessionAlive(long sessionId) {
        return deadline.alive(sessionId);
    }

    /** How many times the ZooKeeper session was LOST so far (tests, diagnostics). */
    long losses() {
        return losses.get();
    }

    void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("these direct locks (chroot " + chroot + ") were closed");
        }
    }

    /**
     * Turns the node Curator just made ours into a hold: reads its czxid and the token floor (the token), then watches it
     * for deletion.
     *
     * <p>An acquire can span a LOST: Curator then makes a new node in the new ZooKeeper session and gets the lock with
     * it, or (when the old session's node had not gone yet) gets it with the old node. Which grant this is shows in the
     * node's ephemeral owner: the current session's node is a valid grant; an earlier session's node goes with that
     * session, so the grant is worthless: the node is deleted (at once, not when the server gets to the old session)
     * and the acquire fails.
     */
    Hold grant(String name, LockMode mode, String path) {
        Stat stat;
        ZooKeeper zk = deadline.zooKeeper();
        long sessionBefore = zk == null ? 0 : zk.getSessionId();
        int timeoutMs = zk == null ? 0 : zk.getSessionTimeout();
        long sent = deadline.now();
        try {
            stat = client.checkExists().forPath(path);
        } catch (Exception e) {
            WardenClientException failure = new WardenClientException("lock '" + name + "' was granted, but its node "
                    + path + " could not be read: " + e, e);
            deleteQuietly(path, failure);
            throw failure;
        }
        if (stat == null) {
            throw new WardenClientException("lock '" + name + "' was granted, but its node " + path
                    + " was gone right after: the ZooKeeper session was lost");
        }
        long token;
        try {
            token = DirectFloor.token(client, stat.getCzxid());
        } catch (Exception e) {
            WardenClientException failure = new WardenClientException("lock '" + name + "' was granted, but the cell's "
                    + "token floor could not be read: " + e, e);
            deleteQuietly(path, failure);
            throw failure;
        }
        if (stat.getEphemeralOwner() == sessionBefore && currentSession() == sessionBefore) {
            // answered in the session the node is in (no other session in between): the session lives for a timeout
            deadline.heard(sessionBefore, sent, timeoutMs);
        }
        DirectHold hold = new DirectHold(this, name, mode, path, token, stat.getEphemeralOwner());
        holds.put(path, hold);
        // Note on concurrency: the session is compared only now that the hold is in `holds`: a LOST from here on
        // reaches it through stateChanged, and one before shows as another session id.
        long session = currentSession();
        if (stat.getEphemeralOwner() != session) {
            holds.remove(path, hold);
            WardenClientException failure = new WardenClientException("lock '" + name + "' was granted with node "
                    + path + " of ZooKeeper session 0x" + Long.toHexString(stat.getEphemeralOwner())
                    + ", which was lost while the lock was being acquired (the session now is 0x" + Long.toHexString(session)
                    + "); the node was deleted, try again");
            deleteQuietly(path, failure);
            throw failure;
        }
        // The watch is set only now that the hold is in `holds`, so its event always finds the hold.
        try {
            Stat watched = client.checkExists().usingWatcher((CuratorWatcher) event -> nodeEvent(event, path)).forPath(path);
            if (watched == null) {
                hold.markLost("its lock node " + path + " was deleted right after the grant");
            } else if (watched.getVersion() > 0) {
                readRevoke(path, false); // asked to let go before the watch was set
            }
        } catch (Exception e) {
            log.log(System.Logger.Level.WARNING, "could not watch the node {0} of lock ''{1}'' (token {2}): {3}",
                    path, name, token, e.toString());
        }
        if (closed.get()) {
            hold.release(); // close() may have missed it; the caller gets an already released hold
        }
        return hold;
    }

    /** The id of the Curator client's ZooKeeper session now; 0 when there is none. */
    private long currentSession() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    void forget(DirectHold hold) {
        holds.remove(hold.path(), hold);
    }

    /** Deletes a node of ours (guaranteed: Curator finishes it in the background if need be), even on an interrupted thread. */
    void deleteQuietly(String path, Throwable original) {
        boolean interrupted = Thread.interrupted(); // an interrupt must not stop the delete from being sent
        try {
            client.delete().guaranteed().forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            // nothing to delete
        } catch (Exception e) {
            original.addSuppressed(e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** What Curator's {@code Revoker} writes on a lock node to ask its holder to let go. */
    static final byte[] REVOKE = "__REVOKE__".getBytes(StandardCharsets.UTF_8);

    /**
     * Reads the node's data in the background, with a new watch when {@code rewatch} (the one that fired is spent),
     * and tells the hold when it asks for revocation. A node gone meanwhile is a deletion.
     */
    private void readRevoke(String path, boolean rewatch) {
        try {
            var read = client.getData();
            (rewatch ? read.usingWatcher((CuratorWatcher) e -> nodeEvent(e, path)) : read).inBackground((c, e) -> {
                if (e.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                    nodeDeleted(path);
                } else if (e.getResultCode() == KeeperException.Code.OK.intValue()
                        && java.util.Arrays.equals(e.getData(), REVOKE)) {
                    DirectHold hold = holds.get(path);
                    if (hold != null) {
                        hold.revokeRequested();
                    }
                }
            }).forPath(path);
        } catch (Exception e) {
            log.log(System.Logger.Level.WARNING, "could not read the lock node {0} after its data changed: {1}", path,
                    e.toString());
        }
    }

    private void nodeEvent(WatchedEvent event, String path) {
        // Connection events (type None) reach every watch; they are handled by stateChanged. A data change is a request
        // to let go (Curator's Revoker: the node's data set to __REVOKE__); it spends the watch, so it is set again.
        if (event.getType() == Watcher.Event.EventType.NodeDataChanged) {
            if (holds.containsKey(path)) {
                readRevoke(path, true);
            }
            return;
        }
        if (event.getType() != Watcher.Event.EventType.NodeDeleted) {
            return;
        }
        nodeDeleted(path);
    }

    private void nodeDeleted(String path) {
        DirectHold hold = holds.remove(path);
        if (hold != null) {
            log.log(System.Logger.Level.WARNING, "{0}: its lock node was deleted by someone else", hold);
            hold.markLost("its lock node was deleted by someone else");
        }
    }

    private void stateChanged(ConnectionState newState) {
        state = newState;
        if (newState == ConnectionState.LOST) {
            losses.incrementAndGet();
            for (DirectHold hold : new ArrayList<>(holds.values())) {
                holds.remove(hold.path(), hold);
                log.log(System.Logger.Level.WARNING, "{0}: the ZooKeeper session was lost", hold);
                hold.markLost("its ZooKeeper session was lost");
            }
        } else if (newState == ConnectionState.RECONNECTED || newState == ConnectionState.CONNECTED) {
            deadline.probeSoon(); // the local deadline may have run out while the connection was down
        } else if (newState == ConnectionState.SUSPENDED) {
            log.log(System.Logger.Level.WARNING, "ZooKeeper connection SUSPENDED: {0} direct hold(s) cannot be sure they are held",
                    holds.size());
        }
    }
}
