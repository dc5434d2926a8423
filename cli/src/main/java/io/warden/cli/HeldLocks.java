package io.warden.cli;

import io.warden.client.Hold;
import io.warden.client.MultiHold;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * What {@code warden lock} runs its command under: one name's {@link Hold}, or several names' {@link MultiHold} (one
 * multi-lock request). Either way: every name's token, the loss of any name (the command must then stop), an admin's
 * request to let go of any name, and one release.
 *
 * <p>Thread-safety: as the hold it wraps (safe from any thread).
 */
abstract sealed class HeldLocks {
    /** Every name held, in order, with its fencing token. */
    abstract Map<String, Long> tokens();

    /** Completes when any name is lost (its grant ended elsewhere, or the session is gone). */
    abstract CompletionStage<Void> lost();

    /** Runs {@code action} once, when the holder of any name is asked to let go. */
    abstract void onRevokeRequested(Runnable action);

    /** Releases every name; throws {@link io.warden.client.LockOwnershipLostException} when one was lost first. */
    abstract void release();

    static HeldLocks of(Hold hold) {
        return new One(hold);
    }

    static HeldLocks of(MultiHold hold) {
        return new Many(hold);
    }

    private static final class One extends HeldLocks {
        private final Hold hold;

        One(Hold hold) {
            this.hold = hold;
        }

        @Override
        Map<String, Long> tokens() {
            Map<String, Long> t = new LinkedHashMap<>();
            t.put(hold.name(), hold.token());
            return t;
        }

        @Override
        CompletionStage<Void> lost() {
            return hold.lost();
        }

        @Override
        void onRevokeRequested(Runnable action) {
            hold.onRevokeRequested(h -> action.run());
        }

        @Override
        void release() {
            hold.release();
        }
    }

    private static final class Many extends HeldLocks {
        private final MultiHold hold;

        Many(MultiHold hold) {
            this.hold = hold;
        }

        @Override
        Map<String, Long> tokens() {
            return hold.tokens();
        }

        @Override
        CompletionStage<Void> lost() {
            return hold.lost();
        }

        @Override
        void onRevokeRequested(Runnable action) {
            hold.onRevokeRequested(h -> action.run());
        }

        @Override
        void release() {
            hold.release();
        }
    }
}
