package io.warden.service.api;

/** One live lock in a listing. */
public record LockSummary(String name, LockView.LockMode mode, int holders, int waiters) {
}
