package io.warden.service.api;

import java.util.List;

/**
 * What a gateway does to break a deadlock: one ZooKeeper {@code multi} that checks every queue node on the cycle's
 * edges ({@code checks}), removes every entry of the victim's request ({@code victimNodes}) and tombstones its record
 * with {@code cycle} (docs/decisions/0013-deadlock-detection.md).
 */
public record DeadlockAction(Deadlock cycle, List<NodeRef> checks, String victimSession, String victimRequest,
                             List<NodeRef> victimNodes) {
    public DeadlockAction {
        checks = List.copyOf(checks);
        victimNodes = List.copyOf(victimNodes);
    }

    /** A queue node: the lock's name and the node's name under it. */
    public record NodeRef(String name, String node) {
    }
}
