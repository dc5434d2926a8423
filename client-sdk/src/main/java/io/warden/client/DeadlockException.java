package io.warden.client;

import java.util.ArrayList;
import java.util.List;

/**
 * An acquire that said {@code on_deadlock: FAIL} ({@link FencedLock#failingOnDeadlock}) was chosen to break a deadlock
 * (409 {@code DEADLOCK}): its request was removed from the lock's queue, and its session keeps every hold it has. The
 * other members go on once one of them is granted. Repeating the same acquire gives the same answer; a new acquire is a
 * new request (and may deadlock again: take locks in one order to avoid it).
 */
public final class DeadlockException extends WardenClientException {
    private static final long serialVersionUID = 1L;

    private final List<Member> cycle;
    private final long sinceRevision;

    /**
     * A waiting request in the deadlock: its session, client, lock and mode, whom (which sessions) it waits for, and
     * whether it said FAIL. {@code request} is the request's uuid (what names its queue nodes); {@code requestId} the
     * client's request id where the gateway gave it (null otherwise).
     */
    public record Member(String sessionId, String clientId, String requestId, String request, String name, LockMode mode,
                         boolean fail, List<String> waitsFor) {
        public Member {
            waitsFor = waitsFor == null ? List.of() : List.copyOf(waitsFor);
        }
    }

    DeadlockException(String message, int status, Wire.Cycle cycle) {
        super(message, Failures.DEADLOCK, status, null);
        List<Member> members = new ArrayList<>();
        if (cycle != null && cycle.members() != null) {
            for (Wire.Member m : cycle.members()) {
                members.add(new Member(m.sessionId(), m.clientId(), m.requestId(), m.request(), m.name(), m.mode(),
                        "FAIL".equals(m.onDeadlock()), m.waitsFor()));
            }
        }
        this.cycle = List.copyOf(members);
        this.sinceRevision = cycle == null ? 0 : cycle.sinceRevision();
    }

    /** The deadlock's member requests, as the gateway that broke it saw them. */
    public List<Member> cycle() {
        return cycle;
    }

    /** The revision at which the breaking gateway first saw the cycle as it was. */
    public long sinceRevision() {
        return sinceRevision;
    }
}
