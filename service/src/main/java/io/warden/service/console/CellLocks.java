package io.warden.service.console;

import io.warden.service.lock.LockLister;
import io.warden.service.zk.Zk;

import java.util.List;

/**
 * Where the console reads locks: every cell the gateway serves (its lock listings are the cells' merged), and the cell a
 * namespace's locks are in (a lock's page and its admin actions). One cell on a one-cell gateway.
 */
public interface CellLocks {
    /** One cell: its name, lister, and ZooKeeper front (an admin action deletes a lock-delay hold through it). */
    record Cell(String name, LockLister lister, Zk zk) {
    }

    /** Every cell now, the default first. */
    List<Cell> all();

    /** The cell {@code namespace}'s locks are read from now. */
    Cell of(String namespace);

    /** Just the one cell (a one-cell gateway, tests). */
    static CellLocks single(LockLister lister, Zk zk) {
        Cell only = new Cell("default", lister, zk);
        return new CellLocks() {
            @Override
            public List<Cell> all() {
                return List.of(only);
            }

            @Override
            public Cell of(String namespace) {
                return only;
            }
        };
    }
}
