package io.warden.console;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * Limits wrong admin tokens (issue 12: the login form took 818 guesses a second): at most {@link #PER_ADDRESS} failed
 * logins per client address and {@link #GLOBAL} in all within {@link #WINDOW}. Past either, every login (even with
 * the right token, which is then not even checked) is answered 429 with {@code Retry-After} until the oldest counted
 * failure leaves the window. A successful login clears its address's failures.
 *
 * <p>The global limit also stops guessing spread over many addresses; an attacker can use it to keep admins out for
 * as long as the attack lasts (read-only viewing is not affected). Behind a reverse proxy every client has the proxy's
 * address: the per-address limit then acts as a second global one.
 *
 * <p>Memory: failures older than the window are dropped on every call, and at most {@code global} failures are ever
 * counted within a window, so at most that many addresses are kept.
 *
 * <p>Concurrency: every method is synchronized on this; the work under the lock is a few deque operations.
 */
final class LoginThrottle {
    static final int PER_ADDRESS = 5;
    static final int GLOBAL = 100;
    static final Duration WINDOW = Duration.ofMinutes(1);

    private final int perAddress;
    private final int global;
    private final Duration window;
    /** Failure times per address, oldest first. Guarded by this. */
    private final Map<String, ArrayDeque<Instant>> byAddress = new HashMap<>();
    /** Every counted failure's time, oldest first. Guarded by this. */
    private final ArrayDeque<Instant> all = new ArrayDeque<>();

    LoginThrottle() {
        this(PER_ADDRESS, GLOBAL, WINDOW);
    }

    LoginThrottle(int perAddress, int global, Duration window) {
        this.perAddress = perAddress;
        this.global = global;
        this.window = window;
    }

    /** How long {@code address} must wait before its next login is looked at; empty when it may try now. */
    synchronized Optional<Duration> retryAfter(String address, Instant now) {
        prune(now);
        ArrayDeque<Instant> mine = byAddress.get(address);
        Instant until = null;
        if (mine != null && mine.size() >= perAddress) {
            until = mine.peekFirst().plus(window);
        }
        if (all.size() >= global) {
            Instant globalUntil = all.peekFirst().plus(window);
            until = until == null || globalUntil.isAfter(until) ? globalUntil : until;
        }
        return until == null ? Optional.empty() : Optional.of(Duration.between(now, until));
    }

    synchronized void failed(String address, Instant now) {
        prune(now);
        byAddress.computeIfAbsent(address, a -> new ArrayDeque<>()).addLast(now);
        all.addLast(now);
    }

    synchronized void succeeded(String address) {
        byAddress.remove(address); // its failures still count toward the global limit
    }

    /** Addresses with failures inside the window (tests). */
    synchronized int addresses(Instant now) {
        prune(now);
        return byAddress.size();
    }

    private void prune(Instant now) {
        Instant cutoff = now.minus(window);
        while (!all.isEmpty() && !all.peekFirst().isAfter(cutoff)) {
            all.removeFirst();
        }
        for (Iterator<ArrayDeque<Instant>> it = byAddress.values().iterator(); it.hasNext(); ) {
            ArrayDeque<Instant> q = it.next();
            while (!q.isEmpty() && !q.peekFirst().isAfter(cutoff)) {
                q.removeFirst();
            }
            if (q.isEmpty()) {
                it.remove();
            }
        }
    }
}
