package io.warden.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The thread of one {@link Election}: asks for the election's lock (an EXCLUSIVE acquire, waiting a round, by default
 * {@link #ROUND}, at a time, asked again when it runs out), makes a {@link Leadership} of each grant, waits while it lasts, and tells the
 * listeners. It wakes when the hold's session reaches its local deadline (computed from the session, so no timer of
 * the client can hold it up), when the hold is lost, when the session's state changes, and on resign or close.
 *
 * <p>Order on this thread, for every term: {@code elected}; the wait; {@code defeated}; the hold given back (when the
 * term ended because the hold was lost or stopped being valid, before the release: the listener hears of it as early
 * as possible); only then the next acquire.
 *
 * <p>Concurrency: {@code lock} guards {@code wanted}, {@code closed}, {@code pending}, {@code thread} and the writes of
 * {@code current} (volatile, read without it). A grant belongs to exactly one owner: the thread, when it finds its
 * call still {@code pending} after the grant (it then makes it {@code current}), or {@link #resign}, which takes the
 * pending call away under the lock and gives it up (cancelling the request, or releasing a grant that raced).
 * {@link #resign} also ends the current term itself and gives its hold back on the caller's thread (or waits until the
 * election's thread, which got there first, has), so resigning never waits for a listener that blocks, and returns
 * only once the release was answered.
 */
final class Campaign implements Runnable {
    private static final System.Logger log = System.getLogger(Campaign.class.getName());
    /**
     * How long one acquire of the campaign waits by default before it is asked again (it keeps its place in the queue
     * meanwhile, up to the last call of the round, which the gateway ends with {@code on_timeout=CANCEL}).
     */
    static final Duration ROUND = Duration.ofMinutes(10);
    /** The longest the thread sleeps while leading without looking at the hold (for a ticker that is not the clock). */
    private static final long LOOK_AGAIN_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long MIN_WAIT_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final WardenClient client;
    private final LockCalls calls;
    private final String name;
    private final ElectionListener listeners;
    private final TermRules rules;
    private final Duration round;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final SessionListener sessionListener = state -> signal();

    private boolean wanted;
    private boolean closed;
    private AcquireCall pending;
    private volatile Leadership current;
    private Thread thread;

    Campaign(WardenClient client, String name, TermRules rules, Duration round, ElectionListener listeners) {
        this.client = client;
        this.rules = rules;
        this.round = round;
        this.calls = client.calls();
        this.name = name;
        this.listeners = listeners;
    }

    /** Starts campaigning (the thread, on the first call); does nothing while campaigning already. */
    void campaign() {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the election '" + name + "' is closed");
            }
            client.calls(); // throws when the client is closed
            if (calls.session().state() == SessionState.LOST) {
                throw new SessionLostException("cannot campaign in election '" + name + "': session "
                        + calls.session().id() + " is lost", null, 0, null);
            }
            wanted = true;
            if (thread == null) {
                thread = new Thread(this, "warden-election-" + name);
                thread.setDaemon(true);
                thread.start();
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    boolean campaigning() {
        lock.lock();
        try {
            return wanted && !closed && !sessionEnded();
        } finally {
            lock.unlock();
        }
    }

    /** The current term, if it is still valid at this instant. */
    Optional<Leadership> leadership() {
        Leadership t = current;
        return t != null && t.isValid() ? Optional.of(t) : Optional.empty();
    }

    /**
     * Stops campaigning: a queued request is cancelled (waiting, boundedly, for the answer), a grant that raced is
     * released, and the current term ends at once and its hold is given back. Then idle until {@link #campaign()}.
     */
    void resign() {
        stop(false);
    }

    /** As {@link #resign()}, for good; the thread ends. */
    void close() {
        stop(true);
    }

    private void stop(boolean forGood) {
        Leadership term;
        AcquireCall call;
        lock.lock();
        try {
            wanted = false;
            closed |= forGood;
            term = current;
            current = null;
            call = pending;
            pending = null;
            if (term != null) {
                // ended under the lock, so the thread (woken by this) finds it ended, and why
                term.end(forGood ? "the election was closed" : "the candidate resigned");
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (call != null) {
            call.giveUp();
        }
        if (term != null) {
            term.giveBack();
        }
    }

    private void signal() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void run() {
        client.addListener(sessionListener);
        try {
            int failures = 0;
            while (awaitWanted()) {
                try {
                    failures = round(failures);
                } catch (RuntimeException e) {
                    failures++;
                    log.log(System.Logger.Level.WARNING, "election ''" + name + "'': campaign round failed; trying again", e);
                    pause(Backoff.delayMs(failures));
                }
            }
        } finally {
            client.removeListener(sessionListener);
            lock.lock();
            try {
                thread = null;
            } finally {
                lock.unlock();
            }
        }
    }

    /** Waits until campaigning is wanted; false when the thread is to end (closed, or the session ended). */
    private boolean awaitWanted() {
        lock.lock();
        try {
            while (!closed && !wanted && !sessionEnded()) {
                changed.await();
            }
            return !closed && !sessionEnded();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    private boolean sessionEnded() {
        return calls.session().ended();
    }

    /** One acquire and, when granted, one term; returns the count of failures in a row. */
    private int round(int failures) {
        if (sessionEnded()) {
            return failures;
        }
        if (calls.session().state() == SessionState.SUSPENDED) {
            // A grant now would not be valid: wait for the session to be CONNECTED again (its listener wakes us).
            pause(TimeUnit.NANOSECONDS.toMillis(LOOK_AGAIN_NANOS));
            return failures;
        }
        AcquireCall call = new AcquireCall(client.calls(), name, LockMode.EXCLUSIVE, 0, round, client.maxWaitPerCallMs());
        lock.lock();
        try {
            if (!wanted || closed) {
                return failures;
            }
            pending = call;
            // Started under the lock: a resign that takes the call away finds it started, so its give-up is answered.
            // (Starting only sends the first request asynchronously.)
            call.start();
        } finally {
            lock.unlock();
        }
        Hold hold;
        try {
            hold = call.result().get();
        } catch (CancellationException resigned) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            return failures;
        } catch (ExecutionException e) {
            lock.lock();
            try {
                if (pending == call) {
                    pending = null;
                }
            } finally {
                lock.unlock();
            }
            Throwable cause = Failures.unwrap(e.getCause());
            if (cause instanceof AcquireTimeoutException || cause instanceof SessionLostException) {
                return 0; // asked again, or the thread ends (awaitWanted sees the session's end)
            }
            log.log(failures == 0 ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "election ''{0}'': campaign failed ({1}); trying again", name, cause.toString());
            pause(Backoff.delayMs(failures + 1));
            return failures + 1;
        }
        Leadership term = null;
        lock.lock();
        try {
            if (pending != call) {
                return 0; // resign took the call over, and gives the grant back
            }
            pending = null;
            if (wanted && !closed && hold.isValid()) {
                // the token as granted (HttpHold's, also once a racing close of the client released the hold)
                long token = hold instanceof HttpHold h ? h.tokenValue() : hold.token();
                term = new Leadership(name, hold, token, rules, this::signal);
                current = term;
            }
        } finally {
            lock.unlock();
        }
        if (term == null) {
            releaseQuietly(hold);
            return hold.isValid() ? 0 : failures + 1;
        }
        hold.lost().thenRun(this::signal);
        log.log(System.Logger.Level.DEBUG, "election ''{0}'': elected, token {1}", name, term.token());
        listeners.elected(term);
        lead(term);
        boolean givenUp;
        lock.lock();
        try {
            givenUp = !wanted || closed;
            if (current == term) {
                current = null;
            }
        } finally {
            lock.unlock();
        }
        term.end("the campaign stopped");
        log.log(givenUp ? System.Logger.Level.DEBUG : System.Logger.Level.INFO,
                "election ''{0}'': leadership of token {1} ended: {2}", name, term.token(), term.why());
        listeners.defeated(term);
        term.giveBack();
        return 0;
    }

    /** Waits while {@code term} lasts: until the hold is lost or not valid, or the campaign stops. */
    private void lead(Leadership term) {
        lock.lock();
        try {
            while (wanted && !closed && term.isValid()) {
                long untilDeadline = calls.session().deadlineNanos() - calls.ticker().getAsLong();
                changed.awaitNanos(Math.max(MIN_WAIT_NANOS, Math.min(untilDeadline, LOOK_AGAIN_NANOS)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** Sleeps up to {@code ms}, or until the campaign stops, the session ends or its state changes. */
    private void pause(long ms) {
        lock.lock();
        try {
            long nanos = TimeUnit.MILLISECONDS.toNanos(ms);
            SessionState before = calls.session().state();
            while (nanos > 0 && wanted && !closed && !sessionEnded() && calls.session().state() == before) {
                nanos = changed.awaitNanos(nanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    private void releaseQuietly(Hold hold) {
        try {
            hold.release();
        } catch (RuntimeException e) {
            // lost already, or the release goes on in the background
        }
    }
}
