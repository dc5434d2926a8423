package io.warden.it.support;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client of the counter scenario: a session, a loop that acquires EXCLUSIVE the lock, writes through the
 * {@link FencedResource} with the token, increments the {@link UnguardedCounter} read-modify-write, writes again and
 * releases; and a {@link #keepalive()} that a scheduler runs.
 *
 * <p>An acquire whose retries run out is cancelled by its {@code request_id}, so no queue entry is left behind to block
 * the others. A {@code released:false} for a hold the client believes it has is a problem unless an earlier attempt of
 * that release may have arrived (then it only means that attempt did the work).
 *
 * <p>Concurrency: {@link #run()} on one thread; {@link #keepalive()} on a scheduler thread; counters are atomics.
 */
public final class CounterClient implements Runnable {
    private final String clientId;
    private final String lock;
    private final WardenClient client;
    private final WardenClient.Session session;
    private final FencedResource resource;
    private final UnguardedCounter counter;
    private final Problems problems;
    private final AtomicBoolean stop;
    private final AtomicLong increments = new AtomicLong();
    private final AtomicBoolean sessionLost = new AtomicBoolean();
    // Confined to the loop's thread.
    private long sequence;

    public CounterClient(String clientId, String lock, WardenClient client, WardenClient.Session session,
                         FencedResource resource, UnguardedCounter counter, Problems problems, AtomicBoolean stop) {
        this.clientId = clientId;
        this.lock = lock;
        this.client = client;
        this.session = session;
        this.resource = resource;
        this.counter = counter;
        this.problems = problems;
        this.stop = stop;
    }

    public String clientId() {
        return clientId;
    }

    public WardenClient client() {
        return client;
    }

    public WardenClient.Session session() {
        return session;
    }

    /** Increments made under the lock so far. */
    public long increments() {
        return increments.get();
    }

    public void keepalive() {
        if (sessionLost.get() || stop.get()) {
            return;
        }
        try {
            client.keepalive(session.id());
        } catch (WardenClient.SessionNotFoundException e) {
            sessionLost.set(true);
            problems.add(clientId + ": keepalive found the session gone: " + e.getMessage());
        } catch (RuntimeException e) {
            problems.add(clientId + ": keepalive failed: " + e);
        }
    }

    @Override
    public void run() {
        // Bounded: the test stops the loop; the deadline is a backstop should the test thread die.
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
        while (!stop.get() && !sessionLost.get() && System.nanoTime() - deadline < 0) {
            String requestId = clientId + "-" + (++sequence);
            WardenClient.Acquired acquired;
            try {
                acquired = client.acquire(session.id(), lock, "EXCLUSIVE", 2000, requestId, "CANCEL");
            } catch (WardenClient.SessionNotFoundException e) {
                sessionLost.set(true);
                problems.add(clientId + ": acquire " + requestId + " found the session gone");
                return;
            } catch (RuntimeException e) {
                problems.add(clientId + ": acquire " + requestId + " failed: " + e);
                cancelQuietly(requestId);
                continue;
            }
            if (!acquired.granted()) {
                continue;
            }
            long token = acquired.token();
            String holder = session.id() + "#" + token;
            // The critical section: two fenced writes around an unguarded read-modify-write.
            resource.write(token, holder);
            counter.incrementSlowly(Duration.ofMillis(2));
            increments.incrementAndGet();
            resource.write(token, holder);
            release(token);
        }
    }

    private void release(long token) {
        try {
            WardenClient.Released released = client.release(session.id(), lock, token);
            if (!released.released() && !released.ambiguous()) {
                problems.add(clientId + ": release of " + lock + " token " + token
                        + " answered released:false (the hold was lost), after " + released.attempts() + " attempt(s)");
            } else if (!released.released()) {
                problems.note(clientId + ": release of token " + token + " answered released:false after "
                        + released.attempts() + " attempts (ambiguous: an earlier attempt may have released)");
            }
        } catch (RuntimeException e) {
            problems.add(clientId + ": release of token " + token + " failed: " + e);
        }
    }

    private void cancelQuietly(String requestId) {
        try {
            client.cancel(session.id(), lock, requestId);
        } catch (RuntimeException e) {
            problems.add(clientId + ": cancel of " + requestId + " failed: " + e);
        }
    }
}
