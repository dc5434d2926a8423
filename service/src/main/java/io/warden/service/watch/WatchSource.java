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

    /**
     * A whole session's watch in cell {@code cell} of a gateway that serves several (each cell's revisions are its own:
     * one stream per cell); null or {@code default} is {@link #subscribe(WatchFilter, Long, WatchSink)}. The default
     * serves the default cell only.
     *
     * @throws io.warden.service.api.WardenException INVALID_ARGUMENT naming {@code cell} for a cell not served here
     */
    default Subscription subscribe(String cell, WatchFilter filter, Long sinceRevision, WatchSink sink) {
        if (cell != null && !cell.equals("default")) {
            throw io.warden.service.api.WardenException.invalid("cell", "this gateway serves no cell " + cell);
        }
        return subscribe(filter, sinceRevision, sink);
    }

    /** A running watch. */
    interface Subscription {
        /** Ends the watch; idempotent. The sink gets nothing more (it may still get calls already under way). */
        void cancel();
    }
}
