package io.warden.service.zk;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The data of a cell's {@link CellPaths#ROUTING} node: which namespaces the cell serves. The cell named {@code default}
 * serves every namespace but those in {@code away}; any other cell serves exactly those in {@code serves}. A namespace
 * in {@code moving} (to the cell named there) is served by no one here: it is being moved away from this cell, and
 * nothing of it is written here any more; the move can only be completed, to that cell, by whoever asks for it next.
 *
 * <p>Each cell's node says only what that cell may do, and every write of a queue entry in the cell checks the node's
 * version in the same transaction: so a gateway whose view of the routes is stale cannot write in a cell that no longer
 * serves the namespace, whatever the other cells say.
 *
 * <p>Immutable; the lists are sorted copies. At most {@link #MAX_NAMESPACES} names in all, so that the node stays far
 * below ZooKeeper's packet limit (64 bytes a name: under 200 KB).
 */
public record CellRoutes(@JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> serves,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> away,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) java.util.Map<String, String> moving) {
    /** The most namespaces one cell's node may name (serves, away and frozen together). */
    public static final int MAX_NAMESPACES = 3_000;

    /** A cell that serves nothing it was not given (and, for the default cell, everything). */
    public static final CellRoutes EMPTY = new CellRoutes(List.of(), List.of(), java.util.Map.of());

    public CellRoutes {
        serves = sorted(serves);
        away = sorted(away);
        moving = moving == null ? java.util.Map.of() : java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(moving));
    }

    private static List<String> sorted(List<String> names) {
        return names == null ? List.of() : List.copyOf(new TreeSet<>(names));
    }

    /** Whether a cell with this node serves {@code namespace} now ({@code isDefault}: the cell named default). */
    public boolean serves(String namespace, boolean isDefault) {
        if (moving.containsKey(namespace)) {
            return false;
        }
        return isDefault ? !away.contains(namespace) : serves.contains(namespace);
    }

    /** Whether {@code namespace} is frozen here: being moved away. */
    public boolean frozen(String namespace) {
        return moving.containsKey(namespace);
    }

    /** The cell {@code namespace} is being moved to from here, or null. */
    public String movingTo(String namespace) {
        return moving.get(namespace);
    }

    /** How many names the node holds. */
    @JsonIgnore
    public int size() {
        return serves.size() + away.size() + moving.size();
    }

    /** This node with {@code namespace} frozen here, on its way to cell {@code to}. */
    public CellRoutes freeze(String namespace, String to) {
        java.util.Map<String, String> m = new java.util.TreeMap<>(moving);
        m.put(namespace, to);
        return new CellRoutes(serves, away, m);
    }

    public CellRoutes unfreeze(String namespace) {
        java.util.Map<String, String> m = new java.util.TreeMap<>(moving);
        m.remove(namespace);
        return new CellRoutes(serves, away, m);
    }

    /** This node with {@code namespace} served here (or no longer served, with {@code served} false). */
    public CellRoutes serving(String namespace, boolean served, boolean isDefault) {
        if (isDefault) {
            return new CellRoutes(serves, served ? minus(away, namespace) : plus(away, namespace), moving);
        }
        return new CellRoutes(served ? plus(serves, namespace) : minus(serves, namespace), away, moving);
    }

    private static List<String> plus(List<String> names, String name) {
        List<String> out = new ArrayList<>(names);
        if (!out.contains(name)) {
            out.add(name);
        }
        return out;
    }

    private static List<String> minus(List<String> names, String name) {
        List<String> out = new ArrayList<>(names);
        out.remove(name);
        return out;
    }
}
