package io.warden.client;

/**
 * The caller acted as the holder of a lock it no longer holds (or cannot be sure it holds): its session was lost or
 * suspended, or the gateway no longer knew the hold when it was released. Like Hazelcast's exception of the same
 * name, this is an {@link IllegalMonitorStateException}, not a {@link WardenClientException}: it says the caller's
 * critical section may not have been exclusive, which no retry can repair. Writes made under the hold's token are
 * still safe wherever the resource checks the token.
 *
 * <p>Thread-safety: immutable.
 */
public class LockOwnershipLostException extends IllegalMonitorStateException {
    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final long token;

    public LockOwnershipLostException(String lockName, long token, String why) {
        super("lock '" + lockName + "' (token " + token + ") is no longer held: " + why);
        this.lockName = lockName;
        this.token = token;
    }

    public String lockName() {
        return lockName;
    }

    public long token() {
        return token;
    }
}
