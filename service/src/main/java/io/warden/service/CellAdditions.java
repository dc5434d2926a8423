package io.warden.service;

import io.warden.service.api.CellAdded;
import io.warden.service.api.CellView;
import io.warden.service.api.WardenException;
import io.warden.service.cell.CellDirectory;
import io.warden.service.config.CellAddress;
import io.warden.service.zk.Zk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Cells added while the gateways run: {@code PUT /v1/cells/{cell}} through this gateway ({@link #add}), and the cells
 * other gateways added, as the default cell's {@link CellDirectory} tells ({@link #follow}).
 *
 * <p>An add reaches the new ensemble first (the cell is started here: connected, its layout made, registered), and only
 * then writes the cell to the directory, so an ensemble nobody can reach is never written; the cell joins this
 * gateway's {@link CellSet} at once. Every other gateway reads the entry, joins the cell to its set and starts it in
 * the background (tried again every few seconds while it cannot reach it: its namespaces answer 503 meanwhile, as any
 * cell's do while out of reach). A new cell serves no namespace until one is moved to it.
 *
 * <p>A cell's ensemble and chroot never change: asking for a cell of the same name at another address is a 409, and so
 * is a cell on the same ZooKeeper path as another (the same servers under the same chroot: they would share their lock
 * queues). At most {@link #MAX_CELLS} cells in all.
 *
 * <p>Concurrency: every add and every directory entry is handled on one thread of its own ({@link #worker}), one at a
 * time, so a cell is checked, started and joined to the set without another add of it in between; an add blocks that
 * thread for up to the start's wait (no HTTP thread: the call is answered when its future completes). The worker's
 * queue holds at most {@link #MAX_PENDING_ADDS} adds (more are a 429) and one task per directory entry ever read (the
 * directory tells each entry once, and reads at most {@link CellDirectory#MAX_ENTRIES}).
 */
final class CellAdditions {
    private static final Logger log = LoggerFactory.getLogger(CellAdditions.class);
    /** The most cells a gateway serves, the default one included (the cells setting allows as many besides it). */
    static final int MAX_CELLS = 1 + CellDirectory.MAX_ENTRIES;
    /** How long an add waits for the default cell to take the directory entry. */
    private static final Duration DIRECTORY_WRITE_WAIT = Duration.ofSeconds(30);

    /** What the gateway does for a new cell. */
    interface Starter {
        /** Builds the cell's parts (nothing connects yet). */
        CellRuntime build(CellAddress address);

        /** Starts the cell now, blocking; {@link CellRuntime.Unreachable} when its ensemble cannot be reached. */
        void begin(CellRuntime cell);

        /** Starts the cell on a thread of its own, trying again until it is started or the gateway stops. */
        void beginInBackground(CellRuntime cell);
    }

    private final CellSet cells;
    private final CellDirectory directory;
    private final Starter starter;
    private final Function<CellRuntime, CellView> view;
    /** The gateways' chroot: a cell's when it names none. */
    private final String chroot;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "warden-cell-additions");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean stopped;
    /** Adds asked for and not answered yet: at most {@link #MAX_PENDING_ADDS} (429 past it). */
    private final AtomicInteger pendingAdds = new AtomicInteger();
    /** How many adds may wait for the worker at once (each may hold it for the start's wait). */
    static final int MAX_PENDING_ADDS = 4;

    CellAdditions(CellSet cells, CellDirectory directory, Starter starter, Function<CellRuntime, CellView> view,
                  String chroot) {
        this.cells = cells;
        this.directory = directory;
        this.starter = starter;
        this.view = view;
        this.chroot = chroot;
    }

    /** Adds the cell (see the class note); {@code by} is the principal asking, for the log. */
    CompletableFuture<CellAdded> add(CellAddress address, String by) {
        if (pendingAdds.incrementAndGet() > MAX_PENDING_ADDS) {
            pendingAdds.decrementAndGet();
            return CompletableFuture.failedFuture(WardenException.exhausted("this gateway has " + MAX_PENDING_ADDS
                    + " cell additions under way already; ask again once they are answered"));
        }
        CompletableFuture<CellAdded> done = new CompletableFuture<>();
        try {
            worker.execute(() -> {
                try {
                    done.complete(addNow(address, by));
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                } finally {
                    pendingAdds.decrementAndGet();
                }
            });
        } catch (RejectedExecutionException e) {
            pendingAdds.decrementAndGet();
            done.completeExceptionally(WardenException.unavailable("this gateway is stopping", e));
        }
        return done;
    }

    private CellAdded addNow(CellAddress address, String by) throws InterruptedException {
        CellRuntime existing = cells.get(address.name());
        if (existing != null) {
            if (same(existing, address)) {
                return new CellAdded(view.apply(existing), false);
            }
            throw WardenException.conflict("cell " + address.name() + " is at " + where(existing) + "; a cell's ensemble "
                    + "and chroot cannot change (its namespaces' queues and tokens are there): give the new ensemble "
                    + "another name, and move the namespaces to it");
        }
        refuseSharedPath(address);
        if (cells.size() >= MAX_CELLS) {
            throw WardenException.conflict("this deployment has " + cells.size() + " cells, the most a gateway serves ("
                    + MAX_CELLS + ")");
        }
        log.info("adding cell {} at {}{} (asked by {}): reaching it first", address.name(), address.zkConnect(),
                address.chrootOr(chroot), by);
        CellRuntime cell = starter.build(address);
        try {
            starter.begin(cell);
        } catch (CellRuntime.Unreachable e) {
            Quietly.run(cell::close);
            throw WardenException.invalid("zk", e.getMessage() + "; nothing was added: check the servers, the chroot and "
                    + "that this gateway can reach them");
        } catch (RuntimeException e) {
            Quietly.run(cell::close);
            throw WardenException.unavailable("could not start cell " + address.name() + ": " + e.getMessage()
                    + "; nothing was added", e);
        }
        CellAddress written;
        try {
            written = directory.add(address).get(DIRECTORY_WRITE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Quietly.run(cell::close);
            throw Zk.translate(e.getCause());
        } catch (TimeoutException e) {
            Quietly.run(cell::close);
            throw WardenException.unavailable("the default cell did not take the entry of cell " + address.name()
                    + " within " + DIRECTORY_WRITE_WAIT.toSeconds() + " s; nothing was added (repeat the call)", e);
        }
        if (written == null || !written.samePath(address.zkConnect(), address.chroot(), chroot)) {
            Quietly.run(cell::close);
            throw WardenException.conflict("cell " + address.name() + " was added meanwhile, through another gateway, at "
                    + (written == null ? "an address this gateway cannot read" : written.zkConnect()
                    + written.chrootOr(chroot)));
        }
        if (stopped || !cells.add(cell)) {
            Quietly.run(cell::close);
            throw WardenException.unavailable("this gateway is stopping", null);
        }
        log.warn("added cell {} at {}{} (asked by {}); it serves no namespace until one is moved to it", address.name(),
                address.zkConnect(), address.chrootOr(chroot), by);
        return new CellAdded(view.apply(cell), true);
    }

    /**
     * Follows the cell directory from now on: every entry this gateway does not serve yet joins its cells and is
     * started in the background. Completes once the directory was first read.
     */
    CompletableFuture<Void> follow() {
        return directory.follow(address -> {
            try {
                worker.execute(() -> adopt(address));
            } catch (RejectedExecutionException stopping) {
                // the gateway stops
            }
        }).thenApply(entries -> null);
    }

    /** A directory entry: served from now on, unless a cell of its name or path is served already. */
    private void adopt(CellAddress address) {
        if (stopped) {
            return;
        }
        CellRuntime existing = cells.get(address.name());
        if (existing != null) {
            if (!same(existing, address)) {
                log.warn("the cell directory puts cell {} at {}{}, but this gateway serves it at {} (its cells setting): "
                        + "the setting wins here; make them agree", address.name(), address.zkConnect(),
                        address.chrootOr(chroot), where(existing));
            }
            return;
        }
        try {
            refuseSharedPath(address);
        } catch (WardenException e) {
            log.warn("cell {} of the cell directory is not served: {}", address.name(), e.getMessage());
            return;
        }
        if (cells.size() >= MAX_CELLS) {
            log.warn("cell {} of the cell directory is not served: this gateway serves {} cells, the most it may",
                    address.name(), cells.size());
            return;
        }
        CellRuntime cell = starter.build(address);
        if (!cells.add(cell)) {
            Quietly.run(cell::close);
            return;
        }
        log.info("cell {} at {}{} is in the cell directory: serving it from now on", address.name(), address.zkConnect(),
                address.chrootOr(chroot));
        starter.beginInBackground(cell);
    }

    private void refuseSharedPath(CellAddress address) {
        for (CellRuntime other : cells.values()) {
            if (addressOf(other).samePath(address.zkConnect(), address.chroot(), chroot)) {
                throw WardenException.conflict("cell " + address.name() + " would be on the same ZooKeeper path as cell "
                        + other.name() + " (" + where(other) + "); two cells on one path would share their lock queues: "
                        + "give another chroot or another ensemble");
            }
        }
    }

    private boolean same(CellRuntime cell, CellAddress address) {
        return addressOf(cell).samePath(address.zkConnect(), address.chroot(), chroot);
    }

    private static CellAddress addressOf(CellRuntime cell) {
        return new CellAddress(cell.name(), cell.config().zkConnect(), cell.config().chroot());
    }

    private static String where(CellRuntime cell) {
        return cell.config().zkConnect() + cell.config().chroot();
    }

    void close() {
        stopped = true;
        directory.close();
        worker.shutdownNow();
    }
}
