package io.warden.service.cell;

import io.warden.service.api.WardenException;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The cell's token floor as this gateway knows it: the raises under {@code /token-floor} ({@link FloorHistory}), kept
 * current by watches, so that a token is computed without a read.
 *
 * <p><b>Layout.</b> A raise is a child {@code /token-floor/floor-{floor, 19 digits}} (PERSISTENT, empty) made in one
 * {@code multi} with a write of {@code /token-floor}'s data (the latest raise, for people); the child's czxid is where
 * the raise starts. Children are never deleted: they define the tokens of the nodes made after them.
 *
 * <p><b>Knowing every raise before it matters.</b> A persistent recursive watch on {@code /token-floor} reports each new
 * child with its zxid, and its name carries the floor: the gateway learns a raise from the notification itself, on
 * ZooKeeper's event thread, before any reply that reflects a later state (ZooKeeper delivers notifications and replies
 * of one connection in order). So a token computed from a czxid this gateway has just read always includes every raise
 * made before that node. A persistent watch does not replay what happened while the connection was down; a one-shot
 * data watch on {@code /token-floor} does (ZooKeeper re-registers it on reconnection and fires it at once when the node
 * changed meanwhile, before any reply on the new connection). When it fires with nothing this gateway knows, or when
 * the ZooKeeper session expired (a new session may be on another history), tokens are exact only up to the highest zxid
 * seen before ({@link #of} refuses above it, 503) until a fresh listing is in ({@link #reload}).
 *
 * <p>Concurrency: {@code history} and {@code exactThrough} are volatile, replaced whole; the listing bookkeeping
 * ({@code passes}, {@code sinceListing}, {@code pending}) is guarded by {@code this}. Watch callbacks run on ZooKeeper's
 * event thread and never block.
 */
public final class TokenFloor implements Tokens {
    private static final Logger log = LoggerFactory.getLogger(TokenFloor.class);
    private static final long ALL = Long.MAX_VALUE;

    private final Zk zk;
    private final String chroot;
    private final LongSupplier seen;
    private final Watcher watcher = this::notified;
    private volatile FloorHistory history = FloorHistory.NONE;
    /** Tokens of czxids up to this are exact; {@link #ALL} while the watches are set and nothing was missed. */
    private volatile long exactThrough = 0;
    private volatile Runnable onRaise = () -> { };
    private volatile Consumer<Watcher.Event.KeeperState> onConnection = s -> { };
    /** Guarded by this: listings started, raises notified since the oldest listing under way, callers waiting. */
    private long passes;
    private Map<Long, Long> sinceListing;
    private final List<CompletableFuture<Void>> pending = new ArrayList<>();

    /**
     * @param seen the highest zxid this gateway has seen (its high-water mark): after a gap, tokens of nodes up to it
     *             are still exact, since every raise before it was notified before it
     */
    public TokenFloor(Zk zk, String chroot, LongSupplier seen) {
        this.zk = zk;
        this.chroot = "/".equals(chroot) ? "" : chroot;
        this.seen = seen;
    }

    /**
     * Told (on ZooKeeper's event thread) of every change of the current floor — a raise notified, or found by a listing —
     * and once the floor is read again after a change of {@code /token-floor}'s data that names no raise it knows.
     */
    void onRaise(Runnable listener) {
        onRaise = listener;
    }

    /** Told (on ZooKeeper's event thread, in order with replies) of Disconnected and Expired. */
    void onConnection(Consumer<Watcher.Event.KeeperState> listener) {
        onConnection = listener;
    }

    @Override
    public long of(long czxid) {
        if (czxid > exactThrough) {
            throw WardenException.unavailable("this gateway is reading the cell's token floor again after a "
                    + "reconnection to ZooKeeper and cannot yet say the token of a node made at zxid " + czxid
                    + "; try again", null);
        }
        return history.token(czxid);
    }

    @Override
    public long bestEffort(long czxid) {
        return history.token(czxid);
    }

    /** The floor of the nodes made from now on. */
    public long current() {
        return history.current();
    }

    public FloorHistory history() {
        return history;
    }

    /** Whether every token is exact now (no listing outstanding after a gap). */
    public boolean exact() {
        return exactThrough == ALL;
    }

    /**
     * Sets the watches on the current ZooKeeper handle and reads every raise. Completes when a listing started at or
     * after this call is in; then tokens are exact again. Fails when ZooKeeper cannot be read, and when the ZooKeeper session
     * expires before the listing is in (the caller retries: nothing else will answer it).
     */
    public CompletableFuture<Void> reload() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        long pass;
        synchronized (this) {
            pass = ++passes;
            pending.add(done);
            if (sinceListing == null) {
                sinceListing = new TreeMap<>();
            }
        }
        ZooKeeper h;
        try {
            h = zk.client().getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            finish(pass, null, e);
            return done;
        }
        String path = chroot + CellPaths.TOKEN_FLOOR;
        CompletableFuture<Void> watched = Zk.addPersistentRecursiveWatch(h, path, watcher);
        // The data watch first, then the listing: a raise after the listing's read is notified (the persistent watch is
        // set by the time this reply comes, on the same connection), one before it is listed.
        watched.thenCompose(v -> armDataWatch(h)).thenCompose(v -> list()).whenComplete((listing, err) ->
                finish(pass, listing, err));
        return done;
    }

    private CompletableFuture<Void> armDataWatch(ZooKeeper h) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        try {
            h.getData(chroot + CellPaths.TOKEN_FLOOR, watcher, (rc, p, ctx, data, stat) -> {
                if (rc == KeeperException.Code.OK.intValue()) {
                    f.complete(null);
                } else {
                    f.completeExceptionally(KeeperException.create(KeeperException.Code.get(rc), p));
                }
            }, null);
        } catch (RuntimeException e) {
            f.completeExceptionally(e);
        }
        return f;
    }

    /** Every raise: the children's names (their floors) and their czxids. */
    private CompletableFuture<FloorHistory> list() {
        return zk.children(CellPaths.TOKEN_FLOOR).thenCompose(children -> {
            List<CompletableFuture<long[]>> raises = new ArrayList<>();
            for (String child : children) {
                long floor = CellPaths.floorOf(child);
                if (floor < 0) {
                    continue; // not a raise (a node made by hand)
                }
                raises.add(zk.exists(CellPaths.TOKEN_FLOOR + "/" + child)
                        .thenApply(stat -> stat == null ? null : new long[]{stat.getCzxid(), floor}));
            }
            return CompletableFuture.allOf(raises.toArray(CompletableFuture[]::new)).thenApply(v -> {
                FloorHistory h = FloorHistory.NONE;
                for (CompletableFuture<long[]> r : raises) {
                    long[] raise = r.join();
                    if (raise != null && raise[1] <= FloorHistory.MAX_FLOOR) {
                        h = h.with(raise[0], raise[1]);
                    }
                }
                return h;
            });
        });
    }

    private void finish(long pass, FloorHistory listing, Throwable err) {
        List<CompletableFuture<Void>> done;
        long before = history.current();
        synchronized (this) {
            if (pass != passes) {
                return; // a newer listing is under way: it answers everyone
            }
            done = new ArrayList<>(pending);
            pending.clear();
            if (err == null) {
                FloorHistory h = listing;
                if (sinceListing != null) {
                    for (Map.Entry<Long, Long> e : sinceListing.entrySet()) {
                        h = h.with(e.getKey(), e.getValue());
                    }
                }
                sinceListing = null;
                history = h;
                exactThrough = ALL;
            }
        }
        if (err == null) {
            log.debug("token floor read: {}", history);
            if (history.current() != before) {
                onRaise.run(); // a raise this gateway had missed (made while it was disconnected)
            }
            done.forEach(f -> f.complete(null));
        } else {
            done.forEach(f -> f.completeExceptionally(err));
        }
    }

    // ------------------------------------------------------------------ ZooKeeper's event thread

    private void notified(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None) {
            Watcher.Event.KeeperState state = event.getState();
            if (state == Watcher.Event.KeeperState.Expired) {
                gap(); // the next session may be on another history: nothing after this is known
                List<CompletableFuture<Void>> orphaned;
                synchronized (this) {
                    sinceListing = null; // raises of the old session; a listing under way was of it too
                    passes++;            // so it installs nothing
                    orphaned = new ArrayList<>(pending); // and its callers hear now: no later listing may come
                    pending.clear();
                }
                WardenException lost = WardenException.unavailable("the ZooKeeper session expired while this gateway "
                        + "read the cell's token floor; read it again", null);
                orphaned.forEach(f -> f.completeExceptionally(lost));
            }
            if (state == Watcher.Event.KeeperState.Disconnected || state == Watcher.Event.KeeperState.Expired) {
                onConnection.accept(state);
            }
            return;
        }
        String raw = event.getPath();
        if (raw == null || !raw.startsWith(chroot + CellPaths.TOKEN_FLOOR)) {
            return;
        }
        String path = raw.substring(chroot.length());
        if (event.getType() == Watcher.Event.EventType.NodeCreated && path.startsWith(CellPaths.TOKEN_FLOOR + "/")) {
            long floor = CellPaths.floorOf(path.substring(CellPaths.TOKEN_FLOOR.length() + 1));
            if (floor >= 0 && floor <= FloorHistory.MAX_FLOOR && event.getZxid() > 0) {
                learn(event.getZxid(), floor);
                return;
            }
        }
        if (path.equals(CellPaths.TOKEN_FLOOR) && event.getType() == Watcher.Event.EventType.NodeDataChanged) {
            // A raise writes this node after making its child, so a live notification comes after the child's and names
            // a raise already known. One that does not (no zxid: replayed after a reconnection) may hide raises.
            rearm();
            if (event.getZxid() <= 0 || !history.hasRaiseAt(event.getZxid())) {
                gap();
                // Told once the floor is read again, raise or not: `token-floor raise` touches the node when it finds
                // nothing to raise, so that a gateway refusing its cell checks it again. If the read fails, the guard's
                // next check reads it again.
                reload().thenRun(() -> onRaise.run()).exceptionally(e -> null);
            }
            return;
        }
        if (path.equals(CellPaths.TOKEN_FLOOR) && event.getType() == Watcher.Event.EventType.NodeDeleted) {
            log.error("{}{} was deleted: the token floor can only be raised; put it back as it was (docs/operations.md)",
                    chroot, CellPaths.TOKEN_FLOOR);
        }
    }

    private void learn(long zxid, long floor) {
        synchronized (this) {
            history = history.with(zxid, floor);
            if (sinceListing != null) {
                sinceListing.merge(zxid, floor, Math::max);
            }
        }
        log.info("the cell's token floor is {} for nodes made after zxid {} ({})", history.current(), zxid, history);
        onRaise.run();
    }

    /** Tokens stay exact up to what this gateway has seen; above it they wait for the next listing. */
    private void gap() {
        synchronized (this) {
            exactThrough = Math.min(exactThrough, seen.getAsLong());
        }
    }

    private void rearm() {
        try {
            armDataWatch(zk.client().getZookeeperClient().getZooKeeper()).exceptionally(e -> null);
        } catch (Exception e) {
            log.debug("could not set the token floor's data watch again: {}", e.toString());
        }
    }
}
