package io.warden.service.api;

/**
 * The cell a call went to does not serve the call's namespace now (503): the namespace is being moved, or was moved
 * and this gateway's view of the routes was behind. Nothing was written. A gateway that serves several cells routes
 * the call again once its view is current; a client that gets it repeats the call.
 */
public final class NotServedException extends WardenException {
    private final String cell;
    private final String namespace;

    /** {@code cell}: the cell's name, or null when the one who finds out does not know it (the lock engine). */
    public NotServedException(String cell, String namespace, boolean moving) {
        super(ErrorCode.UNAVAILABLE, (cell == null ? "the cell this call went to" : "cell " + cell)
                + " does not serve namespace " + namespace + " now" + (moving ? " (it is being moved)" : " (it was moved)")
                + "; nothing was written: repeat the call");
        this.cell = cell;
        this.namespace = namespace;
    }

    public String cell() {
        return cell;
    }

    public String namespace() {
        return namespace;
    }
}
