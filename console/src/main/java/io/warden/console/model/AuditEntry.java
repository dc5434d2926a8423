package io.warden.console.model;

import java.time.Instant;
import java.util.Objects;

/**
 * One admin action: who, when, what, why, and how it ended.
 *
 * @param actor   the name the admin gave at login
 * @param action  FORCE_RELEASE or EXPIRE_SESSION
 * @param target  the lock name and token ({@code payments/invoice-42#123}) or the session id
 * @param reason  the reason the admin typed
 * @param source  where the request came from (remote address)
 * @param gateway the gateway that carried it out
 * @param outcome what happened (filled in by the backend: "done", "no-op: ...", "failed: ...")
 */
public record AuditEntry(Instant at, String actor, String action, String target, String reason, String source,
                         String gateway, String outcome) {
    public AuditEntry {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(reason, "reason");
    }

    public AuditEntry withOutcome(String gatewayId, String result) {
        return new AuditEntry(at, actor, action, target, reason, source, gatewayId, result);
    }
}
