package io.warden.it.jepsen;

import java.util.List;

/**
 * The fenced mutex (contract §2.1, §2.2, §2.4) as a sequential model of one lock name. State: the holding session and
 * its token, and the highest token granted so far. A grant is legal only when the lock is free, with a token above
 * every earlier one; a try-lock refused ({@link Op.Outcome#REFUSED}) only when it is held (contract §3: refused for a
 * conflicting holder or a request queued ahead, and on a mutex a queued request waits behind a holder); an acquire not
 * granted (timed out, or failed as a deadlock's victim) changes nothing; a release with the holder's session and token frees it ({@code released:true}); any other
 * release changes nothing and says {@code released:false}; the end of the holder's session (close or expiry) frees it.
 *
 * <p>An acquire whose answer never came may have been granted with a token nobody saw: the holder is then known but
 * not its token ({@link #UNSEEN}), and the highest token stays the last one seen (a lower bound).
 */
public final class FencedMutex implements Model<FencedMutex.State> {
    /** The token of a grant whose answer never came. */
    static final long UNSEEN = -1;

    /** {@code holder} null when free; {@code highest}: the largest token granted so far (0 before the first). */
    public record State(String holder, long token, long highest) {
        static final State FREE = new State(null, 0, 0);

        State free() {
            return new State(null, 0, highest);
        }

        boolean heldBy(String session) {
            return holder != null && holder.equals(session);
        }

        /** Whether a release of {@code t} by {@code session} names this grant (or may: its token unseen). */
        boolean named(String session, long t) {
            return heldBy(session) && (token == t || token == UNSEEN);
        }
    }

    @Override
    public State initial() {
        return State.FREE;
    }

    @Override
    public List<State> step(State s, Op op) {
        return switch (op.kind()) {
            case ACQUIRE -> switch (op.outcome()) {
                case GRANTED -> s.holder() == null && op.token() > s.highest()
                        ? List.of(new State(op.session(), op.token(), op.token())) : List.of();
                case NOT_GRANTED, DEADLOCK -> List.of(s);
                case REFUSED -> s.holder() != null ? List.of(s) : List.of();
                case UNKNOWN -> s.holder() == null ? List.of(s, new State(op.session(), UNSEEN, s.highest())) : List.of(s);
                default -> throw new IllegalArgumentException("an acquire cannot be " + op.outcome() + ": " + op);
            };
            case RELEASE -> switch (op.outcome()) {
                case RELEASED -> s.named(op.session(), op.token())
                        ? List.of(new State(null, 0, Math.max(s.highest(), op.token()))) : List.of();
                // illegal only when it names the grant for sure; a grant whose token was unseen may be another one
                case NOT_RELEASED -> s.heldBy(op.session()) && s.token() == op.token() ? List.of() : List.of(s);
                case UNKNOWN -> s.named(op.session(), op.token()) ? List.of(s, s.free()) : List.of(s);
                default -> throw new IllegalArgumentException("a release cannot be " + op.outcome() + ": " + op);
            };
            case END -> s.heldBy(op.session()) ? List.of(s.free()) : List.of(s);
        };
    }
}
