package io.warden.console.view;

import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import io.warden.console.model.QueuedRequest;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Who waits for whom: an edge W→H for every session W that waits on a lock that session H holds (to every holder of
 * that lock, whatever the modes, with both modes on the edge), its wait chains, the sessions at the end of them,
 * and its cycles. A cycle is a deadlock: none of its sessions can proceed until one of them gives up or expires.
 * A session waiting on a lock it holds itself (an upgrade from SHARED to EXCLUSIVE) is a cycle of one edge.
 *
 * <p>Cycles are found as the strongly connected components (Tarjan, iterative so that long chains cannot overflow
 * the stack) that have more than one session or a self-edge; each is shown by one shortest cycle through its
 * smallest session id plus all its members.
 *
 * <p>Direct-mode queue nodes (no Warden session) take no part: they can neither be named nor expired here.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param edges    sorted by waiter client id, waiter, lock, holder
 * @param cycles   the deadlocks, largest first
 * @param chains   one per session that nobody waits on and that waits (transitively) through at least two edges:
 *                 the longest way from it, following at each step the holder that waits longest in turn
 * @param blockers the sessions that wait for nothing but that others wait for, most (transitive) waiters first
 */
public record WaitForGraph(List<Edge> edges, List<Cycle> cycles, List<Chain> chains, List<Blocker> blockers) {
    /** A chain deeper than this is cut (and shown as cut); it keeps pages of pathological graphs small. */
    static final int MAX_CHAIN = 50;
    static final int MAX_BLOCKERS = 20;
    private static final int INFINITE = Integer.MAX_VALUE;

    public WaitForGraph {
        edges = List.copyOf(edges);
        cycles = List.copyOf(cycles);
        chains = List.copyOf(chains);
        blockers = List.copyOf(blockers);
    }

    /**
     * W waits (in {@code waiterMode}, since {@code waitingSince}) for {@code lock}, which H holds in
     * {@code holderMode} with {@code holderToken}.
     */
    public record Edge(String waiter, String waiterClient, String holder, String holderClient, String lock,
                       Mode waiterMode, Mode holderMode, long holderToken, Instant waitingSince) {
    }

    /**
     * A deadlock.
     *
     * @param edges   one cycle, in order: each edge's holder is the next edge's waiter, the last leads to the first
     * @param members every session of the strongly connected component, sorted (may be more than the cycle shows)
     */
    public record Cycle(List<Edge> edges, List<String> members) {
    }

    /**
     * A wait chain.
     *
     * @param endsInDeadlock whether its last holder belongs to a cycle
     * @param cut            whether it was longer than {@value WaitForGraph#MAX_CHAIN} edges and cut there
     */
    public record Chain(List<Edge> edges, boolean endsInDeadlock, boolean cut) {
    }

    /**
     * @param direct sessions waiting on it directly
     * @param total  sessions waiting on it directly or through others
     */
    public record Blocker(String sessionId, String clientId, int direct, int total) {
    }

    public static WaitForGraph of(Collection<LockState> locks) {
        List<Edge> edges = new ArrayList<>();
        for (LockState lock : locks) {
            List<QueuedRequest> holders = lock.holders().stream().filter(h -> h.sessionId() != null).toList();
            for (QueuedRequest w : lock.waiters()) {
                if (w.sessionId() == null) {
                    continue;
                }
                for (QueuedRequest h : holders) {
                    edges.add(new Edge(w.sessionId(), w.clientId(), h.sessionId(), h.clientId(), lock.name(),
                            w.mode(), h.mode(), h.token(), w.requestedAt()));
                }
            }
        }
        edges.sort(Comparator.comparing(Edge::waiterClient).thenComparing(Edge::waiter)
                .thenComparing(Edge::lock).thenComparing(Edge::holder));
        return new Analysis(edges).result();
    }

    /** Whether any deadlock was found. */
    public boolean deadlocked() {
        return !cycles.isEmpty();
    }

    /** The graph's nodes numbered, its strongly connected components, and what follows from them. */
    private static final class Analysis {
        private final List<Edge> edges;
        private final Map<String, Integer> ids = new HashMap<>();
        private final List<String> names = new ArrayList<>();
        private final Map<String, String> clients = new HashMap<>();
        private final List<List<Edge>> out = new ArrayList<>();
        private final List<List<Integer>> in = new ArrayList<>();
        private int[] component;          // node -> component number (in Tarjan's emission order: sinks first)
        private final List<List<Integer>> components = new ArrayList<>();
        private boolean[] cyclic;         // component -> it is a deadlock

        Analysis(List<Edge> edges) {
            this.edges = edges;
            for (Edge e : edges) {
                int w = node(e.waiter(), e.waiterClient());
                int h = node(e.holder(), e.holderClient());
                out.get(w).add(e);
                in.get(h).add(w);
            }
        }

        private int node(String session, String client) {
            Integer id = ids.get(session);
            if (id == null) {
                id = names.size();
                ids.put(session, id);
                names.add(session);
                clients.put(session, client);
                out.add(new ArrayList<>());
                in.add(new ArrayList<>());
            }
            return id;
        }

        WaitForGraph result() {
            tarjan();
            int[] depth = depths();
            return new WaitForGraph(edges, cycles(), chains(depth), blockers(depth));
        }

        /** Iterative Tarjan: fills {@link #component}, {@link #components} (sinks first) and {@link #cyclic}. */
        private void tarjan() {
            int n = names.size();
            int[] index = new int[n];
            int[] low = new int[n];
            boolean[] onStack = new boolean[n];
            java.util.Arrays.fill(index, -1);
            component = new int[n];
            Deque<Integer> stack = new ArrayDeque<>();
            Deque<int[]> calls = new ArrayDeque<>(); // {node, next edge to look at}
            int counter = 0;
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
                        int w = ids.get(out.get(v).get(frame[1]++).holder());
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
                        List<Integer> members = new ArrayList<>();
                        int w;
                        do {
                            w = stack.pop();
                            onStack[w] = false;
                            component[w] = components.size();
                            members.add(w);
                        } while (w != v);
                        components.add(members);
                    }
                    if (!calls.isEmpty()) {
                        int parent = calls.peek()[0];
                        low[parent] = Math.min(low[parent], low[v]);
                    }
                }
            }
            cyclic = new boolean[components.size()];
            for (int c = 0; c < components.size(); c++) {
                List<Integer> members = components.get(c);
                int only = members.get(0);
                cyclic[c] = members.size() > 1
                        || out.get(only).stream().anyMatch(e -> e.holder().equals(names.get(only)));
            }
        }

        /** Per component: the longest way to a session that waits for nothing, or INFINITE into a deadlock. */
        private int[] depths() {
            int[] depth = new int[components.size()];
            for (int c = 0; c < components.size(); c++) { // sinks first: successors are done before their waiters
                if (cyclic[c]) {
                    depth[c] = INFINITE;
                    continue;
                }
                int best = 0;
                for (Edge e : out.get(components.get(c).get(0))) {
                    int d = depth[component[ids.get(e.holder())]];
                    if (d == INFINITE) {
                        best = INFINITE;
                        break;
                    }
                    best = Math.max(best, d + 1);
                }
                depth[c] = best;
            }
            return depth;
        }

        private List<Cycle> cycles() {
            List<Cycle> cycles = new ArrayList<>();
            for (int c = 0; c < components.size(); c++) {
                if (!cyclic[c]) {
                    continue;
                }
                Set<Integer> members = new HashSet<>(components.get(c));
                int start = members.stream().min(Comparator.comparing(names::get)).orElseThrow();
                List<String> sorted = members.stream().map(names::get).sorted().toList();
                cycles.add(new Cycle(shortestCycle(start, members), sorted));
            }
            cycles.sort(Comparator.comparing((Cycle cy) -> -cy.members().size())
                    .thenComparing(cy -> cy.members().get(0)));
            return cycles;
        }

        /** Breadth-first within the component from {@code start} back to it. */
        private List<Edge> shortestCycle(int start, Set<Integer> members) {
            Map<Integer, Edge> via = new HashMap<>();
            Deque<Integer> queue = new ArrayDeque<>();
            queue.add(start);
            while (!queue.isEmpty()) {
                int v = queue.poll();
                for (Edge e : out.get(v)) {
                    int w = ids.get(e.holder());
                    if (w == start) {
                        List<Edge> path = new ArrayList<>();
                        path.add(e);
                        for (int u = v; u != start; u = ids.get(via.get(u).waiter())) {
                            path.add(via.get(u));
                        }
                        java.util.Collections.reverse(path);
                        return path;
                    }
                    if (members.contains(w) && !via.containsKey(w)) {
                        via.put(w, e);
                        queue.add(w);
                    }
                }
            }
            throw new IllegalStateException("no cycle through " + names.get(start) + " in its own component");
        }

        private List<Chain> chains(int[] depth) {
            List<Chain> chains = new ArrayList<>();
            for (int v = 0; v < names.size(); v++) {
                int d = depth[component[v]];
                if (!in.get(v).isEmpty() || out.get(v).isEmpty() || d < 2) {
                    continue; // only from sessions nobody waits on, and only chains of two edges or more
                }
                List<Edge> path = new ArrayList<>();
                int u = v;
                boolean deadlock = false;
                while (depth[component[u]] > 0 && path.size() < MAX_CHAIN) {
                    if (cyclic[component[u]]) {
                        deadlock = true;
                        break;
                    }
                    Edge next = null;
                    int nextDepth = -1;
                    for (Edge e : out.get(u)) {
                        int hd = depth[component[ids.get(e.holder())]];
                        if (hd > nextDepth) {
                            next = e;
                            nextDepth = hd;
                        }
                    }
                    path.add(next);
                    u = ids.get(next.holder());
                }
                deadlock |= cyclic[component[u]];
                boolean cut = !deadlock && depth[component[u]] > 0;
                chains.add(new Chain(path, deadlock, cut));
            }
            chains.sort(Comparator.comparing((Chain ch) -> -ch.edges().size())
                    .thenComparing(ch -> ch.edges().get(0).waiter()));
            return chains;
        }

        private List<Blocker> blockers(int[] depth) {
            List<Blocker> blockers = new ArrayList<>();
            for (int v = 0; v < names.size(); v++) {
                if (depth[component[v]] != 0 || in.get(v).isEmpty()) {
                    continue;
                }
                Set<Integer> seen = new HashSet<>();
                Deque<Integer> queue = new ArrayDeque<>(in.get(v));
                while (!queue.isEmpty()) {
                    int w = queue.poll();
                    if (seen.add(w)) {
                        queue.addAll(in.get(w));
                    }
                }
                int direct = new HashSet<>(in.get(v)).size();
                blockers.add(new Blocker(names.get(v), clients.get(names.get(v)), direct, seen.size()));
            }
            blockers.sort(Comparator.comparing((Blocker b) -> -b.total()).thenComparing(Blocker::sessionId));
            return blockers.size() > MAX_BLOCKERS ? blockers.subList(0, MAX_BLOCKERS) : blockers;
        }
    }
}
