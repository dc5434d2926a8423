package io.warden.service.api;

/**
 * A namespace moved to another cell ({@code PUT /v1/namespaces/{namespace}/cell}): from where, to where, how many
 * holds and waits the deadline made it end in the old cell ({@code forced}), the token floor the new cell was raised to
 * (-1: its tokens were above the old cell's already), and how long the move took. {@code from} equals {@code to} when
 * the namespace was there already (nothing moved).
 *
 * <p>Concurrency: immutable.
 */
public record MoveResult(String namespace, String from, String to, int forced, long floor, long tookMs) {
}
