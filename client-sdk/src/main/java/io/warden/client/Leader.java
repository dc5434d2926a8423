package io.warden.client;

/**
 * Who holds an {@link Election}'s lock, as the election's watch of it last saw: the leader of that election (or, for
 * a holder that is not a Warden session, e.g. a Curator client on the same name, whoever holds it).
 *
 * <p>A view, not a promise: it lags the service by the watch's delay (a few milliseconds), and the leader it names
 * may already be gone. Only the leader itself can tell that it leads ({@link Election#isLeader()}), and only the
 * token, checked by the resource, can fence its writes.
 *
 * <p>Thread-safety: immutable.
 *
 * @param sessionId the leader's session; null for a holder that is not a Warden session, and for another principal's
 *                  session when the cell authenticates
 * @param clientId  the client id of the leader's session; null when the gateway did not say
 * @param token     the fencing token of the leader's grant
 * @param revision  the revision (ZooKeeper zxid) of the event that made it leader, or of the state it was read from
 */
public record Leader(String sessionId, String clientId, long token, long revision) {
    public Leader {
        if (token <= 0) {
            throw new IllegalArgumentException("token must be positive, got " + token);
        }
    }
}
