package io.warden.service.zk;

import io.warden.service.api.LockName;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

/**
 * The ZooKeeper layout of a cell (docs/design.md), relative to the cell's chroot:
 * <pre>
 * /locks/{namespace}/{shard}/{leaf}      CONTAINER per lock name; its children are its queue (see QueueEntry) and
 *                                        nothing else. {leaf} is the name's path with '/' written '~' (never in a
 *                                        name), {shard} 3 hex digits of the name's SHA-256 ({@link #lock}); the
 *                                        namespace and shard nodes are CONTAINERs too
 * /sessions/{sh}/{session_id}            the durable session record (SessionRecord JSON: client id, TTL, lock-delay,
 *                                        and its tracker: gateway id and incarnation); {sh} is the id's first two hex
 *                                        digits, one of 256 PERSISTENT shards made at start ({@link #shards})
 * /sessions/{sh}/{session_id}/{uuid}     one child per queued or granted request of the session (RequestRecord JSON);
 *                                        created in the same multi as its queue node, so its czxid is the token
 * /sessions/{sh}/{session_id}/~{uuid}_{seq}  PERSISTENT_SEQUENTIAL, empty: the end marker of an ended request (its record is
 *                                        then a tombstone); see the lock engine's Tombstones
 * /sessions/{sh}/{session_id}/{uuid}/~client-{base64url}  never exists: created and deleted again by the acquire's multi,
 *                                        so that the transaction's notifications carry the session's client id to the
 *                                        watch mirror without a read ({@link #clientIdNote})
 * /gateways/{gateway_id}                 EPHEMERAL: live gateways
 * /leader                                Curator LeaderLatch of the gateways (adoption of orphaned sessions)
 * /lockdelay/{sh}/{session_id}           holds of an expired session kept for its lock-delay (LockDelayRecord JSON)
 * /expired/{session_id}                  PERSISTENT, empty: created first in a session's expiry multi and deleted right
 *                                        after it, so that watches can tell an expiry's deletions (same zxid) from a
 *                                        release, cancel or close (see docs/design.md, "Watches")
 * /audit/entry-{seq}                     PERSISTENT_SEQUENTIAL: the console's admin actions (AuditLog JSON), newest 1000
 * /revocations/r-{token}-{hash}          PERSISTENT: a pending revoke of the hold with that token (RevocationRecord
 *                                        JSON), made in the same multi that writes the request into the hold's queue
 *                                        node, deleted once the hold is gone ({@link #revocation}); at most
 *                                        max-pending-revocations of them
 * /cell                                  PERSISTENT: the cell's identity {cell_id}, a random id the first gateway makes;
 *                                        gateways keep their high-water mark per cell id
 * /probe                                 PERSISTENT, empty: written by gateways to learn the cell's newest zxid
 * /token-floor                           PERSISTENT: {floor, above, at_ms} of the latest raise of the token floor
 * /token-floor/floor-{floor}             PERSISTENT, empty: one per raise ({floor}: 19 decimal digits); its czxid is
 *                                        where it starts: a node made after it has token czxid + floor
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
    /** Pending revokes: one PERSISTENT child per hold asked to let go ({@link #revocation}). */
    public static final String REVOCATIONS = "/revocations";
    /** The cell's identity: {@code {cell_id}}, made once by the first gateway. */
    public static final String CELL = "/cell";
    /** Written (empty) by gateways to learn the cell's newest zxid from the write's stat. */
    public static final String PROBE = "/probe";
    /**
     * Which namespaces the cell serves, on a gateway that serves several cells ({@link CellRoutes}); absent in a cell
     * never served by such a gateway. Every write of a queue entry in such a cell checks its version in the same
     * transaction.
     */
    public static final String ROUTING = "/routing";
    /** The token floor: one child per raise ({@link #floorNode}). */
    public static final String TOKEN_FLOOR = "/token-floor";
    /**
     * The cells added at run time, read in the default cell only: one child per cell, named by it, with its ensemble and
     * chroot ({@code {"zk": ..., "chroot": ...}}); empty in every other cell.
     */
    public static final String CELLS = "/cells";
    private static final String FLOOR_PREFIX = "floor-";

    private CellPaths() {
    }

    /** Stands for '/' between a lock name's path segments in its node's name; not allowed in a segment. */
    public static final char SEGMENT_SEPARATOR = '~';
    /** Lock nodes of a namespace are spread over this many shards, so no listing of one is large. */
    public static final int LOCK_SHARDS = 4096;

    /**
     * The lock's node: {@code /locks/{namespace}/{shard}/{leaf}}. Every lock node is a leaf of this tree, so a lock's
     * children are its queue alone: no name can create a node that Warden's or Curator's lock rules would read as a
     * queue entry of another lock. The shard keeps each node's children to about a million names / 4096 — well below
     * ZooKeeper's packet limit even for 512-character names. A plain Curator lock on the same lock uses this path.
     */
    public static String lock(LockName name) {
        return LOCKS + "/" + name.namespace() + "/" + lockShard(name) + "/" + String.join(String.valueOf(SEGMENT_SEPARATOR), name.segments());
    }

    /** 3 hex digits: the first 12 bits of the SHA-256 of the name ({@code namespace/path}, UTF-8). */
    public static String lockShard(LockName name) {
        byte[] hash = sha256(name.toString());
        int bits = (hash[0] & 0xff) << 4 | (hash[1] & 0xf0) >>> 4;
        return String.format("%03x", bits);
    }

    /**
     * The name whose lock node is {@code lockPath} (relative to the chroot), or null when the path is not where a lock
     * node of that name would be (a node made by hand, a shard, a namespace).
     */
    public static LockName lockName(String lockPath) {
        if (!lockPath.startsWith(LOCKS + "/")) {
            return null;
        }
        String[] parts = lockPath.substring(LOCKS.length() + 1).split("/", -1);
        if (parts.length != 3) {
            return null;
        }
        try {
            LockName name = new LockName(parts[0], List.of(parts[2].split(String.valueOf(SEGMENT_SEPARATOR), -1)));
            return lockShard(name).equals(parts[1]) ? name : null;
        } catch (RuntimeException e) {
            return null; // not a valid name
        }
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** Session records and lock-delays are spread over this many shards: the first two hex digits of the session id. */
    public static final int SESSION_SHARDS = 256;
    private static final List<String> SHARDS = java.util.stream.IntStream.range(0, SESSION_SHARDS)
            .mapToObj(i -> String.format("%02x", i)).toList();

    /** The shards of {@link #SESSIONS} and {@link #LOCK_DELAY}: {@code 00} to {@code ff}. */
    public static List<String> shards() {
        return SHARDS;
    }

    /** {@code /sessions/{first two hex digits}/{id}}: no listing of sessions is larger than a 256th of them. */
    public static String session(String sessionId) {
        return SESSIONS + "/" + sessionId.substring(0, 2) + "/" + sessionId;
    }

    public static String sessionRequest(String sessionId, String requestUuid) {
        return session(sessionId) + "/" + requestUuid;
    }

    /**
     * The session id in a path below a session shard ({@code /sessions/{sh}/{id}[/...]}, {@code /lockdelay/{sh}/{id}}),
     * or null when the path names no session (a shard itself).
     */
    public static String sessionIdOf(String path) {
        String[] parts = path.split("/", -1);
        return parts.length >= 4 && parts[3].length() > 2 && parts[3].startsWith(parts[2]) ? parts[3] : null;
    }

    private static final String CLIENT_NOTE = "~client-";

    /**
     * The note an acquire that said {@code on_deadlock: FAIL} creates under its request record and deletes again in its
     * {@code multi}, as {@link #clientIdNote}: every watching gateway learns from the notification alone that the
     * request may be a deadlock's victim.
     */
    public static final String DEADLOCK_FAIL_NOTE = "~deadlock-fail";

    /**
     * The name of the client-id note an acquire's {@code multi} creates under its request record and deletes again: the
     * node never outlives the transaction, but its creation's notification tells every watching gateway the session's
     * client id, in the transaction, without a read. The id is base64url (UTF-8, no padding), at most 683 characters
     * for the 128-character limit.
     */
    public static String clientIdNote(String clientId) {
        return CLIENT_NOTE + Base64.getUrlEncoder().withoutPadding().encodeToString(clientId.getBytes(StandardCharsets.UTF_8));
    }

    /** The client id a {@link #clientIdNote} names, or null for any other name. */
    public static String clientIdOfNote(String nodeName) {
        if (!nodeName.startsWith(CLIENT_NOTE)) {
            return null;
        }
        try {
            return new String(Base64.getUrlDecoder().decode(nodeName.substring(CLIENT_NOTE.length())), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The entry of cell {@code name} in {@link #CELLS}. */
    public static String cellEntry(String name) {
        return CELLS + "/" + name;
    }

    /** The name of the child of {@link #TOKEN_FLOOR} that raises the floor to {@code floor}: sorts by floor. */
    public static String floorNode(long floor) {
        return FLOOR_PREFIX + String.format("%019d", floor);
    }

    /** The floor a child of {@link #TOKEN_FLOOR} raises to, or -1 when the name is not a raise. */
    public static long floorOf(String nodeName) {
        if (!nodeName.startsWith(FLOOR_PREFIX) || nodeName.length() != FLOOR_PREFIX.length() + 19) {
            return -1;
        }
        String digits = nodeName.substring(FLOOR_PREFIX.length());
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return -1; // 19 digits past Long.MAX_VALUE
        }
    }

    private static final String REVOCATION_PREFIX = "r-";

    /**
     * {@code /revocations/r-{token}-{16 hex of the name's SHA-256}}: one per hold (a token is unique per name, and names
     * sharing a token — one multi-lock request — differ in the hash), short so that a listing of thousands fits one
     * reply.
     */
    public static String revocation(LockName name, long token) {
        byte[] hash = sha256(name.toString());
        StringBuilder hex = new StringBuilder(16);
        for (int i = 0; i < 8; i++) {
            hex.append(String.format("%02x", hash[i] & 0xff));
        }
        return REVOCATIONS + "/" + REVOCATION_PREFIX + token + "-" + hex;
    }

    public static String gateway(String gatewayId) {
        return GATEWAYS + "/" + gatewayId;
    }

    public static String lockDelay(String sessionId) {
        return LOCK_DELAY + "/" + sessionId.substring(0, 2) + "/" + sessionId;
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
