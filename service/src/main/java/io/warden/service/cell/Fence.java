package io.warden.service.cell;

import org.apache.curator.framework.api.transaction.CuratorOp;

/**
 * Whether a cell serves a namespace, as a check ZooKeeper makes in the transaction that writes a queue entry there: a
 * gateway whose view of the routes is behind has its write refused instead of making an entry in a cell that no longer
 * serves the namespace (a move).
 */
@FunctionalInterface
public interface Fence {
    /** No check: a cell that no gateway serving several cells has ever routed (one-cell deployments). */
    Fence NONE = namespace -> null;

    /**
     * The operation to add (last) to a {@code multi} that makes a queue entry of {@code namespace} in this cell, or null
     * when there is nothing to check.
     *
     * @throws io.warden.service.api.NotServedException when this cell does not serve the namespace as this gateway
     *                                                  knows it now (nothing may be written)
     * @throws io.warden.service.api.WardenException    UNAVAILABLE when the cell's routes are not read yet
     */
    CuratorOp checkFor(String namespace);
}
