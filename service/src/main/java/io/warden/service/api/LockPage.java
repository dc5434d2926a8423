package io.warden.service.api;

import java.util.List;

/** A page of live locks in name order; {@code nextAfter} is the {@code after} for the next page, or null at the end. */
public record LockPage(List<LockSummary> locks, String nextAfter, long revision) {
    public LockPage {
        locks = List.copyOf(locks);
    }
}
