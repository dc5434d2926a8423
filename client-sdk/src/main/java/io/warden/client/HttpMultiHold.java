package io.warden.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A {@link MultiHold} over the HTTP API: one {@link HttpHold} per name, each registered with the session like any
 * hold, so each learns what a one-name hold learns (its grant ended elsewhere, from the session's watch; a revoke; the
 * loss of the session), and each is valid only while the session is within its local deadline. This hold is what its
 * parts say together: valid while every part is, lost as soon as one part is, asked to let go as soon as one part is.
 * A release ends the whole request by its request id (one transaction at the gateway), not part by part.
 *
 * <p>Concurrency: the parts are immutable after construction and thread-safe themselves; {@code released} is set once;
 * {@code lostFuture} and {@code revokeFuture} complete once, on the client's event thread (where the parts' own futures
 * complete).
 */
final class HttpMultiHold implements MultiHold {
    private final LockCalls calls;
    private final String requestId;
    /** A part per name, in the order the lock gave the names. */
    private final Map<String, HttpHold> parts;
    private final Map<String, Long> tokens;
    private final AtomicBoolean released = new AtomicBoolean();
    private final CompletableFuture<Void> lostFuture = new CompletableFuture<>();
    private final CompletableFuture<Void> revokeFuture = new CompletableFuture<>();

    /**
     * A grant of every name in {@code tokens}, known to be in place at {@code grantRevision} (of cell {@code cell}, or
     * null from a one-cell gateway); not yet registered.
     */
    HttpMultiHold(LockCalls calls, String requestId, LockMode mode, Map<String, Long> tokens, long grantRevision,
                  String cell) {
        this.calls = calls;
        this.requestId = requestId;
        Map<String, HttpHold> p = new LinkedHashMap<>();
        tokens.forEach((name, token) -> p.put(name, new HttpHold(name, mode, token, grantRevision, calls, cell)));
        this.parts = Collections.unmodifiableMap(p);
        this.tokens = Collections.unmodifiableMap(new LinkedHashMap<>(tokens));
    }

    /** Registers every part with the session (and its watch); a part whose end was seen already is lost at once. */
    HttpMultiHold track() {
        for (HttpHold part : parts.values()) {
            part.lost().thenRun(() -> lostFuture.complete(null));
            part.onRevokeRequested(asked -> revokeFuture.complete(null));
            calls.session().track(part);
        }
        return this;
    }

    /** Undoes {@link #track()} for a grant nobody will see (the caller gave up first). */
    void untrack() {
        parts.values().forEach(part -> calls.session().untrack(part));
    }

    String requestId() {
        return requestId;
    }

    @Override
    public List<String> names() {
        return List.copyOf(parts.keySet());
    }

    @Override
    public long token(String name) {
        checkNotReleased();
        Long t = tokens.get(name);
        if (t == null) {
            throw new IllegalArgumentException("'" + name + "' is not one of " + tokens.keySet());
        }
        return t;
    }

    @Override
    public Map<String, Long> tokens() {
        checkNotReleased();
        return tokens;
    }

    @Override
    public boolean isValid() {
        return !released.get() && parts.values().stream().allMatch(HttpHold::isValid);
    }

    @Override
    public void checkValid() {
        checkNotReleased();
        parts.values().forEach(HttpHold::checkValid);
    }

    @Override
    public CompletionStage<Void> lost() {
        return lostFuture.minimalCompletionStage();
    }

    @Override
    public MultiHold onRevokeRequested(Consumer<? super MultiHold> listener) {
        Objects.requireNonNull(listener, "listener");
        revokeFuture.thenRun(() -> {
            if (!released.get() && !lostFuture.isDone()) {
                listener.accept(this);
            }
        });
        return this;
    }

    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        // Every part first: the RELEASED events of this release must not be taken for ends elsewhere.
        List<LockOwnershipLostException> lostBefore = new ArrayList<>();
        parts.values().forEach(part -> {
            String why = part.releasedWithRequest();
            if (why != null) {
                lostBefore.add(new LockOwnershipLostException(part.name(), part.tokenValue(), why + ", before the release"));
            }
        });
        Session session = calls.session();
        if (session.state() == SessionState.LOST) {
            HttpHold first = parts.values().iterator().next();
            throw new LockOwnershipLostException(first.name(), first.tokenValue(), "its session was lost before the release");
        }
        if (session.state() != SessionState.CLOSED) {
            // The names still held are released even when one was lost: a lost name does not free the others.
            try {
                calls.releaseRequest(requestId).get();
            } catch (InterruptedException e) {
                calls.releaseRequestInBackground(requestId);
                Thread.currentThread().interrupt();
            } catch (ExecutionException e) {
                Throwable cause = Failures.unwrap(e);
                if (Failures.sessionGone(cause)) {
                    session.markLost(cause.getMessage());
                    HttpHold first = parts.values().iterator().next();
                    throw new LockOwnershipLostException(first.name(), first.tokenValue(), "its session was lost before the release");
                }
                if (Failures.retryable(cause)) {
                    calls.releaseRequestInBackground(requestId);
                } else {
                    throw Failures.rethrow(cause);
                }
            }
        }
        if (!lostBefore.isEmpty()) {
            LockOwnershipLostException first = lostBefore.get(0);
            lostBefore.stream().skip(1).forEach(first::addSuppressed);
            throw first;
        }
    }

    @Override
    public void close() {
        release();
    }

    private void checkNotReleased() {
        if (released.get()) {
            throw new IllegalStateException("the multi-lock on " + tokens.keySet() + " (request " + requestId + ") was released");
        }
    }

    @Override
    public String toString() {
        return "MultiHold" + tokens + (released.get() ? " released" : lostFuture.isDone() ? " lost" : "");
    }
}
