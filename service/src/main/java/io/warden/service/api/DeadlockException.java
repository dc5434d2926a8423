package io.warden.service.api;

/** The answer to a request chosen as the victim of a deadlock (409 {@code DEADLOCK}); {@link #cycle()} is the cycle. */
public final class DeadlockException extends WardenException {
    private final Deadlock cycle;

    public DeadlockException(Deadlock cycle) {
        super(ErrorCode.DEADLOCK, "this request was chosen to break a deadlock of " + sessions(cycle)
                + " sessions (it said on_deadlock: FAIL) and was removed from its queue; its session keeps its holds");
        this.cycle = cycle;
    }

    private static long sessions(Deadlock cycle) {
        return cycle.members().stream().map(Deadlock.Member::sessionId).distinct().count();
    }

    public Deadlock cycle() {
        return cycle;
    }
}
