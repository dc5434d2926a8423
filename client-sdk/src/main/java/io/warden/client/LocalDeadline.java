package io.warden.client;

/**
 * The client's own bound on its session's life (pure arithmetic, on the client's ticker in nanoseconds).
 *
 * <p>The service expires a session no earlier than its TTL after it <em>accepted</em> the last keepalive (guarantee 3
 * of docs/guarantees.md). The client cannot know when that was, only that it was after the keepalive was <em>sent</em>;
 * so it counts from the send time. Clocks drift: the service's monotonic clock may run faster than the client's, so the
 * client takes off a margin of {@value #DRIFT_PPM} ppm of the TTL (a generous bound for quartz clocks) plus a fixed
 * safety margin for scheduling hiccups. Until the deadline the session cannot have expired; after it, it may have.
 */
final class LocalDeadline {
    /** Assumed worst relative rate difference of the two clocks, in parts per million. */
    static final long DRIFT_PPM = 500;

    private LocalDeadline() {
    }

    /** The margin to take off a TTL: {@value #DRIFT_PPM} ppm of it, rounded up, plus {@code safetyNanos}. */
    static long marginNanos(long ttlNanos, long safetyNanos) {
        return (ttlNanos * DRIFT_PPM + 999_999) / 1_000_000 + safetyNanos;
    }

    /**
     * The deadline after a keepalive sent at {@code sentNanos} was acknowledged with {@code remainingNanos} to live
     * (at most the TTL): {@code sent + remaining - margin}, never before {@code sent}.
     */
    static long after(long sentNanos, long remainingNanos, long marginNanos) {
        return sentNanos + Math.max(0, remainingNanos - marginNanos);
    }
}
