package io.warden.console.view;

import io.warden.console.model.Mode;
import io.warden.console.model.WaitFor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The wait-for page's picture of the gateway's graph ({@link WaitFor}): which entry blocks which and what is a deadlock
 * are the gateway's (the computation behind {@code GET /v1/deadlocks}); this adds what helps a person read it — its
 * wait chains and the sessions at the end of them. An edge W→B: a waiting entry of session W is blocked by an entry of
 * session B, which holds or is queued ahead of it.
 *
 * <p>Chains walk the strongly connected components (Tarjan, iterative so that long chains cannot overflow the stack);
 * a component with a member of a deadlock is where a chain ends in one. A component with a cycle of edges that is no
 * deadlock (a semaphore waiter that a free holder can let in) is walked like any other.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param edges     the gateway's edges (at most what it keeps), sorted by waiter client id, waiter, lock, blocker
 * @param edgeCount how many edges the graph has in all
 * @param cycles    the deadlocks, largest first
 * @param chains    one per session that nobody waits on and that waits (transitively) through at least two edges:
 *                  the longest way from it, following at each step the blocker that waits longest in turn
 * @param blockers  the sessions that wait for nothing but that others wait for, most (transitive) waiters first
 */
public record WaitForGraph(List<Edge> edges, int edgeCount, List<Cycle> cycles, List<Chain> chains, List<Blocker> blockers) {
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

    /** W waits (in {@code waiterMode}) on {@code lock}, blocked by B's entry ({@code blockerMode}, {@code blockerToken}). */
    public record Edge(String waiter, String waiterClient, String blocker, String blockerClient, String lock,
                       Mode waiterMode, Mode blockerMode, long blockerToken, boolean blockerHolds) {
    }

    /**
     * A deadlock as the gateway found it.
     *
     * @param members  its waiting requests, each with whom it waits for and whether it said FAIL
     * @param sessions its sessions, sorted
     */
    public record Cycle(List<WaitFor.Member> members, List<String> sessions, long sinceRevision, long ageMs) {
        /** Whether a member said FAIL: then the gateway removes one of them (the youngest) and the rest go on. */
        public boolean breakable() {
            return members.stream().anyMatch(WaitFor.Member::fail);
        }
    }

    /**
     * A wait chain.
     *
     * @param endsInDeadlock whether its last blocker belongs to a deadlock
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

    public static WaitForGraph of(WaitFor graph) {
        List<Edge> edges = new ArrayList<>(graph.edges().size());
        for (WaitFor.Edge e : graph.edges()) {
            edges.add(new Edge(e.waiter(), e.waiterClient(), e.blocker(), e.blockerClient(), e.lock(), e.waiterMode(),
                    e.blockerMode(), e.blockerToken(), e.blockerHolds()));
        }
        edges.sort(Comparator.comparing(Edge::waiterClient).thenComparing(Edge::waiter)
                .thenComparing(Edge::lock).thenComparing(Edge::blocker));
        List<Cycle> cycles = new ArrayList<>();
        Set<String> deadlocked = new HashSet<>();
        for (WaitFor.Cycle c : graph.cycles()) {
            List<String> sessions = c.members().stream().map(WaitFor.Member::sessionId).distinct().sorted().toList();
            deadlocked.addAll(sessions);
            cycles.add(new Cycle(c.members(), sessions, c.sinceRevision(), c.ageMs()));
        }
        cycles.sort(Comparator.comparing((Cycle cy) -> -cy.sessions().size()).thenComparing(cy -> cy.sessions().get(0)));
        return new Analysis(edges, deadlocked).result(graph.edgeCount(), cycles);
    }

    /** Whether any deadlock was found. */
    public boolean deadlocked() {
        return !cycles.isEmpty();
    }

    /** The graph's nodes numbered, its strongly connected components, and what follows from them. */
    private static final class Analysis {
        private final List<Edge> edges;
        private final Set<String> deadlocked;
        private final Map<String, Integer> ids = new HashMap<>();
        private final List<String> names = new ArrayList<>();
        private final Map<String, String> clients = new HashMap<>();
        private final List<List<Edge>> out = new ArrayList<>();
        private final List<List<Integer>> in = new ArrayList<>();
        private int[] component;          // node -> component number (in Tarjan's emission order: sinks first)
        private final List<List<Integer>> components = new ArrayList<>();
        private boolean[] cyclic;         // component -> it has a member of a deadlock

        Analysis(List<Edge> edges, Set<String> deadlocked) {
            this.edges = edges;
            this.deadlocked = deadlocked;
            for (Edge e : edges) {
                int w = node(e.waiter(), e.waiterClient());
                int h = node(e.blocker(), e.blockerClient());
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

        WaitForGraph result(int edgeCount, List<Cycle> cycles) {
            tarjan();
            int[] depth = depths();
            return new WaitForGraph(edges, edgeCount, cycles, chains(depth), blockers(depth));
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
                        int w = ids.get(out.get(v).get(frame[1]++).blocker());
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
                for (int v : components.get(c)) {
                    cyclic[c] |= deadlocked.contains(names.get(v));
                }
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
                for (int v : components.get(c)) {
                    for (Edge e : out.get(v)) {
                        if (component[ids.get(e.blocker())] == c) {
                            continue; // within a component that is no deadlock (a semaphore's way out): not a step
                        }
                        int d = depth[component[ids.get(e.blocker())]];
                        best = d == INFINITE || best == INFINITE ? INFINITE : Math.max(best, d + 1);
                    }
                }
                depth[c] = best;
            }
            return depth;
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
                        if (component[ids.get(e.blocker())] == component[u] && !cyclic[component[u]]) {
                            continue;
                        }
                        int hd = depth[component[ids.get(e.blocker())]];
                        if (hd > nextDepth) {
                            next = e;
                            nextDepth = hd;
                        }
                    }
                    if (next == null) {
                        break;
                    }
                    path.add(next);
                    u = ids.get(next.blocker());
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
