package io.warden.service.session;

/**
 * How long after the keepalive that renews it a tracked session's TTL runs out: its whole TTL, as guarantee 3 of
 * docs/guarantees.md fixes it (expiry is never early): {@link #CONTRACT}, the only rule production code uses. The
 * session tracker is built with it (a seam, as Caffeine is given its {@code Ticker}) so that the proof suite can build
 * a gateway that expires sessions early on purpose and show that its expiry checker sees it.
 */
@FunctionalInterface
public interface ExpiryRule {
    /** The contract's rule: a session lives its whole TTL after a keepalive. */
    ExpiryRule CONTRACT = ttlMs -> java.time.Duration.ofMillis(ttlMs).toNanos();

    /** Nanoseconds from a keepalive until a session with a TTL of {@code ttlMs} runs out. */
    long nanosAfterKeepalive(long ttlMs);
}
