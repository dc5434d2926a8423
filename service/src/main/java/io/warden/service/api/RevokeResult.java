package io.warden.service.api;

/**
 * What {@code POST /v1/revoke} did: the hold {@code token} of {@code name} is asked to let go and is force-released if
 * it still holds {@code graceMs} after the request.
 *
 * @param sessionId the holder's session; null for a plain Curator client's hold (asked through Curator's
 *                  {@code Revoker}, never forced)
 * @param repeated  true when the hold had already been asked: nothing was written, and {@code graceMs} and
 *                  {@code reason} are the first request's
 * @param revision  the zxid of the write that recorded the request (the first one's when repeated)
 */
public record RevokeResult(String name, long token, String sessionId, long graceMs, String reason, boolean repeated,
                           long revision) {
    /** The longest grace a revoke may give: ten minutes. */
    public static final long MAX_GRACE_MS = 600_000;
    /** The longest reason, in characters. */
    public static final int MAX_REASON = 256;
}
