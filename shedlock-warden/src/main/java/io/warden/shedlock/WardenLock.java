package io.warden.shedlock;

import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The {@link SimpleLock} ShedLock gets from {@link WardenLockProvider}: one use only, as ShedLock's
 * {@link AbstractSimpleLock} enforces (a second {@code unlock}, or any call after {@code extend}, throws
 * {@link IllegalStateException} naming the lock). An extension returns a new {@code WardenLock} on the same
 * {@link Grant}: the same Warden hold and fencing token, with new deadlines.
 *
 * <p>Thread-safety: as ShedLock's locks, meant for one caller at a time (its validity flag is ShedLock's, not
 * synchronized); the grant behind it is thread-safe.
 */
final class WardenLock extends AbstractSimpleLock {
    private final Grant grant;

    WardenLock(LockConfiguration configuration, Grant grant) {
        super(configuration);
        this.grant = grant;
    }

    @Override
    protected void doUnlock() {
        try {
            grant.unlock();
        } finally {
            WardenShedLock.unlocked(grant);
        }
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
        if (grant.extend(newConfiguration.getLockAtMostFor(), newConfiguration.getLockAtLeastFor())) {
            return Optional.of(new WardenLock(newConfiguration, grant));
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return "WardenLock[" + grant + "]";
    }
}
