package io.warden.service.cell;

import io.warden.service.api.NotServedException;
import io.warden.service.api.WardenException;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.CellRoutes;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

/**
 * One cell's {@link CellPaths#ROUTING} node as this gateway knows it ({@link CellRoutes}: which namespaces the cell
 * serves), kept current by a one-shot data watch that every notification re-arms, and the {@link Fence} that makes
 * every write of a queue entry in the cell check the node's version: an entry is made only while the node is as this
 * gateway read it, so never in a cell that no longer serves the entry's namespace.
 *
 * <p>A cell without the node (no gateway serving several cells ever routed it) is checked by nothing; its absence is
 * watched too, so its creation is heard. ZooKeeper re-registers one-shot watches after a reconnection and fires them
 * then when the node changed, so a change missed while disconnected is read before any later reply.
 *
 * <p>Concurrency: {@link #current} is volatile and replaced whole; listeners are a copy-on-write list. Watch callbacks
 * run on ZooKeeper's event thread and never block.
 */
public final class CellRouting implements Fence {
    private static final Logger log = LoggerFactory.getLogger(CellRouting.class);
    /** How many times {@link #update} reads the node again after it changed under the write. */
    private static final int UPDATE_ATTEMPTS = 10;

    /** The node as read: whether it exists, its routes and version (-1 when absent). */
    public record Snapshot(boolean exists, CellRoutes routes, int version) {
        static final Snapshot ABSENT = new Snapshot(false, CellRoutes.EMPTY, -1);
    }

    private final Zk zk;
    private final io.warden.service.time.Clock clock;
    private final String cell;
    private final boolean isDefault;
    private final Watcher watcher = event -> {
        if (event.getType() != Watcher.Event.EventType.None) {
            reload();
        }
    };
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    /** Null until the first read. */
    private volatile Snapshot current;

    public CellRouting(Zk zk, io.warden.service.time.Clock clock, String cell, boolean isDefault) {
        this.zk = zk;
        this.clock = clock;
        this.cell = cell;
        this.isDefault = isDefault;
    }

    /** Reads the node (or its absence) and leaves a watch; completes once read. */
    public CompletableFuture<Snapshot> load() {
        return zk.dataWatched(CellPaths.ROUTING, watcher).thenApply(ds -> {
            CellRoutes routes = Json.readOrNull(ds.data(), CellRoutes.class);
            return new Snapshot(true, routes == null ? CellRoutes.EMPTY : routes, ds.stat().getVersion());
        }).handle((s, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(s);
            }
            if (Zk.code(err) == Code.NONODE) {
                // Absent: watch for its creation (an exists watch is left on a missing node).
                return zk.existsWatched(CellPaths.ROUTING, watcher).thenCompose(stat -> stat == null
                        ? CompletableFuture.completedFuture(Snapshot.ABSENT) : load());
            }
            return CompletableFuture.<Snapshot>failedFuture(err);
        }).thenCompose(f -> f).thenApply(this::took);
    }

    private void reload() {
        load().exceptionally(e -> {
            log.warn("could not read the routes of cell {} ({}); trying again in 1 s", cell, e.toString());
            clock.schedule(java.time.Duration.ofSeconds(1), this::reload);
            return null;
        });
    }

    /** Keeps {@code s} if it is newer than what is known, and tells the listeners of a change. */
    private Snapshot took(Snapshot s) {
        Snapshot before;
        synchronized (this) {
            before = current;
            if (before != null && before.exists() && s.exists() && s.version() < before.version()) {
                return before; // an older read that came back late
            }
            current = s;
        }
        if (!s.equals(before)) {
            for (Runnable l : listeners) {
                l.run();
            }
        }
        return s;
    }

    /** Told (on ZooKeeper's event thread) whenever the routes of this cell change as this gateway knows them. */
    public void onChange(Runnable listener) {
        listeners.add(listener);
    }

    /** The routes as last read; null before the first read. */
    public Snapshot current() {
        return current;
    }

    /** Whether this cell serves {@code namespace} as this gateway knows it now (a cell never routed serves nothing but default's). */
    public boolean serves(String namespace) {
        Snapshot s = current;
        return s != null && s.routes().serves(namespace, isDefault);
    }

    /** Whether {@code namespace} is frozen in this cell (being moved) as this gateway knows it now. */
    public boolean frozen(String namespace) {
        Snapshot s = current;
        return s != null && s.routes().frozen(namespace);
    }

    @Override
    public CuratorOp checkFor(String namespace) {
        Snapshot s = current;
        if (s == null) {
            throw WardenException.unavailable("the routes of cell " + cell + " are not read yet; repeat the call", null);
        }
        if (!s.exists()) {
            return null;
        }
        if (!s.routes().serves(namespace, isDefault)) {
            throw new NotServedException(cell, namespace, s.routes().frozen(namespace));
        }
        try {
            return zk.ops().check().withVersion(s.version()).forPath(CellPaths.ROUTING);
        } catch (Exception e) {
            throw WardenException.unavailable("could not build the routes check of cell " + cell, e);
        }
    }

    /** Makes the node with {@code initial} when it is absent; completes with the node as it is then. */
    public CompletableFuture<Snapshot> seed(CellRoutes initial) {
        return zk.create(CellPaths.ROUTING, Json.write(initial), CreateMode.PERSISTENT, false).handle((p, err) -> {
            if (err != null && Zk.code(err) != Code.NODEEXISTS) {
                throw Zk.translate(err);
            }
            return null;
        }).thenCompose(v -> load());
    }

    /**
     * Changes the node by {@code change} (a read, then a write at the version read; made when absent), again after a
     * concurrent change; completes with the node as written. Every gateway's next entry in the cell checks the new
     * version, so from the write on, no gateway writes what the old routes allowed and the new do not.
     */
    public CompletableFuture<Snapshot> update(UnaryOperator<CellRoutes> change) {
        return update(change, 0);
    }

    private CompletableFuture<Snapshot> update(UnaryOperator<CellRoutes> change, int attempt) {
        return zk.sync(CellPaths.ROUTING).thenCompose(v -> zk.data(CellPaths.ROUTING)).handle((ds, err) -> {
            if (err != null && Zk.code(err) != Code.NONODE) {
                throw Zk.translate(err);
            }
            CellRoutes before = err != null ? CellRoutes.EMPTY : Json.readOrNull(ds.data(), CellRoutes.class);
            CellRoutes after = change.apply(before == null ? CellRoutes.EMPTY : before);
            if (after.size() > CellRoutes.MAX_NAMESPACES) {
                throw WardenException.exhausted("cell " + cell + " would name " + after.size() + " namespaces in its "
                        + "routes, more than " + CellRoutes.MAX_NAMESPACES);
            }
            CompletableFuture<Integer> written = err != null
                    ? zk.create(CellPaths.ROUTING, Json.write(after), CreateMode.PERSISTENT, false).thenApply(p -> 0)
                    : zk.setData(CellPaths.ROUTING, Json.write(after), ds.stat().getVersion()).thenApply(st -> st.getVersion());
            return written.thenApply(version -> took(new Snapshot(true, after, version)));
        }).thenCompose(f -> f).handle((s, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(s);
            }
            Code code = Zk.code(err);
            if ((code == Code.BADVERSION || code == Code.NODEEXISTS) && attempt < UPDATE_ATTEMPTS) {
                return update(change, attempt + 1);
            }
            return CompletableFuture.<Snapshot>failedFuture(Zk.translate(err));
        }).thenCompose(f -> f);
    }

    public String cell() {
        return cell;
    }

    public boolean isDefault() {
        return isDefault;
    }
}
