package io.warden.service.cell;

/**
 * Turns a queue node's czxid into its fencing token: {@code czxid + } the cell's token floor for that node (a token as
 * docs/guarantees.md defines it; {@link FloorHistory}). Every token Warden hands out or accepts goes through one of
 * these.
 */
@FunctionalInterface
public interface Tokens {
    /** Tokens of a cell whose floor was never raised: the czxid itself (tests of one part, tools). */
    Tokens CZXID = czxid -> czxid;

    /**
     * The token of a node made at {@code czxid}.
     *
     * @throws io.warden.service.api.WardenException UNAVAILABLE when this gateway cannot know it exactly now (it is
     *                                               reading a floor raise it may have missed); the caller answers 503
     */
    long of(long czxid);

    /**
     * The same, never failing: may lack a raise this gateway has not read yet. Only for state that is rebuilt before
     * anyone sees it (the watch mirror between a reconnection and its rebuild).
     */
    default long bestEffort(long czxid) {
        return of(czxid);
    }
}
