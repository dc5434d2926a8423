package io.warden.client.direct;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The cell's token floor, as a direct grant needs it: a token is its node's czxid plus the floor of the largest raise
 * made before that node (the gateway's rule, docs/design.md "The token floor"; written again here because the SDK
 * depends on nothing of Warden's; {@code DirectFloorTest} checks that both agree).
 *
 * <p>A raise is a child {@code /token-floor/floor-{floor, 19 digits}} of the cell's chroot; its czxid is where it
 * starts. Raises are rare (an operator's recovery after a rolled-back ensemble), so a grant reads the children once and
 * looks at the czxid of as few raises as it needs, largest floor first: a cell whose floor was never raised costs one
 * {@code getChildren}. Read after the node exists, the listing has every raise made before it.
 *
 * <p>Stateless; thread-safe.
 */
final class DirectFloor {
    static final String PATH = "/token-floor";
    private static final String PREFIX = "floor-";

    private DirectFloor() {
    }

    /** The token of a node made at {@code czxid} in the cell {@code client} is namespaced to. */
    static long token(CuratorFramework client, long czxid) throws Exception {
        return Math.addExact(czxid, floorFor(client, czxid));
    }

    private static long floorFor(CuratorFramework client, long czxid) throws Exception {
        List<String> children;
        try {
            children = client.getChildren().forPath(PATH);
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
        List<Long> floors = new ArrayList<>();
        for (String child : children) {
            long floor = floorOf(child);
            if (floor > 0) {
                floors.add(floor);
            }
        }
        floors.sort(Comparator.reverseOrder());
        for (long floor : floors) {
            Stat stat = client.checkExists().forPath(PATH + "/" + nodeName(floor));
            if (stat != null && stat.getCzxid() < czxid) {
                return floor;
            }
        }
        return 0;
    }

    static String nodeName(long floor) {
        return PREFIX + String.format("%019d", floor);
    }

    /** The floor a child of {@link #PATH} raises to, or -1 when the name is not a raise. */
    static long floorOf(String name) {
        if (!name.startsWith(PREFIX) || name.length() != PREFIX.length() + 19) {
            return -1;
        }
        String digits = name.substring(PREFIX.length());
        if (!digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        try {
            long floor = Long.parseLong(digits);
            return floor <= 1L << 62 ? floor : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
