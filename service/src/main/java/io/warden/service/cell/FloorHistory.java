package io.warden.service.cell;

import java.util.Arrays;

/**
 * The raises of a cell's token floor, as a pure value: each raise applies to the queue nodes made after it, so a token
 * is {@code czxid + floorFor(czxid)} and the token of a node never changes once the node exists.
 *
 * <p>{@code floorFor(c)} is the largest floor of a raise whose own zxid is below {@code c} (0 before the first raise).
 * It is a maximum, not the latest raise: a raise to a lower value (made by hand, or by two operators at once) can never
 * lower the floor. So for one name, a later node (larger czxid) never gets a smaller floor, and tokens grow with the
 * czxids: a floor raise keeps every name's tokens increasing and raises every token made after it.
 *
 * <p>Immutable; {@link #with} makes a new one. Sizes are tiny (one entry per raise), lookups a binary search.
 */
public final class FloorHistory {
    /** No raise: every token is its czxid. */
    public static final FloorHistory NONE = new FloorHistory(new long[0], new long[0]);
    /**
     * The largest floor accepted: with zxids below 2^62 (an epoch below 2^30) a token stays a positive 64-bit number.
     * ZooKeeper's epochs grow by one per leader election; 2^30 elections is far off.
     */
    public static final long MAX_FLOOR = 1L << 62;

    /** Zxids of the raises, ascending; the floor each raise named; the floor in force after each (running maximum). */
    private final long[] zxids;
    private final long[] given;
    private final long[] floors;

    private FloorHistory(long[] zxids, long[] given) {
        this.zxids = zxids;
        this.given = given;
        this.floors = new long[given.length];
        long max = 0;
        for (int i = 0; i < given.length; i++) {
            max = Math.max(max, given[i]);
            floors[i] = max;
        }
    }

    /** This history with one more raise: {@code floor} for the nodes made after {@code zxid}. */
    public FloorHistory with(long zxid, long floor) {
        if (floor < 0 || floor > MAX_FLOOR) {
            throw new IllegalArgumentException("a token floor must be 0.." + MAX_FLOOR + ", got " + floor);
        }
        int at = Arrays.binarySearch(zxids, zxid);
        if (at >= 0) {
            long[] g = given.clone();
            g[at] = Math.max(g[at], floor); // one raise per transaction; keep the larger if told twice
            return new FloorHistory(zxids, g);
        }
        int insert = -at - 1;
        long[] z = new long[zxids.length + 1];
        long[] g = new long[zxids.length + 1];
        System.arraycopy(zxids, 0, z, 0, insert);
        System.arraycopy(given, 0, g, 0, insert);
        z[insert] = zxid;
        g[insert] = floor;
        System.arraycopy(zxids, insert, z, insert + 1, zxids.length - insert);
        System.arraycopy(given, insert, g, insert + 1, zxids.length - insert);
        return new FloorHistory(z, g);
    }

    /** The floor of a node made at {@code czxid}: the largest floor raised at a zxid below it. */
    public long floorFor(long czxid) {
        int at = Arrays.binarySearch(zxids, czxid);
        int before = (at >= 0 ? at : -at - 1) - 1; // the last raise strictly below czxid
        return before < 0 ? 0 : floors[before];
    }

    /** The token of a node made at {@code czxid}. */
    public long token(long czxid) {
        return Math.addExact(czxid, floorFor(czxid));
    }

    /** The floor of every node made from now on: the largest floor raised so far. */
    public long current() {
        return floors.length == 0 ? 0 : floors[floors.length - 1];
    }

    /** The zxid of the newest raise, 0 without any. */
    public long lastRaiseZxid() {
        return zxids.length == 0 ? 0 : zxids[zxids.length - 1];
    }

    /** Whether a raise at {@code zxid} is known. */
    public boolean hasRaiseAt(long zxid) {
        return Arrays.binarySearch(zxids, zxid) >= 0;
    }

    public int raises() {
        return zxids.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FloorHistory h && Arrays.equals(zxids, h.zxids) && Arrays.equals(floors, h.floors);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(zxids) + Arrays.hashCode(floors);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("floors[");
        for (int i = 0; i < zxids.length; i++) {
            s.append(i == 0 ? "" : ", ").append(floors[i]).append(" after zxid ").append(zxids[i]);
        }
        return s.append(']').toString();
    }
}
