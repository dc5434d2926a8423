package io.warden.console.view;

import io.warden.console.model.QueuedRequest;
import java.time.Instant;
import java.util.List;

/**
 * A confirmation page of an admin action: what it will do, a required reason, a Confirm button.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param action    {@code force-release} or {@code expire-session}
 * @param lock      the lock (force-release), or null
 * @param token     the token to release (force-release), or 0
 * @param hold      the hold that token names now, or null when it no longer holds (force-release)
 * @param waiters   the lock's waiters, who move up (force-release)
 * @param sessionId the session (expire-session), or null
 * @param session   the session as the snapshot has it, or null when unknown (expire-session)
 * @param reason    the reason typed so far (re-shown after a rejected submit)
 * @param error     why the last submit was rejected, or null
 */
public record ConfirmView(String action, String lock, long token, QueuedRequest hold, List<QueuedRequest> waiters,
                          String sessionId, SessionRow session, String reason, String error, Instant now) {
    public static final int MAX_REASON = 500;

    public ConfirmView {
        waiters = waiters == null ? List.of() : List.copyOf(waiters);
        reason = reason == null ? "" : reason;
    }

    /** The grace offered by default when asking a holder to let go, in seconds. */
    public static final int DEFAULT_GRACE_SECONDS = 30;
    /** The longest grace the console offers (the API's maximum), in seconds. */
    public static final int MAX_GRACE_SECONDS = 600;

    public boolean forceRelease() {
        return "force-release".equals(action);
    }

    public boolean askRelease() {
        return "ask-release".equals(action);
    }
}
