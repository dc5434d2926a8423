package io.warden.service.watch;

import io.warden.service.api.Holder;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.Waiter;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueEntry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The mirrored queue of one lock, and the events one transaction's changes to it make. Who holds is decided by
 * {@link LockQueue}'s one grant rule ({@link LockQueue#holderCount}) on the queue kept sorted in
 * {@link LockQueue#order()}: a change costs O(log n) plus the holders, never a parse and sort of the whole queue
 * (on a 10,001-entry queue: 4.8 KB allocated per change, against 1.7 MB for a parse and sort).
 *
 * <p>Events are derived per transaction from the state before and after it ({@link #apply}), never per single
 * notification: a request that only moved up through the queue in the middle of a transaction that also removed it is
 * not GRANTED.
 *
 * <p>A lock the mirror's full read could not list (too large) starts with no queue and {@link #unlisted()} entries: the
 * nodes it has are those created since; deletions of nodes it does not have count {@code unlisted} down. While that is
 * above 0 ({@link #partial()}) who holds the lock is not known: its view says so, and {@link LockMirror} publishes none
 * of its events.
 *
 * <p>Concurrency: not thread-safe; confined to the watch hub's thread. Bounded by the lock's queue in ZooKeeper.
 */
final class MirroredLock {
    /**
     * A queue node as the mirror knows it: its entry (name, sequence, mode; the request id is not kept), token (czxid
     * plus the token floor), session and client, and whether its request said {@code on_deadlock: FAIL}. Session and
     * client are null for a node that is not Warden's (a plain Curator client's). The request's uuid is in the node's
     * name ({@link #request()}).
     */
    record Node(QueueEntry entry, long token, String sessionId, String clientId, boolean failOnDeadlock) {
        Node {
            if (entry.id() != null) {
                entry = new QueueEntry(entry.node(), entry.sequence(), entry.mode(), null, entry.permits());
            }
        }

        Node(QueueEntry entry, long token, String sessionId, String clientId) {
            this(entry, token, sessionId, clientId, false);
        }

        /** The uuid of the node's request ({@code _c_{uuid}-…}), parsed from its name; null when it has none. */
        String request() {
            return QueueEntry.parse(entry.node()).map(QueueEntry::id).orElse(null);
        }
    }

    private final String name;
    /**
     * The queue, in {@link LockQueue#order()}: by sequence, then node name, so an entry parsed from a deleted node's
     * name finds its node (no second map by name, which would add to the mirror's heap per lock).
     */
    private final TreeMap<QueueEntry, Node> queue = new TreeMap<>(LockQueue.order());
    /** How many entries at the head of {@link #queue} hold, as of the last change. */
    private int holding;
    /** Entries of the lock that the mirror does not have (it could not list them); 0 when the queue is exact. */
    private int unlisted;

    /** @param unlisted entries the lock has that the mirror does not (a lock too large to list); 0 for none */
    MirroredLock(String name, int unlisted) {
        this.name = name;
        this.unlisted = unlisted;
    }

    boolean isEmpty() {
        return queue.isEmpty() && unlisted == 0;
    }

    /** Whether the mirror lacks some of this lock's entries (so who holds it is not known). */
    boolean partial() {
        return unlisted > 0;
    }

    int unlisted() {
        return unlisted;
    }

    /** The lock's entries: those the mirror has and those it does not. */
    int entries() {
        return queue.size() + unlisted;
    }

    /** Loads a node without events (a rebuild from a full read). */
    void load(Node node) {
        put(node);
        holding = LockQueue.holderCount(queue.keySet().iterator());
    }

    /**
     * Applies one transaction's changes to this lock at {@code zxid} and returns its events, in this order: each
     * removed request (in queue order) RELEASED if it held before the transaction, CANCELLED if it waited, or EXPIRED
     * either way when {@code expired} says its session's expiry removed it; then QUEUED for each new request (queue
     * order); then GRANTED for each request that holds after the transaction and did not before (queue order; a new
     * request that holds at once is QUEUED and GRANTED); then REVOKE_REQUESTED for each node whose data the transaction
     * set and that is still there (queue order): a revoke asks its holder to let go (a Curator {@code Revoker} may ask a
     * waiter too). A node both created and deleted by the transaction makes no event; a deletion of a node the mirror
     * does not have, or a creation of one it has (a rebuild's read already reflected it), is ignored.
     */
    List<WatchEvent> apply(long zxid, Collection<Node> created, Collection<QueueEntry> deleted, Collection<QueueEntry> changed,
                           Predicate<Node> expired) {
        Set<String> heldBefore = holderNames();
        List<Node> removed = new ArrayList<>(deleted.size());
        for (QueueEntry e : deleted) {
            Node gone = queue.remove(e);
            if (gone != null) {
                removed.add(gone);
            } else if (unlisted > 0) {
                unlisted--; // one the full read did not list (a node made later would be in the queue)
            }
        }
        List<Node> added = new ArrayList<>(created.size());
        for (Node n : created) {
            if (!queue.containsKey(n.entry())) {
                put(n);
                added.add(n);
            }
        }
        holding = LockQueue.holderCount(queue.keySet().iterator());
        List<Node> revoked = List.of();
        if (!changed.isEmpty()) {
            revoked = new ArrayList<>(changed.size());
            for (QueueEntry e : changed) {
                Node n = queue.get(e);
                if (n != null) {
                    revoked.add(n);
                }
            }
            revoked.sort((a, b) -> LockQueue.order().compare(a.entry(), b.entry()));
        }
        if (removed.isEmpty() && added.isEmpty() && revoked.isEmpty()) {
            return List.of();
        }
        removed.sort((a, b) -> LockQueue.order().compare(a.entry(), b.entry()));
        added.sort((a, b) -> LockQueue.order().compare(a.entry(), b.entry()));
        List<WatchEvent> events = new ArrayList<>(removed.size() + 2 * added.size() + 1);
        for (Node n : removed) {
            WatchEvent.Type type = expired.test(n) ? WatchEvent.Type.EXPIRED
                    : heldBefore.contains(n.entry().node()) ? WatchEvent.Type.RELEASED : WatchEvent.Type.CANCELLED;
            events.add(event(zxid, type, n));
        }
        for (Node n : added) {
            events.add(event(zxid, WatchEvent.Type.QUEUED, n));
        }
        Iterator<Node> head = queue.values().iterator();
        for (int i = 0; i < holding; i++) {
            Node n = head.next();
            if (!heldBefore.contains(n.entry().node())) {
                events.add(event(zxid, WatchEvent.Type.GRANTED, n));
            }
        }
        for (Node n : revoked) {
            events.add(event(zxid, WatchEvent.Type.REVOKE_REQUESTED, n));
        }
        return events;
    }

    /** The lock's state, as {@code GET /v1/locks/{name}} shows it; {@code lockDelayed} marks lock-delayed holds. */
    LockView view(long revision, Predicate<String> lockDelayed) {
        if (partial()) {
            return LockView.tooLarge(name, entries(), revision);
        }
        List<Holder> holders = new ArrayList<>(holding);
        List<Waiter> waiters = new ArrayList<>(queue.size() - holding);
        int i = 0;
        Mode firstMode = null;
        for (Node n : queue.values()) {
            String session = n.sessionId();
            String client = session == null ? "curator" : n.clientId();
            if (i < holding) {
                firstMode = firstMode == null ? n.entry().mode() : firstMode;
                holders.add(new Holder(session, client, n.entry().mode(), n.token(), session != null && lockDelayed.test(session)));
            } else {
                waiters.add(new Waiter(session, client, n.entry().mode(), null, i));
            }
            i++;
        }
        LockView.LockMode mode = firstMode == null ? LockView.LockMode.FREE : switch (firstMode) {
            case EXCLUSIVE -> LockView.LockMode.EXCLUSIVE;
            case SHARED -> LockView.LockMode.SHARED;
            case SEMAPHORE -> LockView.LockMode.SEMAPHORE;
        };
        int permits = queue.isEmpty() ? 0 : queue.firstKey().permits();
        return new LockView(name, mode, holders, waiters, revision).withPermits(permits);
    }

    /** The lock's name. */
    String name() {
        return name;
    }

    /** The queue's nodes in queue order (the first {@link #holderCount()} hold). A view: read it on the hub's thread. */
    Collection<Node> nodes() {
        return queue.values();
    }

    /** How many of this lock's nodes hold it; the rest wait. O(1). */
    int holderCount() {
        return holding;
    }

    int nodeCount() {
        return queue.size();
    }

    private void put(Node node) {
        queue.put(node.entry(), node);
    }

    private Set<String> holderNames() {
        Set<String> held = new HashSet<>(Math.max(4, holding * 2));
        Iterator<QueueEntry> head = queue.keySet().iterator();
        for (int i = 0; i < holding; i++) {
            held.add(head.next().node());
        }
        return held;
    }

    private WatchEvent event(long zxid, WatchEvent.Type type, Node node) {
        return new WatchEvent(zxid, type, name, node.sessionId(), node.clientId(), node.entry().mode(), node.token());
    }
}
