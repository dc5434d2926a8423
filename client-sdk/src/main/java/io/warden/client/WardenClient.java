package io.warden.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * A client of one Warden cell: one session, kept alive in the background, through which its locks are held.
 * <pre>{@code
 * try (WardenClient warden = WardenClient.builder()
 *         .endpoints("http://gw1:7070", "http://gw2:7070").clientId("billing-worker")
 *         .sessionTtl(Duration.ofSeconds(10)).build()) {
 *     FencedLock lock = warden.lock("payments/invoice-42");           // or .readWriteLock(name)
 *     try (Hold hold = lock.acquire(Duration.ofSeconds(5))) {         // Optional<Hold> tryAcquire()
 *         store.write(record, hold.token());                          // the token only ever grows
 *     }
 * }
 * }</pre>
 *
 * <p><b>Session.</b> {@link Builder#build()} opens the session at one of the gateways. Heartbeats then go every
 * {@code keepalive_interval_ms} the gateway named (a third of the TTL), over one WebSocket per session (falling back
 * to unary calls when no socket can be had; {@link Builder#webSocketKeepalive(boolean)} turns the socket off). The
 * client keeps a local deadline: the send time of the latest acknowledged heartbeat plus the TTL that acknowledgement
 * reported ({@code ttl_ms_remaining}: the session's TTL now, also when another caller changed it with a keepalive's
 * {@code ttl_ms} or a lease renew), minus a margin for clock drift (500 ppm of that TTL) and a fixed safety margin;
 * the heartbeat interval follows that TTL too (a third of it). Before the deadline the service cannot have expired
 * the session ({@link SessionState#CONNECTED}); after it, it may have ({@link SessionState#SUSPENDED}: stop writing,
 * holds are not {@link Hold#isValid() valid}). A TTL shortened elsewhere is believed from the next acknowledged
 * heartbeat on, at most one interval (of the TTL before the change) later. When a gateway says the session is gone,
 * the state is {@link SessionState#LOST} for good, {@link #sessionLost()} completes and so does every hold's
 * {@link Hold#lost()}. Curator's rule: after SUSPENDED you cannot be sure you hold a lock; after LOST you do not.
 *
 * <p><b>Holds ended elsewhere.</b> While the session has holds, the client watches its own session's events
 * ({@code GET /v1/watch?session_id=}, one stream, resumed without gaps on any gateway, closed 30 s after the last hold
 * is gone). When a hold's grant ends and not by this client's release (an admin's force-release, a release by token
 * from another process), the hold is lost: {@link Hold#isValid()} is false and {@link Hold#lost()} completes, a few
 * milliseconds after the release (4-7 ms median, 12-34 ms at most measured with gateway and client on one host). While
 * the stream is down (no gateway reachable) the hold learns of it when the stream resumes, from the gateway's history
 * or from a RESYNC that no longer lists it; likewise while every gateway it tries answers that its pool of session
 * watches is full (429: tried again, 1 s doubling to 30 s). Gateways older than this client refuse the watch; that is
 * logged once, and holds then learn only of the loss of the whole session.
 *
 * <p><b>Failover.</b> What to do with an answer is decided from Warden's problem {@code code}, not the HTTP status:
 * a call that fails to connect or times out, or that is answered with anything but one of Warden's final verdicts
 * (INVALID_ARGUMENT, SESSION_NOT_FOUND, RESOURCE_EXHAUSTED, PERMISSION_DENIED, ... — so 503 UNAVAILABLE, a 500, a 404
 * without Warden's code, a proxy's error page) moves on to the next endpoint and is retried with a bounded backoff;
 * the session stays the same (the gateway that gets its next heartbeat takes it over), so within the TTL no hold is
 * lost to a gateway's failure. {@link Builder#build()} tries the next endpoint after a final verdict too. Retries are
 * safe: every acquire carries one generated request_id for all its attempts, so it never queues twice, and asks for
 * what remains of the caller's wait; releases name their token.
 *
 * <p><b>Watches.</b> {@link #watch(WatchOptions, java.util.function.Consumer)} streams the {@link LockEvent}s of a lock
 * or a prefix, resuming by revision on another gateway after a failure, without gaps or repeats; see {@link Watch}.
 *
 * <p><b>Elections.</b> {@link #election(String)} is leader election on a lock: {@code campaign()}, {@code isLeader()},
 * the leader's fencing token, the current leader from the watch stream, listeners for elected and defeated; see
 * {@link Election}.
 *
 * <p><b>Closing</b> the client stops its watches and closes the session, which releases every hold and queued request of it at once.
 * Its own threads (a timer, an event thread, one per watch, one per campaigning election, one for the keepalive socket,
 * one per open connection of its calls) end with their connections, so creating and closing many clients leaves no threads behind.
 *
 * <p>Thread-safety: safe for use by any number of threads; one client per process and cell is the usual shape
 * (locks of one client share its session, and are not reentrant). Concurrency: {@code closed} goes false → true once;
 * {@code watches} is a concurrent set; everything else is final, and the session ({@link Session}), its calls and
 * transports are thread-safe.
 */
public final class WardenClient implements AutoCloseable {
    private static final System.Logger log = System.getLogger(WardenClient.class.getName());
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final String clientId;
    private final Duration requestTimeout;
    private final long maxWaitPerCallMs;
    private final ScheduledThreadPoolExecutor scheduler;
    private final ExecutorService events;
    private final HttpGateway gateway;
    private final KeepaliveTransport transport;
    private final Session session;
    private final LockCalls calls;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<Watch> watches = ConcurrentHashMap.newKeySet();

    private WardenClient(Builder b) {
        this.clientId = b.clientId;
        this.requestTimeout = b.requestTimeout;
        this.maxWaitPerCallMs = b.maxWaitPerCall.toMillis();
        int n = CLIENTS.incrementAndGet();
        this.scheduler = new ScheduledThreadPoolExecutor(1, daemon("warden-client-" + n + "-timer"));
        scheduler.setRemoveOnCancelPolicy(true);
        this.events = Executors.newSingleThreadExecutor(daemon("warden-client-" + n + "-events"));
        Duration connectTimeout = b.requestTimeout.compareTo(Duration.ofSeconds(2)) < 0 ? b.requestTimeout : Duration.ofSeconds(2);
        this.gateway = new HttpGateway(b.endpoints, scheduler, b.ticker, b.bearerToken, b.sslContext);
        this.transport = b.webSocketKeepalive == Boolean.FALSE
                ? new UnaryKeepaliveTransport(gateway)
                : new WebSocketKeepaliveTransport(gateway, new UnaryKeepaliveTransport(gateway), scheduler, b.ticker, connectTimeout);
        try {
            this.session = open(b);
        } catch (RuntimeException e) {
            gateway.close();
            scheduler.shutdownNow();
            events.shutdownNow();
            throw e;
        }
        this.calls = new LockCalls(gateway, session, scheduler, b.ticker, requestTimeout);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Opens the session at the first endpoint that will: a transport failure or an answer that is not one of Warden's
     * final verdicts is retried at the next endpoint within one request timeout ({@link HttpGateway#withRetries}); a
     * final verdict (e.g. RESOURCE_EXHAUSTED from a gateway that has all the sessions it may track) moves on to the
     * next endpoint too, until every endpoint has refused: another gateway may have room. The first refusal is thrown.
     */
    private Session open(Builder b) {
        var body = new Wire.OpenSession(b.clientId, b.sessionTtl.toMillis(), b.lockDelay == null ? null : b.lockDelay.toMillis());
        var call = new HttpGateway.Call<>("POST", "/v1/sessions", body, Wire.SessionOpened.class,
                "opening a session for client '" + b.clientId + "'");
        Wire.SessionOpened opened = null;
        long sent = 0;
        RuntimeException refused = null;
        for (int tried = 0; opened == null && tried < gateway.endpointCount(); tried++) {
            int index = gateway.currentIndex();
            sent = b.ticker.getAsLong();
            try {
                // A retry after a lost reply opens a second session; the first has no holds and expires after its TTL.
                opened = gateway.withRetries(call, b.requestTimeout, sent + b.requestTimeout.toNanos()).get().value();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WardenClientException("interrupted while opening a session", e);
            } catch (ExecutionException e) {
                Throwable cause = Failures.unwrap(e.getCause());
                if (Failures.retryable(cause)) {
                    throw Failures.rethrow(cause); // no endpoint answered within the request timeout
                }
                if (refused == null) {
                    refused = Failures.rethrow(cause);
                } else {
                    refused.addSuppressed(cause);
                }
                gateway.moveOn(index);
            }
        }
        if (opened == null) {
            throw refused;
        }
        long ttl = TimeUnit.MILLISECONDS.toNanos(opened.ttlMs());
        HoldWatches holdWatch = new HoldWatches(gateway, opened.sessionId(), scheduler, b.requestTimeout);
        Session s = new Session(opened.sessionId(), ttl, TimeUnit.MILLISECONDS.toNanos(opened.keepaliveIntervalMs()),
                b.safetyMargin.toNanos(), b.requestTimeout, transport, holdWatch, scheduler, events, b.ticker);
        s.start(sent);
        log.log(System.Logger.Level.DEBUG, "warden session {0} opened for client ''{1}'' (TTL {2} ms, heartbeat every {3} ms)",
                opened.sessionId(), b.clientId, opened.ttlMs(), opened.keepaliveIntervalMs());
        return s;
    }

    /** An EXCLUSIVE lock of {@code name} ({@code namespace/path}, docs/api.md, Conventions). */
    public FencedLock lock(String name) {
        return new HttpFencedLock(this, LockNames.check(name), LockMode.EXCLUSIVE);
    }

    /**
     * A counted semaphore of {@code name}: at most {@code permits} holders at once, granted in queue order, each with a
     * token of its own (a {@link Hold} of mode {@link LockMode#SEMAPHORE}). Every request on a name must agree while it
     * has holders or waiters: an acquire on a name held as a lock, or as a semaphore of other permits, fails with a
     * {@link WardenClientException} naming the name's kind (409 CONFLICT). As with a lock, a hold is a lease: pass its
     * token to the resource you guard.
     * <pre>{@code
     * FencedLock pool = warden.semaphore("reports/exporters", 4);
     * try (Hold hold = pool.acquire(Duration.ofSeconds(30))) {
     *     export(hold.token());
     * }
     * }</pre>
     *
     * @param permits 2 to 1024 (one permit is {@link #lock})
     */
    public FencedLock semaphore(String name, int permits) {
        if (permits < 2 || permits > 1024) {
            throw new IllegalArgumentException("permits must be between 2 and 1024, got " + permits);
        }
        return new HttpFencedLock(this, LockNames.check(name), LockMode.SEMAPHORE, permits);
    }

    /**
     * EXCLUSIVE locks of every one of {@code names} (2 to 64 distinct names), taken together: see {@link MultiLock}.
     */
    public MultiLock multiLock(String... names) {
        return multiLock(java.util.List.of(names), LockMode.EXCLUSIVE);
    }

    /** As {@link #multiLock(String...)}, in {@code mode} (EXCLUSIVE or SHARED) for every name. */
    public MultiLock multiLock(java.util.List<String> names, LockMode mode) {
        if (names.size() < 2 || names.size() > 64) {
            throw new IllegalArgumentException("a multi-lock takes 2 to 64 names, got " + names.size());
        }
        if (new java.util.HashSet<>(names).size() != names.size()) {
            throw new IllegalArgumentException("a multi-lock names each lock once, got " + names);
        }
        if (mode != LockMode.EXCLUSIVE && mode != LockMode.SHARED) {
            throw new IllegalArgumentException("a multi-lock is EXCLUSIVE or SHARED, got " + mode);
        }
        return new HttpMultiLock(this, names.stream().map(LockNames::check).toList(), mode);
    }

    /** SHARED (read) and EXCLUSIVE (write) locks of {@code name}. */
    public FencedReadWriteLock readWriteLock(String name) {
        String checked = LockNames.check(name);
        return new HttpReadWriteLock(checked, new HttpFencedLock(this, checked, LockMode.SHARED),
                new HttpFencedLock(this, checked, LockMode.EXCLUSIVE));
    }

    /**
     * A leader election on {@code name}: the candidates are the clients that {@link Election#campaign() campaign} on
     * it, and the leader is the holder of that name's EXCLUSIVE lock (so an election and a lock of one name are the same
     * thing: the candidates must not take that lock otherwise). See {@link Election}. Opens a watch of the name (for
     * {@link Election#leader()}); close the election to stop it.
     *
     * @throws WardenClientException when no gateway opened the election's watch within the request timeout
     * @throws IllegalStateException when the client was closed
     */
    public Election election(String name) {
        String checked = LockNames.check(name);
        calls(); // throws when closed
        return new Election(this, checked, TermRules.CONTRACT, Campaign.ROUND);
    }

    /**
     * Watches the events of the locks {@code options} names from now on; see {@link Watch} for the guarantees.
     * Returns once a gateway has opened the stream, so every change after that is seen.
     * <pre>{@code
     * try (Watch w = warden.watch(WatchOptions.prefix("payments"), e -> log.info("{} {} token {}", e.type(), e.name(), e.token()))) {
     *     ...
     * }
     * }</pre>
     *
     * @param listener called on the watch's own thread, one event at a time, in revision order
     * @throws WardenClientException when no gateway opened the stream within the request timeout, or one refused it
     */
    public Watch watch(WatchOptions options, Consumer<LockEvent> listener) {
        return startWatch(options, -1, listener);
    }

    /**
     * Watches the events after revision {@code sinceRevision} (a {@link LockEvent#revision()} seen before, e.g. by a
     * watch of an earlier run): the events after it, or, when a gateway no longer has that history, one
     * {@link LockEvent.Type#RESYNC} with the current state first. {@code 0} asks for the current state first.
     */
    public Watch watch(WatchOptions options, long sinceRevision, Consumer<LockEvent> listener) {
        if (sinceRevision < 0) {
            throw new IllegalArgumentException("sinceRevision must not be negative, got " + sinceRevision);
        }
        return startWatch(options, sinceRevision, listener);
    }

    private Watch startWatch(WatchOptions options, long since, Consumer<LockEvent> listener) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(listener, "listener");
        if (closed.get()) {
            throw new IllegalStateException("the Warden client of session " + session.id() + " is closed");
        }
        SseWatch[] self = new SseWatch[1];
        SseWatch w = new SseWatch(gateway, options, since, listener, scheduler, requestTimeout, () -> watches.remove(self[0]));
        self[0] = w;
        watches.add(w);
        w.start();
        return w;
    }

    /** The session's id (as shown in the gateways' listings). */
    public String sessionId() {
        return session.id();
    }

    public String clientId() {
        return clientId;
    }

    /** The TTL the service granted (the requested one, clamped to the cell's range). */
    public Duration sessionTtl() {
        return session.ttl();
    }

    /** The session's state now; see {@link SessionState}. */
    public SessionState state() {
        return session.state();
    }

    /** Tells {@code listener} of every later state change, in order, on the client's event thread. */
    public void addListener(SessionListener listener) {
        session.addListener(Objects.requireNonNull(listener, "listener"));
    }

    public void removeListener(SessionListener listener) {
        session.removeListener(listener);
    }

    /** Completes when the session is {@link SessionState#LOST} (not when this client closes it). */
    public CompletionStage<Void> sessionLost() {
        return session.lost().minimalCompletionStage();
    }

    /**
     * Closes the session at a gateway, which releases every hold and cancels every queued request of it, and stops
     * the client's threads. Running acquires fail with {@link SessionLostException}. Idempotent. If no gateway can be
     * reached, the session expires after its TTL, with the same effect.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            watches.forEach(Watch::close);
            List<HttpHold> live = session.markClosed();
            if (live != null) {
                live.forEach(HttpHold::releasedWithSession);
                deleteSession();
            }
        } finally {
            transport.close();
            gateway.close();
            scheduler.shutdownNow();
            events.shutdown();
        }
    }

    private void deleteSession() {
        var call = new HttpGateway.Call<>("DELETE", "/v1/sessions/" + session.id(), null, Wire.Ignored.class,
                "closing session " + session.id());
        try {
            gateway.withRetries(call, requestTimeout, calls.ticker().getAsLong() + requestTimeout.toNanos()).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            if (!Failures.sessionGone(e)) {
                log.log(System.Logger.Level.WARNING, "could not close warden session {0}; it expires after its TTL: {1}",
                        session.id(), Failures.unwrap(e).toString());
            }
        }
    }

    LockCalls calls() {
        if (closed.get()) {
            throw new IllegalStateException("the Warden client of session " + session.id() + " is closed");
        }
        return calls;
    }

    KeepaliveTransport keepaliveTransport() {
        return transport;
    }

    long maxWaitPerCallMs() {
        return maxWaitPerCallMs;
    }

    /** The endpoint the next call goes to (tests, diagnostics). */
    String currentEndpoint() {
        return gateway.currentEndpoint();
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public String toString() {
        return "WardenClient[" + clientId + ", session " + session.id() + ", " + state() + "]";
    }

    /**
     * Settings of a {@link WardenClient}. {@link #endpoints} and {@link #clientId} are required; each setting may be
     * given once.
     *
     * <p>Thread-safety: not thread-safe; use it from one thread, then {@link #build()}.
     */
    public static final class Builder {
        private List<URI> endpoints;
        private String clientId;
        private Duration sessionTtl;
        private Duration lockDelay;
        private Duration requestTimeout;
        private Duration safetyMargin;
        private Duration maxWaitPerCall;
        private LongSupplier ticker;
        private Boolean webSocketKeepalive;
        private String bearerToken;
        private javax.net.ssl.SSLContext sslContext;

        private Builder() {
        }

        /**
         * The bearer token of this client's principal, for a cell with an auth file (sent as
         * {@code Authorization: Bearer TOKEN} with every call, watch and keepalive socket). Without one the client
         * works only against a cell in open mode; a cell with an auth file answers 401, which {@link #build()} reports.
         */
        public Builder bearerToken(String token) {
            requireUnset("bearerToken", bearerToken == null ? null : "(a token)");
            Objects.requireNonNull(token, "bearerToken");
            if (token.isBlank() || token.length() > 4096 || token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
                throw new IllegalArgumentException("bearerToken must be 1-4096 printable ASCII characters without spaces");
            }
            this.bearerToken = token;
            return this;
        }

        /**
         * The TLS context for {@code https} endpoints: trust for the cell's CA and, for mTLS, this client's key and
         * certificate (whose CN names its principal). Default: the JVM's default context.
         */
        public Builder sslContext(javax.net.ssl.SSLContext context) {
            requireUnset("sslContext", sslContext);
            this.sslContext = Objects.requireNonNull(context, "sslContext");
            return this;
        }

        /** The cell's gateways, e.g. {@code "http://gw1:7070"}; calls fail over among them in this order. */
        public Builder endpoints(String... urls) {
            requireUnset("endpoints", endpoints);
            Objects.requireNonNull(urls, "endpoints");
            if (urls.length == 0) {
                throw new IllegalArgumentException("endpoints must name at least one gateway");
            }
            List<URI> list = new ArrayList<>();
            for (String url : urls) {
                Objects.requireNonNull(url, "endpoints contains null: " + Arrays.toString(urls));
                URI uri;
                try {
                    uri = URI.create(url.trim());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("endpoint '" + url + "' is not a URL: " + e.getMessage(), e);
                }
                if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                    throw new IllegalArgumentException("endpoint '" + url + "' must be an http(s) URL with a host, e.g. http://gw1:7070");
                }
                list.add(uri);
            }
            this.endpoints = List.copyOf(list);
            return this;
        }

        /** Who this client is, as shown in listings: non-empty, at most 128 characters. */
        public Builder clientId(String clientId) {
            requireUnset("clientId", this.clientId);
            Objects.requireNonNull(clientId, "clientId");
            if (clientId.isEmpty() || clientId.codePointCount(0, clientId.length()) > 128) {
                throw new IllegalArgumentException("clientId must be 1-128 characters, got '" + clientId + "'");
            }
            this.clientId = clientId;
            return this;
        }

        /** The session TTL to ask for (default 10 s); the cell clamps it to its range (default 2 s to 2 min). */
        public Builder sessionTtl(Duration ttl) {
            requireUnset("sessionTtl", sessionTtl);
            this.sessionTtl = positive("sessionTtl", ttl);
            return this;
        }

        /**
         * How long the holds of this session keep blocking others after the session <em>expires</em> (not after a
         * release or close), so stray writes of a paused holder can drain, as in Chubby. 0 (the default) to 60 s.
         */
        public Builder lockDelay(Duration delay) {
            requireUnset("lockDelay", lockDelay);
            Objects.requireNonNull(delay, "lockDelay");
            if (delay.isNegative() || delay.compareTo(Duration.ofSeconds(60)) > 0) {
                throw new IllegalArgumentException("lockDelay must be between 0 and 60 s, got " + delay);
            }
            this.lockDelay = delay;
            return this;
        }

        /**
         * How long one call may take beyond the wait it asks the gateway for, and how long a call is retried across
         * gateways before it fails (default 5 s).
         */
        public Builder requestTimeout(Duration timeout) {
            requireUnset("requestTimeout", requestTimeout);
            this.requestTimeout = positive("requestTimeout", timeout);
            return this;
        }

        /**
         * The fixed part of the margin taken off the TTL for the local deadline (default 100 ms), on top of 500 ppm
         * of the TTL for clock drift. Must be under half the TTL.
         */
        public Builder safetyMargin(Duration margin) {
            requireUnset("safetyMargin", safetyMargin);
            Objects.requireNonNull(margin, "safetyMargin");
            if (margin.isNegative()) {
                throw new IllegalArgumentException("safetyMargin must not be negative, got " + margin);
            }
            this.safetyMargin = margin;
            return this;
        }

        /** The monotonic clock, in nanoseconds (default {@link System#nanoTime()}); tests move it. */
        public Builder ticker(LongSupplier nanoTime) {
            requireUnset("ticker", ticker);
            this.ticker = Objects.requireNonNull(nanoTime, "ticker");
            return this;
        }

        /**
         * Whether heartbeats go over the WebSocket keepalive stream (default true: one socket per session, unary
         * {@code POST .../keepalive} as the fallback when a socket cannot be had), or only as unary calls (false:
         * e.g. behind a proxy that does not pass WebSockets).
         */
        public Builder webSocketKeepalive(boolean enabled) {
            requireUnset("webSocketKeepalive", webSocketKeepalive);
            this.webSocketKeepalive = enabled;
            return this;
        }

        /** The longest wait asked of the gateway in one call (the service's maximum, 5 min; tests lower it). */
        Builder maxWaitPerCall(Duration wait) {
            requireUnset("maxWaitPerCall", maxWaitPerCall);
            this.maxWaitPerCall = positive("maxWaitPerCall", wait);
            return this;
        }

        /**
         * Opens the session (at the first gateway that answers) and starts keeping it alive.
         *
         * @throws WardenClientException when no gateway opened a session within the request timeout
         */
        public WardenClient build() {
            if (endpoints == null) {
                throw new IllegalStateException("endpoints were not set");
            }
            if (clientId == null) {
                throw new IllegalStateException("clientId was not set");
            }
            sessionTtl = sessionTtl != null ? sessionTtl : Duration.ofSeconds(10);
            requestTimeout = requestTimeout != null ? requestTimeout : Duration.ofSeconds(5);
            safetyMargin = safetyMargin != null ? safetyMargin : Duration.ofMillis(100);
            maxWaitPerCall = maxWaitPerCall != null ? maxWaitPerCall : Duration.ofMillis(AcquireCall.SERVICE_MAX_WAIT_MS);
            ticker = ticker != null ? ticker : System::nanoTime;
            if (maxWaitPerCall.toMillis() > AcquireCall.SERVICE_MAX_WAIT_MS) {
                throw new IllegalStateException("maxWaitPerCall is at most " + AcquireCall.SERVICE_MAX_WAIT_MS + " ms, got " + maxWaitPerCall);
            }
            if (safetyMargin.multipliedBy(2).compareTo(sessionTtl) >= 0) {
                throw new IllegalStateException("safetyMargin (" + safetyMargin + ") must be under half the sessionTtl (" + sessionTtl + ")");
            }
            return new WardenClient(this);
        }

        private static void requireUnset(String what, Object current) {
            if (current != null) {
                throw new IllegalStateException(what + " was already set to " + current);
            }
        }

        private static Duration positive(String what, Duration d) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero() || d.toMillis() == 0) {
                throw new IllegalArgumentException(what + " must be at least 1 ms, got " + d);
            }
            return d;
        }
    }
}
