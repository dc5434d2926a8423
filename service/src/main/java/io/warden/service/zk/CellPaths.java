package io.warden.service.zk;

import io.warden.service.api.LockName;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The ZooKeeper layout of a cell (contract §4), relative to the cell's chroot:
 * <pre>
 * /locks/{namespace}/{path...}          CONTAINER per lock name; children are the queue (see QueueEntry)
 * /sessions/{session_id}                 the durable session record (SessionRecord JSON: client id, TTL, lock-delay,
 *                                        and its tracker: gateway id and incarnation)
 * /sessions/{session_id}/{request_uuid}  one child per queued or granted request of the session (RequestRecord JSON);
 *                                        created in the same multi as its queue node, so its czxid is the token
 * /gateways/{gateway_id}                 EPHEMERAL: live gateways
 * /leader                                Curator LeaderLatch of the gateways (adoption of orphaned sessions)
 * /lockdelay/{session_id}                holds of an expired session kept for its lock-delay (LockDelayRecord JSON)
 * /expired/{session_id}                  PERSISTENT, empty: created first in a session's expiry multi and deleted right
 *                                        after it, so that watches can tell an expiry's deletions (same zxid) from a
 *                                        release, cancel or close (see docs/design.md, "Watches")
 * /audit/entry-{seq}                     PERSISTENT_SEQUENTIAL: the console's admin actions (AuditLog JSON), newest 1000
 * </pre>
 */
public final class CellPaths {
    public static final String LOCKS = "/locks";
    public static final String SESSIONS = "/sessions";
    public static final String GATEWAYS = "/gateways";
    public static final String LEADER = "/leader";
    public static final String LOCK_DELAY = "/lockdelay";
    public static final String EXPIRED = "/expired";
    /** The console's audit log: one PERSISTENT_SEQUENTIAL child per admin action, the newest 1000 kept. */
    public static final String AUDIT = "/audit";

    private CellPaths() {
    }

    public static String lock(LockName name) {
        return LOCKS + "/" + name;
    }

    public static String session(String sessionId) {
        return SESSIONS + "/" + sessionId;
    }

    public static String sessionRequest(String sessionId, String requestUuid) {
        return SESSIONS + "/" + sessionId + "/" + requestUuid;
    }

    public static String gateway(String gatewayId) {
        return GATEWAYS + "/" + gatewayId;
    }

    public static String lockDelay(String sessionId) {
        return LOCK_DELAY + "/" + sessionId;
    }

    public static String expiredMarker(String sessionId) {
        return EXPIRED + "/" + sessionId;
    }

    /**
     * The protection id of a request's queue node, derived from (session, request id) so that a retry — on any
     * gateway, also after a lost reply — finds the node the first call made instead of making another.
     */
    public static String requestUuid(String sessionId, String requestId) {
        return UUID.nameUUIDFromBytes((sessionId + "\n" + requestId).getBytes(StandardCharsets.UTF_8)).toString();
    }
}
