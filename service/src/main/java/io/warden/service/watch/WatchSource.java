package io.warden.service.watch;

/** Watches as the HTTP layer sees them. */
public interface WatchSource {
    /**
     * Starts a watch. With {@code sinceRevision} null the sink gets the events from now on. With a revision, it first
     * gets every kept event after that revision that the filter covers and then live events — or, when the history no
     * longer reaches back that far, one {@link Resync} with the current state first.
     *
     * @throws io.warden.service.api.WardenException RESOURCE_EXHAUSTED when this gateway has too many watches,
     *                                              UNAVAILABLE when it serves none
     */
    Subscription subscribe(WatchFilter filter, Long sinceRevision, WatchSink sink);

    /** A running watch. */
    interface Subscription {
        /** Ends the watch; idempotent. The sink gets nothing more (it may still get calls already under way). */
        void cancel();
    }
}
