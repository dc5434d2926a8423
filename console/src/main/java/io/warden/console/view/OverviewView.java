package io.warden.console.view;

import io.warden.console.model.CellInfo;
import io.warden.console.model.Health;
import java.util.List;

/**
 * The overview page: the cell's numbers, the health of the gateway and ZooKeeper, and the gateway's cells, each of
 * which may have failed on its own.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param overview      null when the snapshot could not be read
 * @param snapshotError why, or null
 * @param health        null when health could not be read
 * @param healthError   why, or null
 * @param cells         the gateway's cells, default first; null when they could not be read or the backend lists none
 * @param cellsError    why they could not be read, or null (also when the backend lists no cells)
 */
public record OverviewView(Overview overview, String snapshotError, Health health, String healthError,
                           java.time.Instant now, List<CellInfo> cells, String cellsError) {
    public OverviewView {
        cells = cells == null ? null : List.copyOf(cells);
    }

    /** An overview that knows nothing of cells. */
    public OverviewView(Overview overview, String snapshotError, Health health, String healthError, java.time.Instant now) {
        this(overview, snapshotError, health, healthError, now, null, null);
    }

    /** The cells whose locks could not be read for the overview (missing from its numbers); empty when none. */
    public List<String> unreadCells() {
        return overview == null ? List.of() : overview.unreadCells();
    }

    /** The cells that do not serve now; empty when none, or when the cells are not known. */
    public List<CellInfo> notServing() {
        return cells == null ? List.of() : CellsView.notServing(cells);
    }

    /** The ZooKeeper server that says it leads, or null. */
    public String zkLeader() {
        if (health == null) {
            return null;
        }
        return health.servers().stream().filter(s -> "leader".equalsIgnoreCase(s.mode()) || "standalone".equalsIgnoreCase(s.mode()))
                .map(Health.ZkServer::address).findFirst().orElse(null);
    }

    /** The ZooKeeper servers that answered. */
    public long zkReachable() {
        return health == null ? 0 : health.servers().stream().filter(Health.ZkServer::reachable).count();
    }

    /** The largest zxid a server reported, or null. */
    public Long zkZxid() {
        return health == null ? null : health.servers().stream().map(Health.ZkServer::zxid)
                .filter(java.util.Objects::nonNull).max(Long::compare).orElse(null);
    }
}
