package io.warden.service.support;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy between ZooKeeper clients and one server that injects real network faults:
 * <ul>
 *   <li>{@link #cutAfterNext(int)} / {@link #cutAfterNext(int, int)}: the next request(s) of that kind (say
 *   {@code multi}) reach the server, and the connection is closed before the reply comes back — the "applied, but the
 *   reply was lost" case. The client reconnects through the proxy (same ZooKeeper session) and Curator sends the
 *   request again.</li>
 *   <li>{@link #blackhole()}: every byte in either direction is dropped from now on, and the sockets stay open — a
 *   one-sided partition as a switch or a firewall makes it: the client learns of it only from its own timeouts.</li>
 *   <li>{@link #partition()}: every connection is closed and new ones are refused — the client sees the loss at once
 *   (Curator: SUSPENDED).</li>
 *   <li>{@link #delayRequests(long)}: requests reach the server late, while its replies and notifications flow.</li>
 *   <li>{@link #heal()} ends a black hole or a partition (black-holed connections stay broken; the client reconnects).</li>
 * </ul>
 *
 * <p>It reads the ZooKeeper framing only: each packet is a 4-byte length and a body; the first packet of a connection
 * is the connect request, every later request body starts with an xid and an op code.
 *
 * <p>Concurrency: two daemon threads per connection copy bytes; {@link #armed}, {@link #cutsLeft}, {@link #cut},
 * {@link #blackholed}, {@link #partitioned} and {@link #requestDelayMillis} are the shared state, each atomic or volatile.
 */
public final class ZkCutProxy implements AutoCloseable {
    /** ZooKeeper op codes this proxy can cut after. */
    public static final int CREATE2 = 15;
    public static final int MULTI = 14;
    public static final int EXISTS = 3;
    public static final int GET_DATA = 4;
    public static final int SET_DATA = 5;
    /** {@code getChildren} with a stat, as Curator sends it in the background. */
    public static final int GET_CHILDREN2 = 12;
    /** A read-only {@code multi}: the gateway's batched lock reads. */
    public static final int MULTI_READ = 22;
    /**
     * Not an op code: arms a cut after the next lock read of either kind the gateway sends ({@link #GET_CHILDREN2} alone,
     * or in a batch, {@link #MULTI_READ}).
     */
    public static final int LOCK_READS = -1;
    private final ServerSocket listener;
    private final int serverPort;
    /** The op code to cut after, or 0 when not armed. */
    private final AtomicInteger armed = new AtomicInteger();
    /** How many more requests of the armed kind to cut. */
    private final AtomicInteger cutsLeft = new AtomicInteger();
    /** Only requests whose body contains this text (say a session id in the path) are cut; empty: any. */
    private volatile String cutOnly = "";
    private final AtomicBoolean cut = new AtomicBoolean();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile long requestDelayMillis;
    /** The op code of the next request to hold, or 0; only one whose body contains {@link #holdOnly}. */
    private final AtomicInteger holdArmed = new AtomicInteger();
    private volatile String holdOnly = "";
    private volatile java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(0);
    private final java.util.concurrent.atomic.AtomicBoolean holding = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean blackholed;
    private volatile boolean partitioned;
    private volatile boolean closed;

    public ZkCutProxy(int serverPort) throws IOException {
        this.serverPort = serverPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "zk-cut-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    public String connectString() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** The next request with this op code reaches the server, and its connection is closed before the reply. */
    public void cutAfterNext(int opCode) {
        cutAfterNext(opCode, 1);
    }

    /** Likewise for the next {@code times} requests with this op code (each on the connection made after the last cut). */
    public void cutAfterNext(int opCode, int times) {
        cutAfterNext(opCode, times, "");
    }

    /** Likewise, only for requests whose body contains {@code pathPart} (a request carries its path as text). */
    public void cutAfterNext(int opCode, int times, String pathPart) {
        cut.set(false);
        cutOnly = pathPart;
        cutsLeft.set(times);
        armed.set(opCode);
    }

    /** How many armed cuts are still to come. */
    public int cutsLeft() {
        return cutsLeft.get();
    }

    /** Whether an armed cut has happened. */
    public boolean hasCut() {
        return cut.get();
    }

    /** From now on each request is held this long before it goes on to the server (0: none); replies are not delayed. */
    public void delayRequests(long millis) {
        requestDelayMillis = millis;
    }

    /**
     * The next request with this op code whose body contains {@code pathPart} is held before it reaches the server, and
     * every request after it on its connection with it (ZooKeeper's order is kept), until {@link #releaseHeld()}.
     */
    public void holdNext(int opCode, String pathPart) {
        held = new java.util.concurrent.CountDownLatch(1);
        holdOnly = pathPart;
        holdArmed.set(opCode);
    }

    /** Whether a request is being held ({@link #holdNext}). */
    public boolean holding() {
        return holding.get();
    }

    /** Lets the held request, and those after it, go on to the server. */
    public void releaseHeld() {
        held.countDown();
    }

    /** Drops every byte in both directions from now on; sockets stay open (connections are accepted, then starved). */
    public void blackhole() {
        blackholed = true;
    }

    /** Closes every connection and refuses new ones until {@link #heal()}. */
    public void partition() {
        partitioned = true;
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    /** Ends a black hole or a partition: new connections work again. */
    public void heal() {
        if (blackholed) {
            // A black-holed connection lost bytes: it cannot carry on. Its client has given up on it or soon will.
            for (Socket s : sockets) {
                closeQuietly(s);
            }
            sockets.clear();
        }
        blackholed = false;
        partitioned = false;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                if (partitioned) {
                    closeQuietly(client);
                    continue;
                }
                Socket server = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                AtomicBoolean replyCut = new AtomicBoolean(); // this connection's: set before a cut request goes up
                start("zk-cut-proxy-up", () -> upstream(client, server, replyCut));
                start("zk-cut-proxy-down", () -> downstream(server, client, replyCut));
            } catch (IOException e) {
                if (!closed) {
                    continue;
                }
                return;
            }
        }
    }

    private static void start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    /**
     * Client to server, packet by packet, watching for the request to cut after. A request to cut is known before it
     * is sent on: {@code replyCut} is set first, so that no byte the server sends after it reaches the client (a
     * read is answered within microseconds, before the client's side could be closed).
     */
    private void upstream(Socket client, Socket server, AtomicBoolean replyCut) {
        try (client; server) {
            DataInputStream in = new DataInputStream(client.getInputStream());
            OutputStream out = server.getOutputStream();
            boolean first = true;
            while (true) {
                int length = in.readInt();
                byte[] body = in.readNBytes(length);
                if (body.length < length) {
                    return;
                }
                if (blackholed) {
                    continue; // dropped on the floor
                }
                int opCode = !first && length >= 8 ? readInt(body, 4) : 0;
                if (opCode != 0 && holdArmed.get() == opCode
                        && new String(body, StandardCharsets.ISO_8859_1).contains(holdOnly)
                        && holdArmed.compareAndSet(opCode, 0)) {
                    holding.set(true);
                    held.await(); // until releaseHeld: synchronisation with the test, not a delay
                    holding.set(false);
                }
                long delay = requestDelayMillis;
                if (delay > 0) {
                    Thread.sleep(delay); // injected latency, not synchronisation
                }
                int op = !first && length >= 8 ? readInt(body, 4) : 0;
                first = false;
                int armedOp = armed.get();
                boolean kind = armedOp == op || armedOp == LOCK_READS && (op == GET_CHILDREN2 || op == MULTI_READ);
                boolean cutThis = op != 0 && kind && new String(body, StandardCharsets.ISO_8859_1).contains(cutOnly)
                        && cutsLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
                if (cutThis) {
                    replyCut.set(true);
                }
                byte[] packet = new byte[4 + length]; // one write: no Nagle wait between the length and the body
                packet[0] = (byte) (length >>> 24);
                packet[1] = (byte) (length >>> 16);
                packet[2] = (byte) (length >>> 8);
                packet[3] = (byte) length;
                System.arraycopy(body, 0, packet, 4, length);
                out.write(packet);
                out.flush();
                if (cutThis) {
                    armed.compareAndSet(armedOp, cutsLeft.get() > 0 ? armedOp : 0);
                    // Drop the client's side at once (nothing the server sends from now on goes down: replyCut);
                    // keep the server's side open a moment so the server reads and applies the request rather than
                    // seeing a closed connection.
                    client.close();
                    cut.set(true);
                    Thread.sleep(300);
                    return;
                }
            }
        } catch (IOException | InterruptedException e) {
            // connection over
        }
    }

    /** Server to client, as is unless black-holed or the connection's reply is being cut. */
    private void downstream(Socket server, Socket client, AtomicBoolean replyCut) {
        try (server; client) {
            InputStream in = server.getInputStream();
            OutputStream out = client.getOutputStream();
            byte[] buf = new byte[16 * 1024];
            for (int n; (n = in.read(buf)) >= 0; ) {
                if (!blackholed && !replyCut.get()) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // connection over
        }
    }

    private static int readInt(byte[] b, int at) {
        return (b[at] & 0xff) << 24 | (b[at + 1] & 0xff) << 16 | (b[at + 2] & 0xff) << 8 | b[at + 3] & 0xff;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
