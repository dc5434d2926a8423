package io.warden.service.api;

import java.util.List;

/**
 * One cell a gateway serves ({@code GET /v1/cells}): its name, ZooKeeper ensemble and chroot, whether it serves now
 * (connected to its ensemble and not refused), why not when it does not, and the namespaces routed to it ({@code
 * default} serves every namespace no route names, listed or not).
 *
 * <p>Concurrency: immutable.
 */
public record CellView(String name, String zk, String chroot, boolean serving, String detail, List<String> namespaces) {
    public CellView {
        namespaces = List.copyOf(namespaces);
    }
}
