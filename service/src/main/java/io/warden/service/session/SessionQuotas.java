package io.warden.service.session;

import io.warden.service.api.WardenException;
import io.warden.service.zk.SessionRecord;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The sessions one gateway tracks, counted in all and per owner, so that one client cannot fill the gateway's
 * {@code max-sessions-per-gateway} for everyone: at most {@code max-sessions-per-principal} per principal, or, in open
 * mode, per client address that opened them. Opens and takeovers reserve a place before they write to ZooKeeper (so
 * concurrent ones cannot overshoot a limit) and give it back when the write fails; adoption of an orphaned session
 * never refuses (it must not drop a session), so it counts without a limit.
 *
 * <p>The owner of a session comes from its record: {@code principal}, else {@code address}; records written by gateways
 * that predate auth files have neither and share the owner {@link #UNKNOWN}, to which only the gateway-wide limit
 * applies.
 *
 * <p>Concurrency: the per-owner map and the total are updated together under this object's monitor (short, no I/O).
 * The map holds one entry per owner with at least one tracked or reserved session: at most
 * {@code max-sessions-per-gateway} entries.
 */
final class SessionQuotas {
    static final String UNKNOWN = SessionRecord.UNKNOWN_OWNER;

    private final int maxTotal;
    private final int maxPerOwner;
    /** Guarded by this: tracked plus reserved sessions, per owner (no entry at 0) and in all. */
    private final Map<String, Integer> perOwner = new ConcurrentHashMap<>();
    private int total;

    SessionQuotas(int maxTotal, int maxPerOwner) {
        this.maxTotal = maxTotal;
        this.maxPerOwner = maxPerOwner;
    }

    /** The owner key of a session record: its principal, else the address that opened it, else {@link #UNKNOWN}. */
    static String owner(SessionRecord rec) {
        return owner(rec.principal(), rec.address());
    }

    static String owner(String principal, String address) {
        return SessionRecord.quotaOwner(principal, address);
    }

    /** Takes a place for a session of {@code owner}; RESOURCE_EXHAUSTED (429) naming the limit when there is none. */
    synchronized void reserve(String owner) {
        if (total >= maxTotal) {
            throw WardenException.exhausted("this gateway already tracks " + total + " sessions, the most allowed "
                    + "(max-sessions-per-gateway); try another gateway");
        }
        int mine = perOwner.getOrDefault(owner, 0);
        if (mine >= maxPerOwner && !owner.equals(UNKNOWN)) {
            throw WardenException.exhausted(owner + " already has " + mine + " sessions on this gateway, the most "
                    + "allowed (max-sessions-per-principal); close some, or let them expire");
        }
        perOwner.put(owner, mine + 1);
        total++;
    }

    /** Counts a session without a limit (adoption). */
    synchronized void add(String owner) {
        perOwner.merge(owner, 1, Integer::sum);
        total++;
    }

    /** Gives back a place: a reservation not used, or a tracked session that is no longer tracked here. */
    synchronized void release(String owner) {
        Integer mine = perOwner.get(owner);
        if (mine == null) {
            return;
        }
        if (mine <= 1) {
            perOwner.remove(owner);
        } else {
            perOwner.put(owner, mine - 1);
        }
        total--;
    }

    synchronized int total() {
        return total;
    }

    int of(String owner) {
        return perOwner.getOrDefault(owner, 0);
    }
}
