package io.warden.console.model;

import java.util.List;
import java.util.Objects;

/**
 * One cell (a ZooKeeper ensemble and chroot) the gateway serves, as {@code GET /v1/cells} lists it.
 *
 * @param zk         the ensemble's connect string, or null when not known
 * @param chroot     the cell's chroot, or null when not known
 * @param serving    whether the gateway serves the cell now (connected to its ensemble, not refused); its namespaces
 *                   answer 503 otherwise
 * @param detail     why it does not serve, or null
 * @param namespaces the namespaces routed to the cell; the {@link #DEFAULT} cell also serves every namespace no route
 *                   names
 */
public record CellInfo(String name, String zk, String chroot, boolean serving, String detail, List<String> namespaces) {
    /** The name of the cell that serves every namespace not routed elsewhere (the ensemble of {@code --zk}). */
    public static final String DEFAULT = "default";

    public CellInfo {
        Objects.requireNonNull(name, "name");
        namespaces = List.copyOf(namespaces);
    }

    public boolean isDefault() {
        return DEFAULT.equals(name);
    }
}
