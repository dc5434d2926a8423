package io.warden.service.http;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * WARN lines of one kind, at most {@code perSecond} a second: a client that fails authentication in a loop must not
 * fill the disk. The first line after a quiet spell says how many were left out.
 *
 * <p>Thread-safety: a second's window and its count are atomics; a race at a window's edge may let a line or two more
 * through, never fewer.
 */
final class RateLimitedLog {
    private final Logger log;
    private final int perSecond;
    private final AtomicLong window = new AtomicLong();
    private final AtomicLong inWindow = new AtomicLong();
    private final AtomicLong suppressed = new AtomicLong();

    RateLimitedLog(Logger log, int perSecond) {
        this.log = log;
        this.perSecond = perSecond;
    }

    void warn(String format, Object... args) {
        if (!log.isWarnEnabled()) {
            return;
        }
        long second = System.nanoTime() / 1_000_000_000L;
        long w = window.get();
        if (w != second && window.compareAndSet(w, second)) {
            inWindow.set(0);
        }
        if (inWindow.incrementAndGet() > perSecond) {
            suppressed.incrementAndGet();
            return;
        }
        long left = suppressed.getAndSet(0);
        if (left > 0) {
            log.warn("({} similar lines left out in the last seconds)", left);
        }
        log.warn(format, args);
    }
}
