package io.warden.client;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link MultiLock} over the HTTP API: {@code POST /v1/acquire} with {@code names}, repeated with the same request id
 * (QUEUED answers, lost replies, another gateway) until granted or the wait runs out; the hold releases the whole
 * request by its request id.
 *
 * <p>Concurrency: immutable; an acquire runs on the calling thread (it blocks, as {@link FencedLock#acquire} does) and
 * its HTTP calls on the client's I/O threads.
 */
final class HttpMultiLock implements MultiLock {
    private final WardenClient client;
    private final List<String> names;
    private final LockMode mode;

    HttpMultiLock(WardenClient client, List<String> names, LockMode mode) {
        this.client = client;
        this.names = List.copyOf(names);
        this.mode = mode;
    }

    @Override
    public List<String> names() {
        return names;
    }

    @Override
    public LockMode mode() {
        return mode;
    }

    @Override
    public MultiHold acquire(Duration wait) {
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative, got " + wait);
        }
        LockCalls calls = client.calls();
        String requestId = "sdk-" + UUID.randomUUID();
        long deadline = calls.ticker().getAsLong() + wait.toNanos();
        try {
            while (true) {
                long now = calls.ticker().getAsLong();
                long retryDeadline = Math.max(now, deadline) + calls.requestTimeout().toNanos();
                Wire.AcquiredMany a = calls.acquireMany(names, mode, requestId, deadline, client.maxWaitPerCallMs(),
                        retryDeadline).get().value();
                String status = a.status() == null ? "" : a.status();
                if (status.equals(Wire.Acquired.GRANTED) && a.tokens() != null) {
                    return new Held(calls, requestId, a.tokens());
                }
                if (status.equals(Wire.Acquired.QUEUED) && calls.ticker().getAsLong() - deadline < 0) {
                    continue; // KEEP: the request stays queued; ask again with what is left of the wait
                }
                if (!status.equals(Wire.Acquired.TIMED_OUT)) {
                    calls.releaseRequestInBackground(requestId); // QUEUED past the deadline, or an unexpected answer
                }
                throw new AcquireTimeoutException(String.join(",", names), wait);
            }
        } catch (InterruptedException e) {
            calls.releaseRequestInBackground(requestId);
            Thread.currentThread().interrupt();
            throw new WardenClientException("interrupted while waiting for locks " + names + "; the request was cancelled", e);
        } catch (ExecutionException e) {
            throw Failures.rethrow(e.getCause());
        }
    }

    @Override
    public String toString() {
        return "MultiLock" + names + " " + mode;
    }

    /** A grant: the tokens, and the request id that releases it. */
    private static final class Held implements MultiHold {
        private final LockCalls calls;
        private final String requestId;
        private final Map<String, Long> tokens;
        private final AtomicBoolean released = new AtomicBoolean();

        Held(LockCalls calls, String requestId, Map<String, Long> tokens) {
            this.calls = calls;
            this.requestId = requestId;
            this.tokens = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(tokens));
        }

        @Override
        public List<String> names() {
            return List.copyOf(tokens.keySet());
        }

        @Override
        public long token(String name) {
            if (released.get()) {
                throw new IllegalStateException("the multi-lock on " + tokens.keySet() + " was released");
            }
            Long t = tokens.get(name);
            if (t == null) {
                throw new IllegalArgumentException("'" + name + "' is not one of " + tokens.keySet());
            }
            return t;
        }

        @Override
        public Map<String, Long> tokens() {
            if (released.get()) {
                throw new IllegalStateException("the multi-lock on " + tokens.keySet() + " was released");
            }
            return tokens;
        }

        @Override
        public boolean isValid() {
            return !released.get() && calls.session().state() == SessionState.CONNECTED;
        }

        @Override
        public void release() {
            if (!released.compareAndSet(false, true)) {
                return;
            }
            try {
                calls.releaseRequest(requestId).get();
            } catch (InterruptedException e) {
                calls.releaseRequestInBackground(requestId);
                Thread.currentThread().interrupt();
            } catch (ExecutionException e) {
                if (Failures.retryable(e.getCause())) {
                    calls.releaseRequestInBackground(requestId);
                } else if (!Failures.sessionGone(e.getCause())) {
                    throw Failures.rethrow(e.getCause());
                }
            }
        }

        @Override
        public void close() {
            release();
        }

        @Override
        public String toString() {
            return "MultiHold" + tokens;
        }
    }
}
