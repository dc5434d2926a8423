package io.warden.console.model;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The gateway's wait-for graph as its watch mirror shows it: the gateway decides which entry blocks which and what is a
 * deadlock (the computation behind {@code GET /v1/deadlocks}); the console only draws it.
 *
 * @param computedAt when the gateway computed it
 * @param revision   the revision it reflects
 * @param stale      whether the gateway's mirror is being rebuilt (the graph may be out of date)
 * @param edges      the edges the gateway keeps (the deadlocks' first), at most a few thousand
 * @param edgeCount  how many edges the graph has in all
 * @param cycles     the deadlocks
 */
public record WaitFor(Instant computedAt, long revision, boolean stale, List<Edge> edges, int edgeCount, List<Cycle> cycles) {
    public WaitFor {
        Objects.requireNonNull(computedAt, "computedAt");
        edges = List.copyOf(edges);
        cycles = List.copyOf(cycles);
    }

    /**
     * A waiting entry of session {@code waiter} on {@code lock} is blocked by an entry of session {@code blocker}, which
     * holds ({@code blockerHolds}) or is queued ahead of it.
     */
    public record Edge(String waiter, String waiterClient, String lock, Mode waiterMode, String blocker,
                       String blockerClient, Mode blockerMode, long blockerToken, boolean blockerHolds) {
    }

    /**
     * A deadlock: its member requests (each waiting request of a member session that waits for other members), the
     * revision at which the gateway first saw it as it is, and how long it has seen it.
     */
    public record Cycle(List<Member> members, long sinceRevision, long ageMs) {
        public Cycle {
            members = List.copyOf(members);
        }
    }

    /**
     * A waiting request in a deadlock.
     *
     * @param requestId the client's request id, or null where the gateway does not know it
     * @param request   the request's uuid (what names its queue nodes)
     * @param fail      whether it said {@code on_deadlock: FAIL} (it may be the victim)
     * @param waitsFor  the member sessions it waits for
     */
    public record Member(String sessionId, String clientId, String requestId, String request, String lock, Mode mode,
                         boolean fail, List<String> waitsFor) {
        public Member {
            waitsFor = List.copyOf(waitsFor);
        }
    }
}
