package io.warden.it.jepsen;

import java.util.concurrent.TimeUnit;

/**
 * One call of the two-cell workload ({@link CellWorkload}) as its client saw it: one HTTP attempt to one gateway (no
 * retry hides a 503), or, for {@link Kind#INCREMENT}, one fenced increment of the lock's counter under a hold.
 *
 * @param id        index in the history, from 0
 * @param client    the client thread (its name says its role: {@code web-1}, {@code pay-2}, {@code span-1})
 * @param role      which cells the client's sessions use
 * @param kind      what it did
 * @param gateway   the gateway it asked (0-based; -1 for an increment, which asks no gateway)
 * @param session   the session it used (for an open: the session it was given, if any)
 * @param lock      the lock name, for acquires, increments and releases
 * @param requestId an acquire's {@code request_id} (a retry after an answer that did not decide keeps it)
 * @param token     a grant's token; the token a release or increment used
 * @param outcome   what it was told
 * @param status    the HTTP status (0: no answer, or an increment)
 * @param detail    the problem code or a short reason, when not OK
 * @param call      {@code System.nanoTime()} when it was sent
 * @param ret       {@code System.nanoTime()} when the answer came (or the attempt gave up)
 * @param waitMs    an acquire's {@code wait_ms}
 */
record CellOp(int id, String client, Role role, Kind kind, int gateway, String session, String lock, String requestId,
              long token, Outcome outcome, int status, String detail, long call, long ret, long waitMs) {

    /** Which cells a client's sessions use: {@link #WEB} cell A only, {@link #PAY} cell B only, {@link #SPAN} both. */
    enum Role { WEB, PAY, SPAN }

    enum Kind { OPEN, KEEPALIVE, ACQUIRE, INCREMENT, RELEASE }

    /**
     * {@link #OK}: what the call asks for (a session, a keepalive acknowledged, a grant, {@code released: true}, an
     * increment accepted by the fence); {@link #TIMED_OUT}: an acquire not granted within its wait;
     * {@link #NOT_RELEASED}: {@code released: false}; {@link #FENCED}: the counter refused the holder's token;
     * {@link #UNAVAILABLE}: 503; {@link #SESSION_GONE}: 404 {@code SESSION_NOT_FOUND}; {@link #ERROR}: any other status;
     * {@link #NO_ANSWER}: no reply within the call's timeout, or the connection failed.
     */
    enum Outcome { OK, TIMED_OUT, NOT_RELEASED, FENCED, UNAVAILABLE, SESSION_GONE, ERROR, NO_ANSWER }

    long millis() {
        return TimeUnit.NANOSECONDS.toMillis(ret - call);
    }

    /** The namespace of the lock ({@code web} or {@code pay}); null for a session's calls. */
    String namespace() {
        return lock == null ? null : lock.substring(0, lock.indexOf('/'));
    }

    /** One line for a report; times in seconds from {@code start}. */
    String describe(long start) {
        return String.format("#%d %.2f-%.2f s %s %s%s%s on gw%d -> %s%s%s (%d ms)%s", id, (call - start) / 1e9,
                (ret - start) / 1e9, client, kind, lock == null ? "" : " " + lock,
                token > 0 ? " token " + token : "", gateway + 1, outcome, status > 0 ? " " + status : "",
                detail == null || detail.isEmpty() ? "" : " " + detail, millis(),
                session == null ? "" : " session " + session);
    }
}
