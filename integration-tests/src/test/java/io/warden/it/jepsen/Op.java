package io.warden.it.jepsen;

/**
 * One operation of a history, as a client saw it: what it asked ({@link #kind}, {@link #key}, {@link #session},
 * for a release its {@link #token}), what it was told ({@link #outcome}; a grant's token in {@link #token}), and when:
 * {@link #call} when it was sent, {@link #ret} when the answer came, both in {@code System.nanoTime()} of this machine
 * (CLOCK_MONOTONIC: one clock for every process on the host). An operation whose answer never came (a timeout, a
 * connection cut mid-call) has outcome {@link Outcome#UNKNOWN}: it may or may not
 * have taken effect, at any moment after its call and before its {@code ret} — {@link #NEVER} (the end of time), or
 * the moment its session was seen gone (nothing of a session takes effect after it ended).
 *
 * <p>{@link Kind#END} is a session's end (closed by its client, or expired): {@code call} is the earliest moment it
 * may legally happen (a close: when it was sent; an expiry: the send time of the last acknowledged keepalive plus the
 * TTL), {@code ret} when it was observed (the close's reply, the EXPIRED event, a 404 for the session).
 *
 * @param id      index in its history, from 0
 * @param process who ran it (a client thread; for the end of a session, the session)
 * @param key     the lock name
 * @param mode    an acquire's mode, {@code EXCLUSIVE} or {@code SHARED} ({@code EXCLUSIVE} for other operations)
 */
public record Op(int id, String process, String key, Kind kind, String session, long token, Outcome outcome,
                 long call, long ret, String mode) {
    public static final long NEVER = Long.MAX_VALUE;

    /** An operation of an EXCLUSIVE lock. */
    public Op(int id, String process, String key, Kind kind, String session, long token, Outcome outcome, long call,
              long ret) {
        this(id, process, key, kind, session, token, outcome, call, ret, "EXCLUSIVE");
    }

    public boolean shared() {
        return "SHARED".equals(mode);
    }

    public enum Kind { ACQUIRE, RELEASE, END }

    /**
     * What the caller was told. GRANTED, NOT_GRANTED, REFUSED and DEADLOCK are for acquires (REFUSED: a try-lock,
     * {@code wait_ms} 0, answered TIMED_OUT by a gateway, which it may be only while another request holds or waits for
     * the lock; DEADLOCK: answered 409 DEADLOCK, its request removed as the victim of a cycle, so it never held),
     * RELEASED and NOT_RELEASED for releases.
     */
    public enum Outcome { GRANTED, NOT_GRANTED, REFUSED, DEADLOCK, RELEASED, NOT_RELEASED, ENDED, UNKNOWN }

    public Op {
        mode = mode == null ? "EXCLUSIVE" : mode;
        if (ret < call) {
            throw new IllegalArgumentException("operation " + id + " returns (" + ret + ") before its call (" + call + ")");
        }
    }

    @Override
    public String toString() {
        String what = switch (kind) {
            case ACQUIRE -> (shared() ? "shared " : "") + "acquire by " + session + " -> " + outcome + (outcome == Outcome.GRANTED ? " " + token : "");
            case RELEASE -> "release " + token + " by " + session + " -> " + outcome;
            case END -> "end of session " + session;
        };
        return "#" + id + " " + key + ": " + what + " [" + call + ", " + (ret == NEVER ? "never" : ret) + "] (" + process + ")";
    }
}
