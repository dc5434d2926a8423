package io.warden.console.view;

/**
 * The wait-for page.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 */
public record WaitsView(WaitForGraph graph, AsOf asOf) {
    /** Edges shown at most; the rest are counted. */
    public static final int MAX_EDGES = 500;
}
