package io.warden.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.regex.Pattern;

/**
 * A session's {@link HoldWatch}es, one per cell its holds are in: a gateway that serves several ZooKeeper ensembles
 * (cells) names each grant's cell, and a cell's revisions are its own, so each cell's events come on a stream of their
 * own. A one-cell gateway names none: one watch, as before.
 *
 * <p>Concurrency: the map is guarded by {@code this}; each watch keeps its own rules. At most one watch per cell of the
 * gateways (a handful), created when a hold of that cell first registers, closed with the session.
 */
final class HoldWatches implements AutoCloseable {
    private static final System.Logger log = System.getLogger(HoldWatches.class.getName());
    /** A cell's name as gateways give it; anything else is watched as the default cell (and logged). */
    private static final Pattern CELL = Pattern.compile("[a-z][a-z0-9-]{0,31}");

    private final HttpGateway gateway;
    private final String sessionId;
    private final ScheduledExecutorService scheduler;
    private final Duration requestTimeout;
    /** By cell; the key null is the default cell (or a one-cell gateway's). */
    private final Map<String, HoldWatch> byCell = new HashMap<>();
    private boolean closed;

    HoldWatches(HttpGateway gateway, String sessionId, ScheduledExecutorService scheduler, Duration requestTimeout) {
        this.gateway = gateway;
        this.sessionId = sessionId;
        this.scheduler = scheduler;
        this.requestTimeout = requestTimeout;
    }

    void add(HttpHold hold) {
        HoldWatch w = watchOf(hold.cell());
        if (w != null) {
            w.add(hold);
        }
    }

    void remove(HttpHold hold) {
        HoldWatch w;
        synchronized (this) {
            w = byCell.get(key(hold.cell()));
        }
        if (w != null) {
            w.remove(hold);
        }
    }

    private synchronized HoldWatch watchOf(String cell) {
        if (closed) {
            return null;
        }
        return byCell.computeIfAbsent(key(cell), k -> new HoldWatch(gateway, sessionId, k, scheduler, requestTimeout));
    }

    /** The default cell is watched without naming it, as a one-cell gateway expects. */
    private static String key(String cell) {
        if (cell == null || cell.equals("default")) {
            return null;
        }
        if (!CELL.matcher(cell).matches()) {
            log.log(System.Logger.Level.WARNING, "a gateway named the cell ''{0}'', which is no cell name: its holds are "
                    + "watched in the default cell", cell);
            return null;
        }
        return cell;
    }

    /** Whether any watch stream is running (tests, diagnostics). */
    synchronized boolean watching() {
        return byCell.values().stream().anyMatch(HoldWatch::watching);
    }

    @Override
    public void close() {
        List<HoldWatch> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(byCell.values());
        }
        all.forEach(HoldWatch::close);
    }
}
