package io.warden.console.view;

/**
 * Parses {@code limit} parameters.
 *
 * <p>Concurrency: stateless; safe from any thread.
 */
public final class Limits {
    private Limits() {
    }

    /**
     * Absent or blank means {@code defaultLimit}.
     *
     * @throws InvalidInput naming {@code limit} and the allowed range when it is not an integer from 1 to {@code max}
     */
    public static int parse(String raw, int defaultLimit, int max) {
        if (raw == null || raw.isBlank()) {
            return defaultLimit;
        }
        try {
            int limit = Integer.parseInt(raw.trim());
            if (limit >= 1 && limit <= max) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new InvalidInput("limit", "must be an integer from 1 to " + max);
    }
}
