package io.warden.service.watch;

import io.warden.service.api.Holder;
import io.warden.service.api.LockView;
import io.warden.service.api.Waiter;
import io.warden.service.lock.LockQueue;
import io.warden.service.lock.QueueEntry;
import io.warden.service.lock.QueueNodeData;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The mirrored queue of one lock, and the events its changes make. Who holds is decided by {@link LockQueue}, the
 * engine's one grant rule, on the mirrored node names.
 *
 * <p>Concurrency: not thread-safe; confined to the watch hub's thread.
 */
final class MirroredLock {
    /** A queue node as the mirror knows it: its name, token (czxid) and data (null when not Warden's or unreadable). */
    record Node(QueueEntry entry, long token, QueueNodeData data) {
        String sessionId() {
            return data == null ? null : data.sessionId();
        }
    }

    private final String name;
    /** By node name. */
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    /** Names of the nodes that hold, as of the last change. */
    private Set<String> holding = Set.of();

    MirroredLock(String name) {
        this.name = name;
    }

    boolean isEmpty() {
        return nodes.isEmpty();
    }

    /** Loads a node without events (a rebuild from a full read). */
    void load(Node node) {
        nodes.put(node.entry().node(), node);
        holding = holders(queue());
    }

    /** A queue node was created at {@code zxid}: QUEUED, then GRANTED for it and any other node that now holds. */
    List<WatchEvent> created(Node node, long zxid) {
        if (nodes.containsKey(node.entry().node())) {
            return List.of(); // already known (a rebuild read it)
        }
        nodes.put(node.entry().node(), node);
        List<WatchEvent> events = new ArrayList<>();
        events.add(event(zxid, WatchEvent.Type.QUEUED, node));
        regrant(zxid, events);
        return events;
    }

    /**
     * A queue node was deleted at {@code zxid}: RELEASED if it held, CANCELLED if it waited, EXPIRED either way when
     * {@code expired} says its session's expiry removed it; then GRANTED for every node the removal promoted.
     */
    List<WatchEvent> deleted(String node, long zxid, Predicate<Node> expired) {
        Node gone = nodes.remove(node);
        if (gone == null) {
            return List.of(); // never mirrored (created and deleted before a rebuild read it)
        }
        WatchEvent.Type type = expired.test(gone) ? WatchEvent.Type.EXPIRED
                : holding.contains(node) ? WatchEvent.Type.RELEASED : WatchEvent.Type.CANCELLED;
        List<WatchEvent> events = new ArrayList<>();
        events.add(event(zxid, type, gone));
        regrant(zxid, events);
        return events;
    }

    /** Recomputes the holders; a GRANTED event, in queue order, for each node that holds now and did not before. */
    private void regrant(long zxid, List<WatchEvent> events) {
        LockQueue q = queue();
        Set<String> now = holders(q);
        for (QueueEntry e : q.holders()) {
            if (!holding.contains(e.node())) {
                events.add(event(zxid, WatchEvent.Type.GRANTED, nodes.get(e.node())));
            }
        }
        holding = now;
    }

    /** The lock's state, as {@code GET /v1/locks/{name}} shows it; {@code expiredSession} marks lock-delayed holds. */
    LockView view(long revision, Predicate<String> expiredSession) {
        LockQueue q = queue();
        List<Holder> holders = new ArrayList<>();
        List<Waiter> waiters = new ArrayList<>();
        int held = q.holders().size();
        for (int i = 0; i < q.entries().size(); i++) {
            Node n = nodes.get(q.entries().get(i).node());
            QueueNodeData d = n.data();
            String session = n.sessionId();
            if (i < held) {
                holders.add(new Holder(session, d == null ? "curator" : d.clientId(), n.entry().mode(), n.token(),
                        session != null && expiredSession.test(session)));
            } else {
                waiters.add(new Waiter(session, d == null ? "curator" : d.clientId(), n.entry().mode(),
                        d == null ? null : d.requestId(), i));
            }
        }
        return new LockView(name, holders.isEmpty() ? LockView.LockMode.FREE : q.mode(), holders, waiters, revision);
    }

    /** How many of this lock's nodes hold it; the rest wait. */
    int holderCount() {
        return queue().holders().size();
    }

    int nodeCount() {
        return nodes.size();
    }

    private LockQueue queue() {
        return LockQueue.of(new ArrayList<>(nodes.keySet()));
    }

    private static Set<String> holders(LockQueue q) {
        Set<String> held = new HashSet<>();
        for (QueueEntry e : q.holders()) {
            held.add(e.node());
        }
        return held;
    }

    private WatchEvent event(long zxid, WatchEvent.Type type, Node node) {
        return new WatchEvent(zxid, type, name, node.sessionId(), node.entry().mode(), node.token());
    }
}
