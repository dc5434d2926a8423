package io.warden.client;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpTimeoutException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * The HTTP/1.1 client of one {@link WardenClient}: its lock calls and keepalives ({@link #send}) over a pool of
 * keep-alive connections per endpoint, and its event streams ({@link #openStream}) on connections of their own.
 *
 * <p>Why not {@code java.net.http.HttpClient}: measured under the benchmark's load (BENCHMARKS.md, "The SDK's
 * transport"), each call through it passed its reply through three threads (the selector, a worker, then the
 * default executor of {@code CompletableFuture}, which on a machine with two cores or fewer starts a <em>new
 * thread for every reply</em>), and its machinery cost more CPU per call than the gateway's answer did. Here a call
 * is written by the thread that makes it, and its reply is read, decoded and handed on by the one thread of its
 * connection ({@link Http1Connection}): no executor, no thread per reply, and a connection the gateway closes is
 * noticed at once by that thread, not by the next call.
 *
 * <p>What it keeps of the JDK client's behaviour: a connection per call in flight (HTTP/1.1 has no multiplexing), a
 * timeout per call that counts from the send, connecting included ({@link java.net.http.HttpTimeoutException} when it
 * passes), a connect timeout of {@link #CONNECT_TIMEOUT}, TLS with the given {@link SSLContext} (or the JVM's
 * default) and host name verification, no redirects, and no retries: a failed call fails, and {@link HttpGateway}
 * decides what to do next. Idle connections are closed after {@link #IDLE_LIMIT}; {@link #close()} closes every
 * connection (their threads end), and calls in flight fail.
 *
 * <p>Concurrency: thread-safe. Each {@link Pool} guards its connections' state with its own lock; {@code closed} is
 * volatile, set once.
 */
final class Http1Client implements AutoCloseable {
    /** The longest a TCP connect may take; a call's own timeout cuts it shorter. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Connections idle this long are closed (the gateways keep them far longer). */
    static final Duration IDLE_LIMIT = Duration.ofSeconds(30);
    private static final AtomicInteger CONNECTIONS = new AtomicInteger();

    /** A response: its status and its whole body. */
    record Response(int status, byte[] body) {
    }

    private final SSLContext ssl;
    private final ScheduledExecutorService scheduler;
    private final Map<String, Pool> pools = new ConcurrentHashMap<>();
    private final ScheduledFuture<?> sweeper;
    private volatile boolean closed;

    /**
     * @param ssl       for {@code https} endpoints; null for the JVM's default context
     * @param scheduler runs the calls' timeouts and the idle sweep (the client's timer)
     */
    Http1Client(SSLContext ssl, ScheduledExecutorService scheduler) {
        this.ssl = ssl;
        this.scheduler = scheduler;
        long every = IDLE_LIMIT.toMillis() / 3;
        this.sweeper = scheduler.scheduleWithFixedDelay(this::sweep, every, every, TimeUnit.MILLISECONDS);
    }

    /** Real time for socket deadlines, as the scheduler's timers count it (the client's ticker may be a test's). */
    LongSupplier ticker() {
        return System::nanoTime;
    }

    /**
     * Sends one request to {@code base} (an endpoint URL without a trailing slash) and completes with its response, on
     * the connection's thread, or exceptionally with an {@link IOException} (an {@link HttpTimeoutException} after
     * {@code timeout}). {@code headers}: name, value, name, value, ...; {@code body} null for none.
     *
     * @throws IllegalArgumentException for a URL or header that cannot be sent
     */
    CompletableFuture<Response> send(String base, String method, String target, String[] headers, byte[] body,
                                     Duration timeout) {
        Pool pool = pools.computeIfAbsent(base, b -> new Pool(Http1Wire.Endpoint.of(b)));
        Exchange exchange = new Exchange(Http1Wire.request(pool.endpoint, method, target, headers, body),
                ticker().getAsLong() + timeout.toNanos(), base + target, timeout);
        pool.send(exchange);
        return exchange.result;
    }

    /** Opens a response to be read as a stream (an event stream) on a connection of its own; see {@link Stream}. */
    Stream stream(String base) {
        return new Stream(Http1Wire.Endpoint.of(base));
    }

    /** Connections open now, idle or busy (tests, diagnostics). */
    int connections() {
        int n = 0;
        for (Pool p : pools.values()) {
            synchronized (p) {
                n += p.all.size();
            }
        }
        return n;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sweeper.cancel(false);
        pools.values().forEach(Pool::close);
    }

    private void sweep() {
        long now = ticker().getAsLong();
        pools.values().forEach(p -> p.sweep(now));
    }

    /**
     * Connects {@code raw} to {@code endpoint} within {@code timeoutMs} (at most {@link #CONNECT_TIMEOUT}), with TLS for
     * an {@code https} endpoint (the handshake also within {@code timeoutMs}, host name verified). Returns the socket
     * to read and write; closing {@code raw} from another thread makes any step fail at once.
     */
    Socket connect(Socket raw, Http1Wire.Endpoint endpoint, long timeoutMs) throws IOException {
        int timeout = (int) Math.max(1, Math.min(CONNECT_TIMEOUT.toMillis(), timeoutMs));
        raw.setTcpNoDelay(true);
        raw.connect(new InetSocketAddress(endpoint.host(), endpoint.port()), timeout);
        if (!endpoint.tls()) {
            return raw;
        }
        SSLSocket tls = (SSLSocket) tls().getSocketFactory().createSocket(raw, endpoint.host(), endpoint.port(), true);
        SSLParameters parameters = tls.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS"); // the gateway's certificate must name its host
        parameters.setApplicationProtocols(new String[]{"http/1.1"});
        tls.setSSLParameters(parameters);
        raw.setSoTimeout((int) Math.max(1, timeoutMs));
        tls.startHandshake();
        raw.setSoTimeout(0);
        return tls;
    }

    private SSLContext tls() throws IOException {
        if (ssl != null) {
            return ssl;
        }
        try {
            return SSLContext.getDefault();
        } catch (NoSuchAlgorithmException e) {
            throw new IOException("no default TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * One request and its response. {@code result} is completed by whoever takes the exchange off its connection
     * ({@code Http1Connection.current}, under the pool's lock) first: the connection's thread with the response, a
     * failure of the connection, or the timer when the time is up.
     */
    static final class Exchange {
        private final byte[] request;
        private final long deadlineNanos;
        private final String what;
        private final Duration timeout;
        private final CompletableFuture<Response> result = new CompletableFuture<>();
        private volatile ScheduledFuture<?> timer;

        Exchange(byte[] request, long deadlineNanos, String what, Duration timeout) {
            this.request = request;
            this.deadlineNanos = deadlineNanos;
            this.what = what;
            this.timeout = timeout;
        }

        byte[] request() {
            return request;
        }

        long deadlineNanos() {
            return deadlineNanos;
        }

        void complete(Response response) {
            if (result.complete(response)) {
                cancelTimer();
            }
        }

        void fail(Throwable cause) {
            IOException failure = cause instanceof IOException io ? io : new IOException(what + ": " + cause, cause);
            if (result.completeExceptionally(failure)) {
                cancelTimer();
            }
        }

        private void cancelTimer() {
            ScheduledFuture<?> t = timer;
            if (t != null) {
                t.cancel(false);
            }
        }
    }

    /**
     * The connections to one endpoint: the idle ones (most recently used last, taken first, so a few stay warm) and
     * every open one. Concurrency: all state here and the pool-guarded fields of its {@link Http1Connection}s are
     * guarded by this pool's monitor; sockets are written and closed outside it.
     */
    final class Pool {
        final Http1Wire.Endpoint endpoint;
        private final ArrayDeque<Http1Connection> idle = new ArrayDeque<>();
        private final Set<Http1Connection> all = new HashSet<>();
        private boolean poolClosed;

        Pool(Http1Wire.Endpoint endpoint) {
            this.endpoint = endpoint;
        }

        Http1Client client() {
            return Http1Client.this;
        }

        void send(Exchange exchange) {
            Http1Connection c;
            boolean reused;
            synchronized (this) {
                if (poolClosed || closed) {
                    exchange.fail(new IOException(exchange.what + ": the client is closed"));
                    return;
                }
                c = idle.pollLast();
                while (c != null && c.dead) {
                    c = idle.pollLast(); // never left there, but a dead connection must not be reused
                }
                reused = c != null;
                if (reused) {
                    c.current = exchange;
                } else {
                    c = new Http1Connection(this, endpoint, exchange, "warden-http-" + CONNECTIONS.incrementAndGet());
                    all.add(c);
                }
            }
            if (!armTimer(c, exchange)) {
                return;
            }
            if (reused) {
                c.write(exchange);
            } else {
                c.start();
            }
        }

        /** False when the client is closing (the exchange then failed, and the connection went). */
        private boolean armTimer(Http1Connection c, Exchange exchange) {
            try {
                exchange.timer = scheduler.schedule(() -> timedOut(c, exchange),
                        Math.max(0, exchange.deadlineNanos - ticker().getAsLong()), TimeUnit.NANOSECONDS);
                return true;
            } catch (RejectedExecutionException closing) {
                drop(c, new IOException(exchange.what + ": the client is closed"));
                return false;
            }
        }

        /**
         * The connection's thread read a response. Puts the connection back (or drops it), then completes the
         * exchange. False when the connection is done for.
         */
        boolean answered(Http1Connection c, Response response, boolean keepAlive) {
            Exchange exchange;
            boolean keep;
            synchronized (this) {
                exchange = c.current;
                c.current = null;
                keep = keepAlive && exchange != null && !c.dead && !poolClosed;
                if (keep) {
                    c.idleSinceNanos = ticker().getAsLong();
                    idle.addLast(c);
                } else {
                    c.dead = true; // closed after this response, or a response nobody asked for
                    idle.remove(c);
                    all.remove(c);
                }
            }
            if (exchange != null) {
                exchange.complete(response);
            }
            return keep;
        }

        /** The connection failed or was closed: it goes, and the exchange on it (if any) fails with {@code cause}. */
        void drop(Http1Connection c, Throwable cause) {
            Exchange exchange;
            synchronized (this) {
                c.dead = true;
                idle.remove(c);
                all.remove(c);
                exchange = c.current;
                c.current = null;
            }
            c.abort();
            if (exchange != null) {
                exchange.fail(cause);
            }
        }

        /**
         * {@code exchange}'s time is up: unless it was answered meanwhile, its connection goes (whatever it is doing:
         * connecting, sending, waiting) and it fails with an {@link HttpTimeoutException}.
         */
        private void timedOut(Http1Connection c, Exchange exchange) {
            synchronized (this) {
                if (c.current != exchange) {
                    return; // answered, or failed with its connection
                }
                c.current = null;
                c.dead = true;
                all.remove(c);
            }
            c.abort();
            exchange.fail(new HttpTimeoutException(exchange.what + ": no answer within " + exchange.timeout.toMillis() + " ms"));
        }

        void sweep(long now) {
            List<Http1Connection> stale = new ArrayList<>();
            synchronized (this) {
                while (!idle.isEmpty() && now - idle.peekFirst().idleSinceNanos > IDLE_LIMIT.toNanos()) {
                    Http1Connection c = idle.pollFirst();
                    c.dead = true;
                    all.remove(c);
                    stale.add(c);
                }
            }
            stale.forEach(Http1Connection::abort);
        }

        void close() {
            List<Http1Connection> open;
            synchronized (this) {
                poolClosed = true;
                open = new ArrayList<>(all);
                idle.clear();
            }
            IOException closing = new IOException("the client is closed");
            open.forEach(c -> drop(c, closing));
        }
    }

    /**
     * A response read as a stream by the thread that opens it, on a connection of its own: {@link #open} connects,
     * sends the request and reads the head; {@link #body()} is the body as it arrives. {@link #close()} may be called
     * from any thread at any time and makes a connect or read in progress fail.
     *
     * <p>Concurrency: {@link #open} and the body belong to one thread; {@link #close()} to any.
     */
    final class Stream implements Closeable {
        private final Http1Wire.Endpoint endpoint;
        private final Socket raw = new Socket();
        private InputStream body;

        Stream(Http1Wire.Endpoint endpoint) {
            this.endpoint = endpoint;
        }

        /**
         * Sends a bodyless request and waits up to {@code timeout} (connecting included) for the head of its response.
         *
         * @return the status
         */
        int open(String method, String target, String[] headers, Duration timeout) throws IOException {
            if (closed) {
                throw new IOException("the client is closed");
            }
            byte[] request = Http1Wire.request(endpoint, method, target, headers, null);
            long deadline = ticker().getAsLong() + timeout.toNanos();
            Socket socket = connect(raw, endpoint, timeout.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(request);
            out.flush();
            Http1Wire.Input in = new Http1Wire.Input(socket.getInputStream(), 8192);
            raw.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - ticker().getAsLong())));
            Http1Wire.Head head;
            try {
                head = Http1Wire.readHead(in);
            } catch (java.net.SocketTimeoutException e) {
                throw new HttpTimeoutException("no answer within " + timeout.toMillis() + " ms");
            }
            raw.setSoTimeout(0); // the stream is idle between events; the reader watches it
            body = Http1Wire.body(in, head);
            return head.status();
        }

        /** The body, after {@link #open}; closing it closes the connection. */
        InputStream body() {
            InputStream b = body;
            return new java.io.FilterInputStream(b) {
                @Override
                public void close() {
                    Stream.this.close();
                }
            };
        }

        @Override
        public void close() {
            try {
                raw.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
