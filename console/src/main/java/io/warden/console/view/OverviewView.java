package io.warden.console.view;

import io.warden.console.model.Health;

/**
 * The overview page: the cell's numbers and the health of the gateway and ZooKeeper, each of which may have failed
 * on its own.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param overview      null when the snapshot could not be read
 * @param snapshotError why, or null
 * @param health        null when health could not be read
 * @param healthError   why, or null
 */
public record OverviewView(Overview overview, String snapshotError, Health health, String healthError,
                           java.time.Instant now) {
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
