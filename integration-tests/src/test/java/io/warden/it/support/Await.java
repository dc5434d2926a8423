package io.warden.it.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition with a deadline, polling; never a sleep as synchronisation. */
public final class Await {
    private Await() {
    }

    /** Polls {@code condition} every {@code poll} until it holds; throws {@link AssertionError} naming {@code what} after {@code timeout}. */
    public static void until(String what, Duration timeout, Duration poll, BooleanSupplier condition) {
        until(what, timeout, poll, condition, () -> "");
    }

    /** As {@link #until(String, Duration, Duration, BooleanSupplier)}, adding {@code detail} to the failure message. */
    public static void until(String what, Duration timeout, Duration poll, BooleanSupplier condition,
                             Supplier<String> detail) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
                last = null;
            } catch (RuntimeException e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                AssertionError error = new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for "
                        + what + detailText(detail));
                if (last != null) {
                    error.initCause(last);
                }
                throw error;
            }
            sleepQuietly(poll);
        }
    }

    private static String detailText(Supplier<String> detail) {
        try {
            String text = detail.get();
            return text == null || text.isEmpty() ? "" : ": " + text;
        } catch (RuntimeException e) {
            return ": (detail failed: " + e + ")";
        }
    }

    /** A pause between polls or retries (not synchronisation). Restores the interrupt flag. */
    public static void sleepQuietly(Duration duration) {
        try {
            Thread.sleep(Math.max(1, duration.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
