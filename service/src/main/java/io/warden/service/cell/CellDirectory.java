package io.warden.service.cell;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warden.service.config.CellAddress;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The cells added at run time ({@code PUT /v1/cells/{cell}}), as the default cell's {@link CellPaths#CELLS} holds them:
 * one child per cell, named by the cell, its data the cell's ensemble and chroot ({@link Entry}). Every gateway reads
 * it and keeps a children watch on it, so a cell added through one gateway is served by all of them. An entry is
 * written once and never changed: a cell's ensemble cannot be changed under the namespaces it serves.
 *
 * <p>Cells of the {@code cells} setting are not written here; a gateway serves the union of its setting and this
 * directory, its setting winning for a name in both (a warning says so when they differ).
 *
 * <p>Bounded: at most {@link #MAX_ENTRIES} children are read (the setting allows as many cells); an entry past that is
 * ignored, with a warning. Concurrency: {@link #known} is a concurrent map, written on ZooKeeper's event thread as
 * entries are read; the listener is told each entry once, on that thread, and must not block.
 */
public final class CellDirectory {
    private static final Logger log = LoggerFactory.getLogger(CellDirectory.class);
    /** The most entries read: as many as the cells setting allows. */
    public static final int MAX_ENTRIES = io.warden.service.config.CellAddress.MAX_CELLS;

    /** The data of an entry: the cell's ZooKeeper connect string, and its chroot (absent: the gateways' chroot). */
    public record Entry(String zk, @JsonInclude(JsonInclude.Include.NON_NULL) String chroot) {
    }

    private final Zk zk;
    private final io.warden.service.time.Clock clock;
    private final Map<String, CellAddress> known = new ConcurrentHashMap<>();
    private volatile Consumer<CellAddress> listener = a -> { };
    private volatile boolean closed;
    private final Watcher watcher = event -> {
        if (event.getType() == Watcher.Event.EventType.NodeChildrenChanged) {
            reload();
        }
    };

    public CellDirectory(Zk zk, io.warden.service.time.Clock clock) {
        this.zk = zk;
        this.clock = clock;
    }

    /**
     * Reads the directory, leaves the watch, and tells {@code onEntry} every entry, now and whenever one is added.
     * Completes once the first read is done (with the entries then).
     */
    public CompletableFuture<Map<String, CellAddress>> follow(Consumer<CellAddress> onEntry) {
        this.listener = onEntry;
        return load();
    }

    /** The entries read so far, by cell name. */
    public Map<String, CellAddress> entries() {
        return Map.copyOf(new TreeMap<>(known));
    }

    public void close() {
        closed = true;
    }

    private CompletableFuture<Map<String, CellAddress>> load() {
        if (closed) {
            return CompletableFuture.completedFuture(entries());
        }
        return zk.childrenWatched(CellPaths.CELLS, watcher).thenCompose(cs -> {
            List<String> names = new ArrayList<>(new java.util.TreeSet<>(cs.children()));
            if (names.size() > MAX_ENTRIES) {
                log.warn("the cell directory {} has {} entries; only the first {} by name are served: {}", CellPaths.CELLS,
                        names.size(), MAX_ENTRIES, names.subList(MAX_ENTRIES, names.size()));
                names = names.subList(0, MAX_ENTRIES);
            }
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (String name : names) {
                if (!known.containsKey(name)) {
                    reads.add(read(name));
                }
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> entries());
        }).handle((entries, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(entries);
            }
            if (Zk.code(err) == Code.NONODE) {
                // Made by a gateway of this version at its start; an older one did not: watch for it.
                return zk.existsWatched(CellPaths.CELLS, event -> reload())
                        .thenApply(stat -> entries());
            }
            return CompletableFuture.<Map<String, CellAddress>>failedFuture(err);
        }).thenCompose(f -> f);
    }

    private void reload() {
        load().exceptionally(e -> {
            if (!closed) {
                log.warn("could not read the cell directory ({}); trying again in 5 s", e.toString());
                clock.schedule(java.time.Duration.ofSeconds(5), this::reload);
            }
            return null;
        });
    }

    private CompletableFuture<Void> read(String name) {
        return zk.data(CellPaths.cellEntry(name)).handle((ds, err) -> {
            if (err != null) {
                if (Zk.code(err) != Code.NONODE) {
                    log.warn("could not read cell {} of the cell directory: {}; read again at its next change", name,
                            err.toString());
                }
                return null;
            }
            Entry e = Json.readOrNull(ds.data(), Entry.class);
            CellAddress address = e == null ? null : CellAddress.checked(name, e.zk(), e.chroot()).orElse(null);
            if (address == null) {
                log.warn("cell {} of the cell directory is not a cell (data {}): ignored", name,
                        new String(ds.data(), java.nio.charset.StandardCharsets.UTF_8));
                return null;
            }
            if (known.putIfAbsent(name, address) == null && !closed) {
                listener.accept(address);
            }
            return null;
        });
    }

    /**
     * Writes the entry of {@code cell} unless there is one: completes with the entry as it is then (the one written, or
     * the one another gateway wrote first, which may differ).
     */
    public CompletableFuture<CellAddress> add(CellAddress cell) {
        byte[] data = Json.write(new Entry(cell.zkConnect(), cell.chroot()));
        return zk.create(CellPaths.cellEntry(cell.name()), data, CreateMode.PERSISTENT, false).handle((p, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(cell);
            }
            if (Zk.code(err) == Code.NODEEXISTS) {
                return zk.data(CellPaths.cellEntry(cell.name())).thenApply(ds -> {
                    Entry e = Json.readOrNull(ds.data(), Entry.class);
                    return e == null ? null : CellAddress.checked(cell.name(), e.zk(), e.chroot()).orElse(null);
                });
            }
            return CompletableFuture.<CellAddress>failedFuture(Zk.translate(err));
        }).thenCompose(f -> f);
    }
}
