package io.warden.service.watch;

/**
 * Where a resumed watch starts: the revision its client asked for ({@code since_revision}), so that it gets every event
 * after it, or a RESYNC when they are no longer known (docs/api.md): {@link #CONTRACT}, the only rule production code
 * uses. The hub is built with it (a seam, as Caffeine is given its {@code Ticker}) so that the proof suite can build a
 * gateway that resumes watches from now on purpose and show that its watch checker sees the missed events.
 */
@FunctionalInterface
public interface ResumeRule {
    /** The contract's rule: resume where the client asked. */
    ResumeRule CONTRACT = since -> since;

    /** The revision a watch that asked to resume after {@code since} (null: a new watch) resumes after; null: from now. */
    Long resumeAfter(Long since);
}
