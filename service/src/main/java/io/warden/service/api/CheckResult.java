package io.warden.service.api;

/** {@code current} iff the token belongs to a current holder; {@code latestToken} is the largest current holder token or null. */
public record CheckResult(boolean current, Long latestToken, long revision) {
}
