package io.warden.console.model;

/**
 * How an admin action ended.
 *
 * @param done    true when it changed something; false for a no-op (the hold or session was already gone)
 * @param message one line for the admin
 */
public record AdminResult(boolean done, String message) {
}
