package io.warden.service;

import io.warden.service.lock.GrantRules;
import io.warden.service.session.ExpiryRule;
import io.warden.service.watch.ResumeRule;

/**
 * The contract's rules a gateway's engine, session tracker and watch hub are built with ({@link #CONTRACT}): seams, as
 * Caffeine is given its {@code Ticker}, through which the proof suite builds gateways that break one rule on purpose
 * (a checker never seen to fail proves nothing). {@link Gateway#start(io.warden.service.config.WardenConfig)} and
 * {@link Main} always use {@link #CONTRACT}.
 *
 * @param grants how locks are granted, tokens named and waiters woken
 * @param expiry when a session's TTL runs out
 * @param resume where a resumed watch starts
 * @param moves  how a move keeps tokens growing
 */
public record Rules(GrantRules grants, ExpiryRule expiry, ResumeRule resume, MoveRule moves) {
    public static final Rules CONTRACT = new Rules(GrantRules.CONTRACT, ExpiryRule.CONTRACT, ResumeRule.CONTRACT,
            MoveRule.CONTRACT);

    public Rules {
        java.util.Objects.requireNonNull(grants, "grants");
        java.util.Objects.requireNonNull(expiry, "expiry");
        java.util.Objects.requireNonNull(resume, "resume");
        java.util.Objects.requireNonNull(moves, "moves");
    }

    /** The contract's moves with the other rules given. */
    public Rules(GrantRules grants, ExpiryRule expiry, ResumeRule resume) {
        this(grants, expiry, resume, MoveRule.CONTRACT);
    }
}
