package io.warden.shedlock;

import io.warden.client.Hold;
import io.warden.client.LockMode;
import io.warden.client.LockOwnershipLostException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A hold that counts its releases and can be made invalid or lost; single-threaded, for {@link GrantTest}. */
final class FakeHold implements Hold {
    private final String name;
    private final long token;
    private final CompletableFuture<Void> lost = new CompletableFuture<>();
    boolean sessionConnected = true;
    /** The service no longer knows the grant: the release finds it gone (and says so, as the SDK does). */
    boolean goneAtService;
    int releaseCalls;
    private boolean released;

    FakeHold(String name, long token) {
        this.name = name;
        this.token = token;
    }

    /** The grant ended elsewhere: as the SDK, invalid at once, then {@link #lost()} completes. */
    void loseIt() {
        lost.complete(null);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LockMode mode() {
        return LockMode.EXCLUSIVE;
    }

    @Override
    public long token() {
        if (released) {
            throw new IllegalStateException("released");
        }
        return token;
    }

    @Override
    public boolean isValid() {
        return !released && !lost.isDone() && sessionConnected;
    }

    @Override
    public void checkValid() {
        if (!isValid()) {
            throw new IllegalStateException("not valid");
        }
    }

    @Override
    public CompletionStage<Void> lost() {
        return lost.minimalCompletionStage();
    }

    @Override
    public void release() {
        releaseCalls++;
        if (released) {
            return;
        }
        released = true;
        if (lost.isDone() || goneAtService) {
            throw new LockOwnershipLostException(name, token, "lost before the release");
        }
    }

    @Override
    public void close() {
        release();
    }
}
