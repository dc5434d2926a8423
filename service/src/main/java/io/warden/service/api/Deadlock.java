package io.warden.service.api;

import java.util.List;

/**
 * One deadlock: a cycle of sessions in the wait-for graph, as {@code GET /v1/deadlocks} and a victim's 409 show it.
 *
 * @param members        per member request that waits for another member: its session, client, request, lock, mode
 *                       and whom it waits for; sorted by session, then lock
 * @param sinceRevision  the revision at which this gateway first saw the cycle as it is now
 * @param ageMs          how long this gateway has seen it, as of the reply (0 in a victim's stored outcome)
 */
public record Deadlock(List<Member> members, long sinceRevision, long ageMs) {
    public Deadlock {
        members = List.copyOf(members);
    }

    /**
     * A waiting request in the cycle.
     *
     * @param requestId  the client's request id; null in a victim's stored outcome and where the gateway could not read
     *                   it (the mirror knows a request by its uuid; the id is read from its record when listed)
     * @param request    the request's uuid, the one that names its queue nodes ({@code _c_{uuid}-…})
     * @param token      its queue node's token (czxid plus the floor): larger is younger
     * @param waitsFor   the member sessions it waits for, sorted
     */
    public record Member(String sessionId, String clientId, String requestId, String request, String name, Mode mode,
                         long token, OnDeadlock onDeadlock, List<String> waitsFor) {
        public Member {
            waitsFor = List.copyOf(waitsFor);
        }

        /** The same member, with its client's request id. */
        public Member withRequestId(String id) {
            return new Member(sessionId, clientId, id, request, name, mode, token, onDeadlock, waitsFor);
        }
    }

    /** The same cycle without the age: the outcome stored with its victim. */
    public Deadlock asStored() {
        return new Deadlock(members, sinceRevision, 0);
    }
}
