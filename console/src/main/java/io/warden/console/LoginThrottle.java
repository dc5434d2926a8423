package io.warden.console;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * Limits wrong admin tokens (without it the login form took 818 guesses a second): at most {@link #PER_ADDRESS} failed
 * logins per client address and {@link #GLOBAL} in all within {@link #WINDOW}. Past either, every login (even with
 * the right token, which is then not even checked) is answered 429 with {@code Retry-After} until the oldest counted
 * failure leaves the window. A successful login clears its address's failures.
 *
 * <p>The global limit also stops guessing spread over many addresses; an attacker can use it to keep admins out for
 * as long as the attack lasts (read-only viewing is not affected). Behind a reverse proxy every client has the proxy's
 * address: the per-address limit then acts as a second global one.
 *
 * <p>Times are a monotonic clock's nanoseconds ({@link System#nanoTime} in production), so a step of the wall clock
 * neither keeps failures counting (backwards) nor clears them early (forwards).
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
    private final long windowNanos;
    /** Failure times (monotonic ns) per address, oldest first. Guarded by this. */
    private final Map<String, ArrayDeque<Long>> byAddress = new HashMap<>();
    /** Every counted failure's time (monotonic ns), oldest first. Guarded by this. */
    private final ArrayDeque<Long> all = new ArrayDeque<>();

    LoginThrottle() {
        this(PER_ADDRESS, GLOBAL, WINDOW);
    }

    LoginThrottle(int perAddress, int global, Duration window) {
        this.perAddress = perAddress;
        this.global = global;
        this.windowNanos = window.toNanos();
    }

    /** How long {@code address} must wait before its next login is looked at; empty when it may try now. */
    synchronized Optional<Duration> retryAfter(String address, long now) {
        prune(now);
        ArrayDeque<Long> mine = byAddress.get(address);
        Long until = null;
        if (mine != null && mine.size() >= perAddress) {
            until = mine.peekFirst() + windowNanos;
        }
        if (all.size() >= global) {
            long globalUntil = all.peekFirst() + windowNanos;
            until = until == null || globalUntil - until > 0 ? globalUntil : until;
        }
        return until == null ? Optional.empty() : Optional.of(Duration.ofNanos(until - now));
    }

    synchronized void failed(String address, long now) {
        prune(now);
        byAddress.computeIfAbsent(address, a -> new ArrayDeque<>()).addLast(now);
        all.addLast(now);
    }

    synchronized void succeeded(String address) {
        byAddress.remove(address); // its failures still count toward the global limit
    }

    /** Addresses with failures inside the window (tests). */
    synchronized int addresses(long now) {
        prune(now);
        return byAddress.size();
    }

    /** Drops failures at least a window old (compared by difference: nanoTime values may be negative or wrap). */
    private void prune(long now) {
        while (!all.isEmpty() && now - all.peekFirst() >= windowNanos) {
            all.removeFirst();
        }
        for (Iterator<ArrayDeque<Long>> it = byAddress.values().iterator(); it.hasNext(); ) {
            ArrayDeque<Long> q = it.next();
            while (!q.isEmpty() && now - q.peekFirst() >= windowNanos) {
                q.removeFirst();
            }
            if (q.isEmpty()) {
                it.remove();
            }
        }
    }
}
