package io.warden.client;

import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.TimeUnit;

/**
 * One keep-alive HTTP/1.1 connection of an {@link Http1Client} to one endpoint, and the thread that reads it.
 *
 * <p>The thread connects (TLS included), sends the connection's first request, then reads responses for as long as
 * the connection lives: an idle connection's thread waits in {@code read()}, so a connection the gateway closes is
 * noticed and dropped at once, not found dead by the next request. Later requests are written by the thread that
 * takes the connection from the pool ({@link #write}), without a hand-off; the reply completes the exchange's future on
 * this connection's thread, after the connection went back to the pool (so what runs on the reply may reuse it).
 *
 * <p>Timeouts: an exchange's deadline (connecting included) is enforced by its timer, which aborts the socket; a
 * connect is also bounded by {@link Http1Client#CONNECT_TIMEOUT}.
 *
 * <p>Concurrency: {@code current} and {@code idleSinceNanos} are guarded by the pool's lock ({@link Http1Client.Pool});
 * the streams are written by one thread at a time (the one that holds the connection for an exchange) and read only
 * by this connection's thread; {@code raw} is final and may be closed from any thread ({@link #abort}).
 */
final class Http1Connection {
    private static final System.Logger log = System.getLogger(Http1Connection.class.getName());

    private final Http1Client.Pool pool;
    private final Http1Wire.Endpoint endpoint;
    private final Socket raw = new Socket();
    private final Thread thread;
    private volatile OutputStream out;

    /** Guarded by the pool: the exchange in flight, or null while idle. */
    Http1Client.Exchange current;
    /** Guarded by the pool: when it last went idle (the client's ticker). */
    long idleSinceNanos;
    /** Guarded by the pool: once true, never used again. */
    boolean dead;

    Http1Connection(Http1Client.Pool pool, Http1Wire.Endpoint endpoint, Http1Client.Exchange first, String threadName) {
        this.pool = pool;
        this.endpoint = endpoint;
        this.current = first;
        this.thread = new Thread(() -> run(first), threadName);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /**
     * Sends {@code exchange}'s request on this connection, which the caller took from the pool for it. On failure the
     * connection is dropped and the exchange fails.
     */
    void write(Http1Client.Exchange exchange) {
        try {
            out.write(exchange.request());
            out.flush();
        } catch (IOException e) {
            pool.drop(this, e);
        }
    }

    /** Closes the socket at once (a timeout, the client's close): a read or connect in progress fails. */
    void abort() {
        try {
            raw.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private void run(Http1Client.Exchange first) {
        Http1Wire.Input in;
        try {
            in = connect(first);
        } catch (IOException | RuntimeException e) {
            abort();
            pool.drop(this, e);
            return;
        }
        write(first);
        while (true) {
            Http1Wire.Head head;
            byte[] body;
            try {
                head = Http1Wire.readHead(in);
                body = Http1Wire.readBody(in, head);
            } catch (IOException | RuntimeException e) {
                // Closed by the gateway while idle (EOFException, dropped quietly), broken, or aborted by a timeout.
                abort();
                if (!(e instanceof EOFException)) {
                    log.log(System.Logger.Level.TRACE, "connection to {0} failed: {1}", endpoint.hostHeader(), e.toString());
                }
                pool.drop(this, e);
                return;
            }
            if (!pool.answered(this, new Http1Client.Response(head.status(), body), head.keepAlive())) {
                abort();
                return;
            }
        }
    }

    private Http1Wire.Input connect(Http1Client.Exchange first) throws IOException {
        long remaining = first.deadlineNanos() - pool.client().ticker().getAsLong();
        Socket socket = pool.client().connect(raw, endpoint, Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining)));
        out = socket.getOutputStream();
        return new Http1Wire.Input(socket.getInputStream(), 8192);
    }

    @Override
    public String toString() {
        return "Http1Connection[" + endpoint.hostHeader() + ", " + thread.getName() + "]";
    }
}
