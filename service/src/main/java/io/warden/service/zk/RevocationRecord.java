package io.warden.service.zk;

/**
 * The data of {@code /revocations/r-{token}-{hash}} ({@link CellPaths#revocation}): a hold asked to let go. {@code node}
 * is the hold's queue node (its path, under the lock's node), {@code sessionId} its session (null for a plain Curator
 * client's node), {@code gateway} the gateway that took the request and runs its grace timer while it lives.
 */
public record RevocationRecord(String name, long token, String node, String sessionId, long graceMs, String reason,
                               String by, String gateway) {
}
