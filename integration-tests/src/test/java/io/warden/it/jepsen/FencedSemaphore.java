package io.warden.it.jepsen;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A counted semaphore of {@code permits} (contract §2.12, with §2.2's tokens and §2.4's releases) as a sequential model
 * of one name. State: the holds (session and token each) and the highest token granted so far. A grant is legal only
 * while fewer than {@code permits} hold, with a token above every earlier one (each grant has its own); a try-lock
 * refused ({@link Op.Outcome#REFUSED}) only while all permits are held (a semaphore refuses for holders or a request
 * queued ahead, and a request waits only behind all its permits' holders); a release with a holder's session and token
 * ends that hold; the end of a session (close or expiry) ends all of its holds.
 *
 * <p>An acquire whose answer never came may have been granted with a token nobody saw ({@link FencedMutex#UNSEEN}).
 */
public final class FencedSemaphore implements Model<FencedSemaphore.State> {
    private final int permits;

    public FencedSemaphore(int permits) {
        this.permits = permits;
    }

    /** One hold. */
    public record Hold(String session, long token) {
    }

    /** {@code holds} sorted by session then token, so equal states are equal values; {@code highest}: 0 before the first grant. */
    public record State(List<Hold> holds, long highest) {
        private static final Comparator<Hold> ORDER = Comparator.comparing(Hold::session).thenComparingLong(Hold::token);

        public State {
            holds = holds.stream().sorted(ORDER).toList();
        }

        State with(Hold h, long newHighest) {
            List<Hold> more = new ArrayList<>(holds);
            more.add(h);
            return new State(more, newHighest);
        }

        State without(Hold h) {
            List<Hold> fewer = new ArrayList<>(holds);
            fewer.remove(h);
            return new State(fewer, Math.max(highest, h.token()));
        }

        State withoutSession(String session) {
            return new State(holds.stream().filter(h -> !h.session().equals(session)).toList(), highest);
        }

        /** The holds a release of {@code token} by {@code session} may name: its own with that token, or unseen ones. */
        List<Hold> named(String session, long token) {
            return holds.stream().filter(h -> h.session().equals(session)
                    && (h.token() == token || h.token() == FencedMutex.UNSEEN)).toList();
        }
    }

    @Override
    public State initial() {
        return new State(List.of(), 0);
    }

    @Override
    public List<State> step(State s, Op op) {
        boolean full = s.holds().size() >= permits;
        return switch (op.kind()) {
            case ACQUIRE -> switch (op.outcome()) {
                case GRANTED -> !full && op.token() > s.highest()
                        ? List.of(s.with(new Hold(op.session(), op.token()), op.token())) : List.of();
                case NOT_GRANTED, DEADLOCK -> List.of(s);
                case REFUSED -> full ? List.of(s) : List.of();
                case UNKNOWN -> full ? List.of(s)
                        : List.of(s, s.with(new Hold(op.session(), FencedMutex.UNSEEN), s.highest()));
                default -> throw new IllegalArgumentException("an acquire cannot be " + op.outcome() + ": " + op);
            };
            case RELEASE -> switch (op.outcome()) {
                case RELEASED -> s.named(op.session(), op.token()).stream().distinct().map(s::without).toList();
                // illegal only when it names a hold for sure; a hold whose token was unseen may be another one
                case NOT_RELEASED -> s.holds().contains(new Hold(op.session(), op.token())) ? List.of() : List.of(s);
                case UNKNOWN -> {
                    List<State> next = new ArrayList<>();
                    next.add(s);
                    s.named(op.session(), op.token()).stream().distinct().map(s::without).forEach(next::add);
                    yield next;
                }
                default -> throw new IllegalArgumentException("a release cannot be " + op.outcome() + ": " + op);
            };
            case END -> List.of(s.withoutSession(op.session()));
        };
    }
}
