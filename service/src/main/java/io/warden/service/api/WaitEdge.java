package io.warden.service.api;

/**
 * An edge of the wait-for graph (docs/decisions/0013-deadlock-detection.md): a waiting entry of session
 * {@code waiter} on {@code name} is blocked by an entry of session {@code blocker} there, which holds or is queued
 * ahead of it (a FIFO queue: a waiter behind a queued EXCLUSIVE waits for it too).
 *
 * @param request      the waiting request's uuid (what names its queue nodes)
 * @param blockerToken the blocking entry's token
 * @param blockerHolds whether the blocking entry holds now (else it waits ahead)
 */
public record WaitEdge(String waiter, String waiterClient, String request, String name, Mode waiterMode,
                       String blocker, String blockerClient, Mode blockerMode, long blockerToken, boolean blockerHolds) {
}
