package io.warden.service.api;

/** Counts for one namespace: live locks, holds, queued requests, and distinct sessions with a hold or a wait in it. */
public record NamespaceStats(String namespace, int locks, int holders, int waiters, int sessions) {
}
