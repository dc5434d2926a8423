package io.warden.service.watch;

import io.warden.service.api.Deadlock;
import io.warden.service.api.DeadlockAction.NodeRef;
import io.warden.service.api.Mode;
import io.warden.service.api.OnDeadlock;
import io.warden.service.api.WaitEdge;
import io.warden.service.queue.LockQueue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The wait-for graph of the mirrored queues and its deadlocks, computed in one pass (docs/decisions/0013): nodes are
 * sessions, an edge W→H when a waiting entry of W is blocked by an entry of H by {@link LockQueue}'s rules; a request
 * is keyed by its uuid, so a multi-lock request's entries are one request that waits until every one of them holds.
 *
 * <p>A session is one thread of control: while it waits, it lets go of nothing. A session's wait for an entry of its
 * own (an upgrade from SHARED to EXCLUSIVE, or a second request behind its own hold) is no edge: its client may have
 * another thread that holds that entry and will let go, so it is never called a deadlock (its wait runs out instead).
 *
 * <p>What is reported is proven: Holt's reduction frees every session that waits for nothing or has a waiting request
 * that could be granted once every free session's entries are gone (a semaphore waiter needs only enough of the entries
 * ahead of it to go); the sessions it cannot free are deadlocked, and each strongly connected component of them with a
 * cycle is one deadlock. Entries of no Warden session block but are never members.
 *
 * <p>Cost: O(entries of the contended locks) time and memory, all of it dropped with the result but the cycles.
 * Pure; not thread-safe (the hub's thread builds it).
 */
final class DeadlockGraph {
    /**
     * A cycle whose edges would need more checks than this in one {@code multi} is reported, never acted on: a check
     * costs its path (at most about 620 bytes with the longest names), so the breaking {@code multi} stays under
     * 160 KiB, far from ZooKeeper's 1 MiB packet limit.
     */
    static final int MAX_CHECKS = 256;

    /** One deadlock as found: the wire view, the nodes its breaking must check, its signature, and its victim. */
    record Found(List<Deadlock.Member> members, List<NodeRef> checks, String signature, Victim victim) {
    }

    /** The request chosen to break a cycle (null in {@link Found} when no member said FAIL, or it is too large). */
    record Victim(String sessionId, String request) {
    }

    /**
     * The graph as computed: its deadlocks, and its edges (one per waiting entry of a Warden session and each entry of a
     * Warden session that blocks it) — those of deadlocked sessions first, at most {@link #MAX_EDGES} — with how many
     * there are in all.
     */
    record Result(List<Found> deadlocks, List<WaitEdge> edges, int edgeCount) {
        static final Result NONE = new Result(List.of(), List.of(), 0);
    }

    /** Edges kept in a {@link Result}: what the console shows of a large graph. */
    static final int MAX_EDGES = 2_000;

    /** A waiting request (all its waiting entries: one per name it does not hold yet). */
    private static final class Request {
        final String session;
        final String uuid;
        final String client;
        final boolean fail;
        final List<Wait> waits = new ArrayList<>(1);
        int unsatisfied;

        Request(String session, String uuid, String client, boolean fail) {
            this.session = session;
            this.uuid = uuid;
            this.client = client;
            this.fail = fail;
        }
    }

    /** One waiting entry: blocked by {@code blockers}, of which {@code need} must be gone (all, but for a semaphore). */
    private static final class Wait {
        final Request request;
        final String lock;
        final MirroredLock.Node node;
        final List<MirroredLock.Node> blockers;
        final int need;
        int freed;

        Wait(Request request, String lock, MirroredLock.Node node, List<MirroredLock.Node> blockers, int need) {
            this.request = request;
            this.lock = lock;
            this.node = node;
            this.blockers = blockers;
            this.need = need;
        }
    }

    private DeadlockGraph() {
    }

    /** The deadlocks among {@code locks} (locks with waiters whose queue the mirror has whole). */
    static List<Found> find(List<MirroredLock> locks) {
        return compute(locks).deadlocks();
    }

    /** The deadlocks and the edges among {@code locks} (locks with waiters whose queue the mirror has whole). */
    static Result compute(List<MirroredLock> locks) {
        Map<String, Request> requests = new LinkedHashMap<>();
        Map<String, List<Request>> bySession = new HashMap<>();
        List<Wait> waits = new ArrayList<>();
        java.util.Set<MirroredLock.Node> holders = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (MirroredLock lock : locks) {
            List<MirroredLock.Node> q = new ArrayList<>(lock.nodes());
            int holding = lock.holderCount();
            holders.addAll(q.subList(0, holding));
            for (int i = holding; i < q.size(); i++) {
                MirroredLock.Node n = q.get(i);
                String uuid = n.sessionId() == null ? null : n.request();
                if (uuid == null) {
                    continue; // not a Warden session's: never a member
                }
                int[] need = new int[1];
                List<MirroredLock.Node> blockers = blockers(q, holding, i, need);
                if (blockers == null) {
                    continue; // it will leave or hold without anyone else going (see blockers)
                }
                Request r = requests.computeIfAbsent(n.sessionId() + "/" + uuid, k -> {
                    Request made = new Request(n.sessionId(), uuid, n.clientId(), n.failOnDeadlock());
                    bySession.computeIfAbsent(made.session, s -> new ArrayList<>(1)).add(made);
                    return made;
                });
                Wait w = new Wait(r, lock.name(), n, blockers, need[0]);
                r.waits.add(w);
                r.unsatisfied++;
                waits.add(w);
            }
        }
        if (waits.isEmpty()) {
            return Result.NONE;
        }
        Set<String> deadlocked = reduce(bySession, waits);
        List<Found> found = deadlocked.isEmpty() ? List.of() : cycles(deadlocked, bySession);
        return edges(found, waits, holders);
    }

    /** The result with its edges: those of the deadlocks' members first, then the rest, at most {@link #MAX_EDGES}. */
    private static Result edges(List<Found> found, List<Wait> waits, Set<MirroredLock.Node> holders) {
        Set<String> members = new java.util.HashSet<>();
        for (Found f : found) {
            for (Deadlock.Member m : f.members()) {
                members.add(m.sessionId());
            }
        }
        List<WaitEdge> kept = new ArrayList<>();
        int count = 0;
        for (int pass = 0; pass < 2; pass++) {
            for (Wait w : waits) {
                if (members.contains(w.request.session) != (pass == 0)) {
                    continue;
                }
                for (MirroredLock.Node b : w.blockers) {
                    if (b.sessionId() == null) {
                        continue; // not a Warden session's: never a node of the graph
                    }
                    count++;
                    if (kept.size() < MAX_EDGES) {
                        kept.add(new WaitEdge(w.request.session, w.request.client, w.request.uuid, w.lock,
                                w.node.entry().mode(), b.sessionId(), b.clientId(), b.entry().mode(), b.token(),
                                holders.contains(b)));
                    }
                }
            }
        }
        return new Result(found, List.copyOf(kept), count);
    }

    /**
     * Who blocks the waiting entry at {@code i} (see the decision): null when it waits for nobody in particular — an
     * entry of another kind than the head's (the engine withdraws it) or a damaged one (it waits for its timer) — which
     * the graph treats as able to go, so it never makes a deadlock. {@code need[0]} is set to how many must go.
     */
    private static List<MirroredLock.Node> blockers(List<MirroredLock.Node> q, int holding, int i, int[] need) {
        MirroredLock.Node e = q.get(i);
        if (!e.entry().agreesWith(q.get(0).entry()) || damaged(q, i)) {
            return null;
        }
        List<MirroredLock.Node> out = new ArrayList<>(2);
        switch (e.entry().mode()) {
            case EXCLUSIVE -> {
                // Everything ahead must go; entries before the first non-SHARED waiter ahead are reached through it.
                for (int j = i - 1; j >= 0; j--) {
                    out.add(q.get(j));
                    if (q.get(j).entry().mode() != Mode.SHARED && j >= holding) {
                        break;
                    }
                }
                need[0] = out.size();
            }
            case SHARED -> {
                int j = i - 1;
                while (j >= 0 && q.get(j).entry().mode() == Mode.SHARED) {
                    j--;
                }
                if (j < 0) {
                    return null; // damaged only: it waits for its timer
                }
                if (j >= holding) {
                    out.add(q.get(j));
                } else {
                    out.addAll(q.subList(0, holding)); // every holder ahead of a non-SHARED holder must go
                }
                need[0] = out.size();
            }
            case SEMAPHORE -> {
                for (int j = 0; j < i; j++) {
                    if (!q.get(j).entry().agreesWith(e.entry())) {
                        return null; // another kind ahead: withdrawn by the engine
                    }
                }
                out.addAll(q.subList(0, i));
                need[0] = i - e.entry().permits() + 1; // fewer than permits ahead: any of them may go
            }
        }
        return out.isEmpty() ? null : out;
    }

    private static boolean damaged(List<MirroredLock.Node> q, int i) {
        long seq = q.get(i).entry().sequence();
        return seq < 0 || seq >= LockQueue.SEQUENCE_LIMIT
                || i > 0 && q.get(i - 1).entry().sequence() == seq
                || i + 1 < q.size() && q.get(i + 1).entry().sequence() == seq;
    }

    /** Holt's reduction: the waiting sessions it cannot free. */
    private static Set<String> reduce(Map<String, List<Request>> bySession, List<Wait> waits) {
        Map<String, List<Wait>> dependents = new HashMap<>();
        Deque<String> freed = new ArrayDeque<>();
        Set<String> free = new java.util.HashSet<>();
        for (Wait w : waits) {
            for (MirroredLock.Node b : w.blockers) {
                String s = b.sessionId();
                if (s == null || !bySession.containsKey(s) || s.equals(w.request.session)) {
                    // Waits for nothing the graph knows, or for its own session's entry (another thread of the
                    // session's client may hold it and let go): it can go.
                    w.freed++;
                } else {
                    dependents.computeIfAbsent(s, k -> new ArrayList<>()).add(w);
                }
            }
        }
        for (Wait w : waits) {
            satisfyIfDone(w, free, freed);
        }
        while (!freed.isEmpty()) {
            String s = freed.poll();
            for (Wait w : dependents.getOrDefault(s, List.of())) {
                w.freed++;
                satisfyIfDone(w, free, freed);
            }
        }
        Set<String> stuck = new TreeSet<>(bySession.keySet());
        stuck.removeAll(free);
        return stuck;
    }

    private static void satisfyIfDone(Wait w, Set<String> free, Deque<String> freed) {
        if (w.freed == w.need) { // once: freed only grows
            Request r = w.request;
            if (--r.unsatisfied == 0 && free.add(r.session)) {
                freed.add(r.session);
            }
        }
    }

    /** The strongly connected components with a cycle among the deadlocked sessions, each as one {@link Found}. */
    private static List<Found> cycles(Set<String> deadlocked, Map<String, List<Request>> bySession) {
        List<String> names = new ArrayList<>(deadlocked);
        Map<String, Integer> ids = new HashMap<>();
        for (String s : names) {
            ids.put(s, ids.size());
        }
        List<List<Integer>> out = new ArrayList<>();
        for (String s : names) {
            List<Integer> to = new ArrayList<>();
            for (Request r : bySession.get(s)) {
                for (Wait w : r.waits) {
                    for (MirroredLock.Node b : w.blockers) {
                        Integer h = b.sessionId() == null ? null : ids.get(b.sessionId());
                        if (h != null && !b.sessionId().equals(s)) {
                            to.add(h);
                        }
                    }
                }
            }
            out.add(to);
        }
        int[] component = tarjan(out);
        Map<Integer, List<String>> groups = new HashMap<>();
        for (int v = 0; v < names.size(); v++) {
            groups.computeIfAbsent(component[v], k -> new ArrayList<>()).add(names.get(v));
        }
        List<Found> found = new ArrayList<>();
        for (List<String> group : groups.values()) {
            if (group.size() > 1) { // no self-edges: a component of more than one session has a cycle
                found.add(found(new TreeSet<>(group), ids, bySession));
            }
        }
        found.sort(Comparator.comparing(f -> f.members().get(0).sessionId()));
        return found;
    }

    private static Found found(Set<String> group, Map<String, Integer> ids, Map<String, List<Request>> bySession) {
        List<Deadlock.Member> members = new ArrayList<>();
        TreeSet<String> checks = new TreeSet<>();
        List<NodeRef> checkRefs = new ArrayList<>();
        Request victim = null;
        long victimToken = Long.MIN_VALUE;
        String victimNode = "";
        for (String s : group) {
            for (Request r : bySession.get(s)) {
                for (Wait w : r.waits) {
                    TreeSet<String> waitsFor = new TreeSet<>();
                    for (MirroredLock.Node b : w.blockers) {
                        if (b.sessionId() != null && group.contains(b.sessionId())) {
                            waitsFor.add(b.sessionId());
                        }
                    }
                    // Every waiting entry of a member session and its blockers that are deadlocked too: if any of
                    // them goes, the cycle may have gone (a session with a request it could get is free).
                    add(checks, checkRefs, w.lock, w.node.entry().node());
                    for (MirroredLock.Node b : w.blockers) {
                        Integer h = b.sessionId() == null ? null : ids.get(b.sessionId());
                        if (h != null) {
                            add(checks, checkRefs, w.lock, b.entry().node()); // a blocker is on its waiter's lock
                        }
                    }
                    if (waitsFor.isEmpty()) {
                        continue;
                    }
                    members.add(new Deadlock.Member(s, r.client, null, r.uuid, w.lock, w.node.entry().mode(), w.node.token(),
                            r.fail ? OnDeadlock.FAIL : OnDeadlock.WAIT, List.copyOf(waitsFor)));
                    if (r.fail && (w.node.token() > victimToken
                            || w.node.token() == victimToken && w.node.entry().node().compareTo(victimNode) > 0)) {
                        victim = r;
                        victimToken = w.node.token();
                        victimNode = w.node.entry().node();
                    }
                }
            }
        }
        members.sort(Comparator.comparing(Deadlock.Member::sessionId).thenComparing(Deadlock.Member::name)
                .thenComparing(Deadlock.Member::request));
        String signature = String.join("\n", checks);
        Victim v = victim == null || checkRefs.size() > MAX_CHECKS ? null : new Victim(victim.session, victim.uuid);
        return new Found(members, checkRefs, signature, v);
    }

    private static void add(TreeSet<String> seen, List<NodeRef> refs, String lock, String node) {
        if (seen.add(lock + "/" + node)) {
            refs.add(new NodeRef(lock, node));
        }
    }

    /** Iterative Tarjan: each node's component number. */
    private static int[] tarjan(List<List<Integer>> out) {
        int n = out.size();
        int[] index = new int[n];
        int[] low = new int[n];
        int[] component = new int[n];
        boolean[] onStack = new boolean[n];
        java.util.Arrays.fill(index, -1);
        Deque<Integer> stack = new ArrayDeque<>();
        Deque<int[]> calls = new ArrayDeque<>();
        int counter = 0;
        int components = 0;
        for (int root = 0; root < n; root++) {
            if (index[root] != -1) {
                continue;
            }
            calls.push(new int[] {root, 0});
            index[root] = low[root] = counter++;
            stack.push(root);
            onStack[root] = true;
            while (!calls.isEmpty()) {
                int[] frame = calls.peek();
                int v = frame[0];
                if (frame[1] < out.get(v).size()) {
                    int w = out.get(v).get(frame[1]++);
                    if (index[w] == -1) {
                        index[w] = low[w] = counter++;
                        stack.push(w);
                        onStack[w] = true;
                        calls.push(new int[] {w, 0});
                    } else if (onStack[w]) {
                        low[v] = Math.min(low[v], index[w]);
                    }
                    continue;
                }
                calls.pop();
                if (low[v] == index[v]) {
                    int w;
                    do {
                        w = stack.pop();
                        onStack[w] = false;
                        component[w] = components;
                    } while (w != v);
                    components++;
                }
                if (!calls.isEmpty()) {
                    int parent = calls.peek()[0];
                    low[parent] = Math.min(low[parent], low[v]);
                }
            }
        }
        return component;
    }
}
