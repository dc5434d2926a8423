package io.warden.service.watch;

import io.warden.service.api.Mode;

/**
 * One change of one lock's queue, as {@code GET /v1/watch} reports it (docs/api.md).
 *
 * @param revision  the zxid of the ZooKeeper transaction that made the change; a GRANTED event that a release,
 *                  cancel or expiry caused carries the zxid of that release, cancel or expiry
 * @param type      what happened to the request
 * @param name      the lock name, {@code namespace/path}
 * @param sessionId the request's session (from the path of the request record its acquire created in the same
 *                  transaction: no read); null for a queue node that is not Warden's (a plain Curator client)
 * @param clientId  the client id of that session (carried by the acquire's transaction itself: no read); null for a
 *                  node that is not Warden's, or one made by a gateway older than this version
 * @param mode      the request's mode
 * @param token     the request's token: the czxid of its queue node (the fencing token once it is granted)
 *
 * <p>Concurrency: immutable.
 */
public record WatchEvent(long revision, Type type, String name, String sessionId, String clientId, Mode mode, long token) {
    public enum Type {
        /** A request joined the queue (an acquire that holds at once is QUEUED and then GRANTED at the same revision). */
        QUEUED,
        /** A request holds the lock from this revision on. */
        GRANTED,
        /** A holder let go: release, a cancel of a granted request, or a session close. */
        RELEASED,
        /** A waiting request left the queue without being granted: cancel, timeout or session close. */
        CANCELLED,
        /** A request (held or waiting) was removed because its session expired, or a lock-delay kept after expiry ended. */
        EXPIRED,
        /**
         * The holder is asked to let go ({@code POST /v1/revoke}, or a Curator client's {@code Revoker} on its node): the
         * hold is force-released if it still holds after the revoke's grace. The request itself changes nothing.
         */
        REVOKE_REQUESTED
    }
}
