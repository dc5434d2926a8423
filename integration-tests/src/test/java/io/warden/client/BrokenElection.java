package io.warden.client;

/**
 * Elections with one deliberate bug (or with short campaign rounds), for the proof suite only (as {@code BrokenGateway} is for the gateways): the SDK's
 * {@link Election} built with its term rule ({@link TermRules}, package-private, hence this class in the SDK's package)
 * broken. The SDK itself has no way to build one.
 *
 * <ul>
 *   <li>{@link Bug#OUTLIVES_ITS_HOLD}: a term lasts until its hold is released or known to be lost; the session's local
 *   deadline is ignored. A leader cut off from every gateway never hears of its loss, so it leads on after its session
 *   expired and another candidate was elected (the election checker must see two leaders at once).</li>
 * </ul>
 */
public final class BrokenElection {
    /** The deliberate bugs. */
    public enum Bug {
        OUTLIVES_ITS_HOLD;

        TermRules rules() {
            return switch (this) {
                case OUTLIVES_ITS_HOLD -> hold -> {
                    if (hold.lost().toCompletableFuture().isDone()) {
                        return false;
                    }
                    try {
                        hold.token();
                        return true; // not released: trusted, whatever the deadline says
                    } catch (IllegalStateException released) {
                        return false;
                    }
                };
            };
        }
    }

    private BrokenElection() {
    }

    /** An election of {@code name} through {@code client}, with {@code bug}. */
    public static Election of(Bug bug, WardenClient client, String name) {
        return of(bug, Campaign.ROUND, client, name);
    }

    /**
     * An election of {@code name} through {@code client}, with {@code bug} (or none: null), whose campaign asks for the
     * lock {@code round} at a time: a correct gateway ends each round unanswered by a grant (a CANCELLED event), which
     * a forced interleaving can wait for.
     */
    public static Election of(Bug bug, java.time.Duration round, WardenClient client, String name) {
        String checked = LockNames.check(name);
        client.calls();
        return new Election(client, checked, bug == null ? TermRules.CONTRACT : bug.rules(), round);
    }
}
