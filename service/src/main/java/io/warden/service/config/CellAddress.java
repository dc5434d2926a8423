package io.warden.service.config;

import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A cell besides the default one (the ensemble of --zk): its name, ZooKeeper connect string and chroot (null: the
 * gateway's --chroot). The checks are those of the {@code cells} setting, for cells that come from elsewhere (the API,
 * the cell directory). Concurrency: immutable.
 */
public record CellAddress(String name, String zkConnect, String chroot) {
    /** The most cells besides the default one: of the cells setting, and of the cell directory. */
    public static final int MAX_CELLS = 16;
    /** What a cell's name matches. */
    public static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,31}");

    /** Why {@code name} is not the name of a cell besides the default one; null when it is one. */
    public static String nameProblem(String name) {
        if (!NAME.matcher(name).matches()) {
            return "must match " + NAME.pattern();
        }
        return Setting.DEFAULT_CELL.equals(name) ? "default is the default cell (the ensemble of --zk)" : null;
    }

    /** Why {@code zk} is not a connect string; null when it is one. */
    public static String zkProblem(String zk) {
        return problem(Setting.Kind.ZK_CONNECT, zk);
    }

    /** Why {@code chroot} is not a chroot; null when it is one. */
    public static String chrootProblem(String chroot) {
        return problem(Setting.Kind.CHROOT, chroot);
    }

    private static String problem(Setting.Kind kind, String text) {
        try {
            kind.parse(text);
            return null;
        } catch (IllegalArgumentException e) {
            return "expected " + kind.allowed();
        }
    }

    /**
     * The cell, its connect string written without the spaces allowed around its servers; empty when any part is not
     * valid ({@code chroot} may be null).
     */
    public static Optional<CellAddress> checked(String name, String zk, String chroot) {
        if (name == null || zk == null || nameProblem(name) != null || zkProblem(zk) != null
                || (chroot != null && chrootProblem(chroot) != null)) {
            return Optional.empty();
        }
        String servers = String.join(",", Arrays.stream(zk.split(",")).map(String::strip).toList());
        return Optional.of(new CellAddress(name, servers, chroot));
    }

    /** The chroot the cell is under: its own, else {@code gatewayChroot}. */
    public String chrootOr(String gatewayChroot) {
        return chroot != null ? chroot : gatewayChroot;
    }

    /**
     * Whether {@code other} is on the same ZooKeeper path as this cell: the same servers (as host:port, in any order)
     * under the same chroot, each cell's own or {@code gatewayChroot}. Two such cells would share their lock queues.
     */
    public boolean samePath(String otherZk, String otherChroot, String gatewayChroot) {
        return ConfigLoader.servers(zkConnect).equals(ConfigLoader.servers(otherZk))
                && chrootOr(gatewayChroot).equals(otherChroot != null ? otherChroot : gatewayChroot);
    }
}
