package io.warden.console.view;

import io.warden.console.model.AuditEntry;
import java.time.Instant;
import java.util.List;

/**
 * The audit log page: the newest entries first.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 */
public record AuditView(List<AuditEntry> entries, int limit, Instant now) {
    public static final int DEFAULT_LIMIT = 100;
    public static final int MAX_LIMIT = 1000;

    public AuditView {
        entries = List.copyOf(entries);
    }
}
